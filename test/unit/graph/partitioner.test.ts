import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyNotSerializableError } from '../../../src/errors.js';
import type { JobEdge } from '../../../src/graph/execution-plan.js';
import {
  ALL_CONSUMERS,
  createPartitioner,
  createPartitionerFor,
  type HashPartitioner,
} from '../../../src/graph/partitioner.js';
import type { Partitioning } from '../../../src/graph/stream-graph.js';
import {
  assignToKeyGroup,
  keyGroupRangeContains,
  keyGroupRangeFor,
  UPPER_BOUND_MAX_PARALLELISM,
} from '../../../src/state/key-groups.js';
import { planOf } from './build-graph.js';
import { fakeSink, fakeSource } from './fake-connectors.js';

function edge(partitioning: Partitioning, keySelector?: (r: any) => unknown): JobEdge {
  return {
    edgeId: 7,
    sourceVertexId: 0,
    sourceNodeId: 0,
    targetVertexId: 1,
    targetNodeId: 1,
    inputIndex: 0,
    partitioning,
    ...(keySelector ? { keySelector } : {}),
  };
}

describe('forward', () => {
  it('always selects the producer subtask', () => {
    const p = createPartitioner(edge('forward'), 2, 4, 128);
    expect([p.select('a'), p.select(1), p.select(undefined)]).toEqual([2, 2, 2]);
  });

  it('rejects a producer without a same-index consumer', () => {
    expect(() => createPartitioner(edge('forward'), 3, 3, 128)).toThrow(
      'forward edge 7: producer subtask 3 has no consumer (parallelism 3)',
    );
  });
});

describe('rebalance', () => {
  it('goes round-robin from a subtask-dependent offset', () => {
    const p0 = createPartitioner(edge('rebalance'), 0, 3, 128);
    const p4 = createPartitioner(edge('rebalance'), 4, 3, 128);
    expect(Array.from({ length: 7 }, () => p0.select(null))).toEqual([0, 1, 2, 0, 1, 2, 0]);
    expect(Array.from({ length: 4 }, () => p4.select(null))).toEqual([1, 2, 0, 1]);
  });

  it('distributes evenly: counts differ by at most one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 17 }), fc.nat(40), fc.nat(500), (consumers, producer, n) => {
        const p = createPartitioner(edge('rebalance'), producer, consumers, 128);
        const counts = new Array<number>(consumers).fill(0);
        for (let i = 0; i < n; i++) counts[p.select(i)]++;
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('broadcast', () => {
  it('selects all consumers', () => {
    const p = createPartitioner(edge('broadcast'), 0, 5, 128);
    expect(p.select({ any: 'thing' })).toBe(ALL_CONSUMERS);
    expect(ALL_CONSUMERS).toBe(-1);
  });
});

describe('hash', () => {
  const byKey = (r: { key: unknown }) => r.key;

  it('sends every key to the subtask whose key-group range holds its group, and records the group (property)', () => {
    const key = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.boolean(),
      fc.bigInt(),
      fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }),
      fc.dictionary(fc.string(), fc.integer(), { maxKeys: 3 }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: UPPER_BOUND_MAX_PARALLELISM }),
        fc.integer({ min: 1, max: 300 }),
        fc.array(key, { minLength: 1, maxLength: 20 }),
        (maxParallelism, p, keys) => {
          const parallelism = Math.min(p, maxParallelism);
          const partitioner = createPartitioner(edge('hash', byKey), 0, parallelism, maxParallelism);
          for (const k of keys) {
            const target = partitioner.select({ key: k });
            expect(Number.isInteger(target) && target >= 0 && target < parallelism).toBe(true);
            const group = assignToKeyGroup(k, maxParallelism);
            // The record writer sends this group with the record (the keyed consumer skips its hash).
            expect((partitioner as HashPartitioner).lastKeyGroup).toBe(group);
            expect(keyGroupRangeContains(keyGroupRangeFor(maxParallelism, parallelism, target), group)).toBe(
              true,
            );
          }
        },
      ),
    );
  });

  it('is the same for every producer subtask and for equal composite keys', () => {
    const a = createPartitioner(edge('hash', byKey), 0, 7, 128);
    const b = createPartitioner(edge('hash', byKey), 5, 7, 128);
    for (let i = 0; i < 200; i++) {
      expect(a.select({ key: `k${i}` })).toBe(b.select({ key: `k${i}` }));
    }
    expect(a.select({ key: { x: 1, y: [2, 'z'] } })).toBe(b.select({ key: { y: [2, 'z'], x: 1 } }));
  });

  it('hashes string keys as assignToKeyGroup does, with one consumer and with several', () => {
    // String keys take an inline path in select (no type switch): it must agree with the general one.
    for (const parallelism of [1, 3]) {
      const p = createPartitioner(edge('hash', byKey), 0, parallelism, 128) as HashPartitioner;
      for (const key of ['', 'k1', '\u0000s', 'ü', '\ud83d\ude00', 'a'.repeat(300)]) {
        const target = p.select({ key });
        expect(p.lastKeyGroup).toBe(assignToKeyGroup(key, 128));
        expect(keyGroupRangeContains(keyGroupRangeFor(128, parallelism, target), p.lastKeyGroup)).toBe(true);
      }
    }
  });

  it('spreads keys over all consumers', () => {
    const p = createPartitioner(edge('hash', byKey), 0, 4, 128);
    const hit = new Set<number>();
    for (let i = 0; i < 1000; i++) hit.add(p.select({ key: i }));
    expect([...hit].sort()).toEqual([0, 1, 2, 3]);
  });

  it('names the keyed operator when a key cannot be serialized', () => {
    const p = createPartitioner(edge('hash', byKey), 0, 2, 128, '"sessions"');
    let caught: unknown;
    try {
      p.select({ key: () => 1 });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(KeyNotSerializableError);
    expect((caught as KeyNotSerializableError).operator).toBe('"sessions"');
    expect((caught as Error).message).toMatch(
      /^key selector of "sessions" returned a key that cannot be serialized/,
    );
  });

  it('createPartitionerFor names the consuming operator from the plan', () => {
    const plan = planOf((env) => {
      env
        .fromSource(fakeSource<{ key: unknown }>())
        .keyBy((r) => r.key)
        .process(() => {})
        .name('sessions')
        .sinkTo(fakeSink());
    });
    const p = createPartitionerFor(plan, 0, 1);
    expect(p.partitioning).toBe('hash');
    expect(() => p.select({ key: Symbol('s') })).toThrow(/^key selector of "sessions" returned a key/);
    expect(() => createPartitionerFor(plan, 0, 2)).toThrow(RangeError);
    expect(() => createPartitionerFor(plan, 1, 0)).toThrow('plan has no edge 1');
  });

  it('requires a key selector and a valid maxParallelism', () => {
    expect(() => createPartitioner(edge('hash'), 0, 2, 128)).toThrow(
      'hash edge 7 (into the consumer of edge 7) has no key selector',
    );
    expect(() => createPartitioner(edge('hash', byKey), 0, 2, 0)).toThrow(RangeError);
    expect(() => createPartitioner(edge('rebalance'), 0, 0, 128)).toThrow(
      'consumer parallelism must be an integer >= 1, got 0',
    );
  });
});
