import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../../src/errors.js';
import { planOf } from './build-graph.js';
import { fakeSink, fakeSource } from './fake-connectors.js';

describe('event time in the plan', () => {
  it('marks edges downstream of an assigner as timestamped, and only those', () => {
    const plan = planOf((env) => {
      const src = env.fromSource(fakeSource<number>(), 'numbers');
      src
        .rebalance()
        .map((n) => n)
        .sinkTo(fakeSink('plain'));
      src
        .assignTimestampsAndWatermarks({ timestamp: (n) => n, maxOutOfOrderness: 10, idleTimeout: 500 })
        .keyBy((n) => n % 2)
        .process(() => {})
        .rebalance()
        .sinkTo(fakeSink('timed'));
    });
    const stamped = plan.edges.map((e) => [e.sourceNodeId, e.targetNodeId, e.timestamped === true]);
    expect(stamped).toEqual([
      [0, 1, false],
      [3, 4, true],
      [4, 5, true],
    ]);
    const keyed = plan.vertices.find((v) => v.name.startsWith('keyed-process'))!;
    expect(keyed.inputIdleTimeout).toBe(500);
    const plain = plan.vertices.find((v) => v.name.startsWith('map'))!;
    expect(plain.inputIdleTimeout).toBeUndefined();
  });

  it('an assigner without idleTimeout clears the idleness of an upstream one', () => {
    const plan = planOf((env) => {
      env
        .fromSource(fakeSource<number>(), 'numbers')
        .assignTimestampsAndWatermarks({ timestamp: (n) => n, maxOutOfOrderness: 0, idleTimeout: 5 })
        .rebalance()
        .assignTimestampsAndWatermarks({ timestamp: (n) => n, maxOutOfOrderness: 0 })
        .rebalance()
        .map((n) => n)
        .sinkTo(fakeSink('out'));
    });
    expect(plan.vertices.map((v) => v.inputIdleTimeout)).toEqual([undefined, 5, undefined]);
  });

  it('rejects bad strategies up front', () => {
    const build = (s: unknown) => () =>
      planOf((env) => {
        env
          .fromSource(fakeSource<number>(), 'numbers')
          .assignTimestampsAndWatermarks(s as never)
          .sinkTo(fakeSink('out'));
      });
    // A TypeError inside the build function arrives wrapped in a JobModuleError (its cause).
    expect(build({ maxOutOfOrderness: 1 })).toThrow(
      expect.objectContaining({ cause: expect.any(TypeError) }),
    );
    expect(build({ timestamp: () => 0, maxOutOfOrderness: -1 })).toThrow(InvalidOptionError);
    expect(build({ timestamp: () => 0, maxOutOfOrderness: 1, idleTimeout: Number.NaN })).toThrow(
      /idleTimeout/,
    );
    expect(build({ timestamp: () => 0, maxOutOfOrderness: 1, everyRecords: 0 })).toThrow(/everyRecords/);
  });
});
