import { describe, expect, it } from 'vitest';
import { describePlan, planSummary } from '../../../src/graph/describe-plan.js';
import { planOf } from './build-graph.js';
import { fakeSink, fakeSource } from './fake-connectors.js';

const plan = planOf(
  (env) => {
    env
      .fromSource(fakeSource<number>('sequence'), 'numbers')
      .map((n) => ({ key: n % 10, value: n }))
      .keyBy((r) => r.key)
      .process(() => {})
      .uid('summer')
      .sinkTo(fakeSink('sums'));
  },
  { parallelism: 2, maxParallelism: 64 },
);

describe('planSummary', () => {
  it('is plain JSON describing vertices, chained operators and edges', () => {
    const summary = planSummary(plan);
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary);
    expect(summary).toEqual({
      maxParallelism: 64,
      vertices: [
        {
          id: 0,
          name: 'numbers -> map',
          parallelism: 2,
          operators: [
            { id: 0, name: 'numbers', uid: 'source:numbers:0', kind: 'source', chainedTo: [1] },
            { id: 1, name: 'map', uid: 'map:map:0', kind: 'map', chainedTo: [] },
          ],
        },
        {
          id: 1,
          name: 'keyed-process -> sink: sums',
          parallelism: 2,
          operators: [
            { id: 2, name: 'keyed-process', uid: 'summer', kind: 'keyed-process', chainedTo: [3] },
            { id: 3, name: 'sink: sums', uid: 'sink:sink: sums:0', kind: 'sink', chainedTo: [] },
          ],
        },
      ],
      edges: [
        {
          id: 0,
          from: 0,
          to: 1,
          fromOperator: 'map',
          toOperator: 'keyed-process',
          inputIndex: 0,
          partitioning: 'hash',
          channels: 4,
        },
      ],
      channels: 4,
    });
  });
});

describe('describePlan', () => {
  it('lists tasks with parallelism and chained operators, then edges with partitioning', () => {
    expect(describePlan(plan)).toBe(
      [
        'plan: 2 tasks, 1 network edge, 4 channels, maxParallelism 64',
        'task 0 "numbers -> map" x2',
        '  numbers (source, uid source:numbers:0)',
        '  map (map, uid map:map:0) <- numbers',
        'task 1 "keyed-process -> sink: sums" x2',
        '  keyed-process (keyed-process, uid summer)',
        '  sink: sums (sink, uid sink:sink: sums:0) <- keyed-process',
        'edge 0: task 0 (map) => task 1 (keyed-process), hash, 4 channels',
      ].join('\n'),
    );
  });

  it('marks the second input of a two-input operator', () => {
    const connected = planOf((env) => {
      const a = env.fromSource(fakeSource(), 'a');
      a.connect(env.fromSource(fakeSource(), 'b').broadcast())
        .process({ processElement1() {}, processElement2() {} })
        .sinkTo(fakeSink());
    });
    expect(describePlan(connected)).toContain(
      'edge 1: task 1 (b) => task 2 (co-process), input 2, broadcast, 4 channels',
    );
  });
});
