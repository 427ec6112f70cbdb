// mapAsync / flatMapAsync options are checked when the job is built: defaults, and a typed
// InvalidOptionError naming the call and the option for every bad value or unknown key.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ASYNC_CAPACITY,
  DEFAULT_ASYNC_TIMEOUT_MS,
  resolveAsyncOptions,
} from '../../../src/api/async-options.js';
import { buildStreamGraph, defineJob } from '../../../src/api/define-job.js';
import { sinks, sources } from '../../../src/connectors/index.js';
import { InvalidOptionError } from '../../../src/errors.js';

describe('resolveAsyncOptions', () => {
  it('applies the defaults', () => {
    expect(resolveAsyncOptions(undefined, 'mapAsync()')).toEqual({
      capacity: DEFAULT_ASYNC_CAPACITY,
      timeoutMs: DEFAULT_ASYNC_TIMEOUT_MS,
      ordered: true,
      attempts: 1,
      backoffMs: 0,
    });
    expect(
      resolveAsyncOptions(
        { capacity: 3, timeoutMs: Infinity, ordered: false, retry: { attempts: 4, backoffMs: 5 } },
        'x',
      ),
    ).toEqual({ capacity: 3, timeoutMs: Infinity, ordered: false, attempts: 4, backoffMs: 5 });
  });

  it.each([
    [{ capacity: 0 }, /mapAsync\(\) capacity: must be an integer >= 1, got 0/],
    [{ capacity: 2.5 }, /capacity/],
    [{ timeoutMs: 0 }, /timeoutMs: must be a number of ms > 0/],
    [{ timeoutMs: Number.NaN }, /timeoutMs/],
    [{ ordered: 'yes' }, /ordered: must be true or false/],
    [{ retry: { attempts: 0 } }, /retry.attempts: must be an integer >= 1/],
    [{ retry: { attempts: 2, backoffMs: -1 } }, /retry.backoffMs/],
    [{ capasity: 3 }, /unknown option \(did you mean "capacity"\?\)/],
    [{ retry: { attempt: 2 } }, /did you mean "attempts"/],
  ])('%j is an InvalidOptionError', (options, message) => {
    expect(() => resolveAsyncOptions(options as never, 'mapAsync()')).toThrow(InvalidOptionError);
    expect(() => resolveAsyncOptions(options as never, 'mapAsync()')).toThrow(message);
  });
});

describe('mapAsync in the graph', () => {
  it('a keyed mapAsync is a keyed operator with a hash input; a plain one chains forward', () => {
    const graph = buildStreamGraph(
      defineJob((env) => {
        const s = env.fromSource(sources.sequence({ from: 0, to: 10 }), 'n');
        s.mapAsync(async (x: number) => x + 1, { capacity: 2 }).sinkTo(sinks.discard());
        s.keyBy((x) => x % 2)
          .flatMapAsync(async (x: number, ctx) => [x, ctx.key])
          .sinkTo(sinks.discard());
      }),
    );
    const asyncNodes = graph.nodes.filter((n) => n.spec.kind === 'async');
    expect(asyncNodes.map((n) => n.name)).toEqual(['map-async', 'flat-map-async']);
    expect(asyncNodes[0].inputs[0].partitioning).toBe('forward');
    expect(asyncNodes[1].inputs[0].partitioning).toBe('hash');
  });

  it('a bad option fails the build', () => {
    expect(() =>
      buildStreamGraph(
        defineJob((env) => {
          env
            .fromSource(sources.sequence({ from: 0, to: 10 }), 'n')
            .mapAsync(async (x: number) => x, { capacity: -1 })
            .sinkTo(sinks.discard());
        }),
      ),
    ).toThrow(InvalidOptionError);
  });
});
