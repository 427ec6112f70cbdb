/** `sinks.discard()`: drops every record (benchmarks). */

import type { Sink } from '../api/source.js';

export function discard<T = unknown>(): Sink<T> {
  return {
    type: 'discard',
    name: 'discard',
    createWriter: () => ({ write() {} }),
  };
}
