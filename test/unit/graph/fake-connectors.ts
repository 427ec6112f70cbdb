// Inert sources and sinks for graph tests: graph building and planning never call them.
import type { Sink, Source } from '../../../src/api/source.js';

export function fakeSource<T = number>(type = 'fake-source'): Source<T> {
  return {
    type,
    bounded: true,
    createReader() {
      throw new Error('graph tests do not run sources');
    },
  };
}

export function fakeSink<T = unknown>(name = 'out'): Sink<T> {
  return {
    type: 'fake-sink',
    name,
    createWriter() {
      throw new Error('graph tests do not run sinks');
    },
  };
}
