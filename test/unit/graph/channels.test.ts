import { describe, expect, it } from 'vitest';
import {
  allChannels,
  channelCountOfEdge,
  channelKey,
  channelsOfEdge,
  inputChannelsOf,
  outputChannelsOf,
  outputChannelsOfEdge,
} from '../../../src/graph/channels.js';
import type { ChannelEndpoints, ExecutionPlan } from '../../../src/graph/execution-plan.js';
import { planOf } from './build-graph.js';
import { fakeSink, fakeSource } from './fake-connectors.js';

const triple = (c: ChannelEndpoints) => [c.edgeId, c.producerSubtask, c.consumerSubtask];

/**
 * a (p=2) ──hash──────> keyed-process -> sink: k   (p=3)
 *         ──forward───> merged -> sink: m          (p=2, a union consumer)
 * b (p=2) ──broadcast─┘
 */
function samplePlan(): ExecutionPlan {
  return planOf(
    (env) => {
      const a = env.fromSource(fakeSource<number>(), 'a').setParallelism(2);
      const b = env.fromSource(fakeSource<number>(), 'b').setParallelism(2);
      a.keyBy((n) => n)
        .process(() => {})
        .sinkTo(fakeSink('k'));
      a.union(b.broadcast())
        .map((n) => n)
        .name('merged')
        .setParallelism(2)
        .sinkTo(fakeSink('m'))
        .setParallelism(2);
    },
    { parallelism: 3 },
  );
}

describe('channelsOfEdge', () => {
  it('forward: one channel per subtask, i -> i', () => {
    const plan = samplePlan();
    const forward = plan.edges.find((e) => e.partitioning === 'forward')!;
    expect(channelsOfEdge(plan, forward).map(triple)).toEqual([
      [forward.edgeId, 0, 0],
      [forward.edgeId, 1, 1],
    ]);
    expect(channelCountOfEdge(plan, forward)).toBe(2);
  });

  it('other partitionings: all pairs, producer-major', () => {
    const plan = samplePlan();
    const hash = plan.edges.find((e) => e.partitioning === 'hash')!;
    expect(channelsOfEdge(plan, hash).map((c) => [c.producerSubtask, c.consumerSubtask])).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    expect(channelCountOfEdge(plan, hash)).toBe(6);
    const broadcast = plan.edges.find((e) => e.partitioning === 'broadcast')!;
    expect(channelsOfEdge(plan, broadcast)).toHaveLength(4);
  });

  it('a parallelism change (rebalance) connects all pairs: 1 x 4 = 4', () => {
    const plan = planOf(
      (env) => {
        env
          .fromSource(fakeSource())
          .setParallelism(1)
          .map((x) => x)
          .sinkTo(fakeSink());
      },
      { parallelism: 4 },
    );
    expect(channelsOfEdge(plan, plan.edges[0]).map((c) => c.consumerSubtask)).toEqual([0, 1, 2, 3]);
  });
});

describe('inputChannelsOf / outputChannelsOf', () => {
  it('orders inputs by the vertex input edges, then producer subtask', () => {
    const plan = samplePlan();
    const merged = plan.vertices.find((v) => v.name === 'merged -> sink: m')!;
    const [fromA, fromB] = merged.inputEdges;
    expect(inputChannelsOf(plan, merged.vertexId, 1).map(triple)).toEqual([
      [fromA, 1, 1], // forward: only the same-index producer
      [fromB, 0, 1], // broadcast: every producer
      [fromB, 1, 1],
    ]);
  });

  it('orders outputs by the vertex output edges, then consumer subtask', () => {
    const plan = samplePlan();
    const a = plan.vertices.find((v) => v.name === 'a')!;
    expect(a.outputEdges).toHaveLength(2);
    const [hash, forward] = a.outputEdges;
    expect(plan.edges[hash].partitioning).toBe('hash');
    expect(outputChannelsOf(plan, a.vertexId, 1).map(triple)).toEqual([
      [hash, 1, 0],
      [hash, 1, 1],
      [hash, 1, 2],
      [forward, 1, 1],
    ]);
    expect(outputChannelsOfEdge(plan, plan.edges[hash], 0).map((c) => c.consumerSubtask)).toEqual([0, 1, 2]);
  });

  it('every channel has exactly one writer and one reader', () => {
    const plan = samplePlan();
    const all = allChannels(plan).map(channelKey);
    const written: string[] = [];
    const read: string[] = [];
    for (const v of plan.vertices) {
      for (let s = 0; s < v.parallelism; s++) {
        written.push(...outputChannelsOf(plan, v.vertexId, s).map(channelKey));
        read.push(...inputChannelsOf(plan, v.vertexId, s).map(channelKey));
      }
    }
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(6 + 2 + 4);
    expect([...written].sort()).toEqual([...all].sort());
    expect([...read].sort()).toEqual([...all].sort());
  });

  it('rejects out-of-range subtasks and vertices', () => {
    const plan = samplePlan();
    expect(() => inputChannelsOf(plan, 0, 2)).toThrow(RangeError);
    expect(() => outputChannelsOf(plan, 0, -1)).toThrow(
      'subtask -1 out of range for vertex "a" of parallelism 2',
    );
    expect(() => outputChannelsOf(plan, 99, 0)).toThrow('plan has no vertex 99');
  });

  it('rejects a hand-built forward edge between different parallelisms', () => {
    const plan = samplePlan();
    const forward = plan.edges.find((e) => e.partitioning === 'forward')!;
    const bad: ExecutionPlan = {
      ...plan,
      vertices: plan.vertices.map((v) =>
        v.vertexId === forward.targetVertexId ? { ...v, parallelism: 3 } : v,
      ),
    };
    expect(() => channelsOfEdge(bad, forward)).toThrow(
      `edge ${forward.edgeId} is 'forward' between parallelisms 2 and 3; forward needs equal parallelism`,
    );
  });
});

describe('channelKey', () => {
  it('is readable and distinct per endpoint triple', () => {
    expect(channelKey({ edgeId: 3, producerSubtask: 1, consumerSubtask: 0 })).toBe('e3:1->0');
    expect(channelKey({ edgeId: 1, producerSubtask: 11, consumerSubtask: 0 })).not.toBe(
      channelKey({ edgeId: 11, producerSubtask: 1, consumerSubtask: 0 }),
    );
  });
});
