import { describe, expect, it } from 'vitest';
import { assignSubtasks, flowName, placementOf, tasksOf } from '../../../src/cluster/assignment.js';
import { InvalidOptionError } from '../../../src/errors.js';
import { allChannels } from '../../../src/graph/channels.js';
import type { ExecutionPlan } from '../../../src/graph/execution-plan.js';
import { seededRandom } from '../../../src/verify/failure-schedule.js';

/** A plan of vertices in a chain, each edge forward (equal parallelism) or hash. */
function planOf(parallelisms: readonly number[], forward: readonly boolean[]): ExecutionPlan {
  const vertices = parallelisms.map((p, i) => ({
    vertexId: i,
    name: `v${i}`,
    parallelism: p,
    maxParallelism: 128,
    operators: [],
    inputEdges: i === 0 ? [] : [i - 1],
    outputEdges: i === parallelisms.length - 1 ? [] : [i],
  }));
  const edges = parallelisms.slice(1).map((_, i) => ({
    edgeId: i,
    sourceVertexId: i,
    sourceNodeId: i,
    targetVertexId: i + 1,
    targetNodeId: i + 1,
    inputIndex: 0 as const,
    partitioning: forward[i] ? ('forward' as const) : ('hash' as const),
  }));
  return { maxParallelism: 128, vertices, edges } as unknown as ExecutionPlan;
}

describe('assignSubtasks', () => {
  it('splits each vertex into contiguous subtask ranges over the sorted members', () => {
    const a = assignSubtasks(planOf([4, 4], [false]), ['b', 'a'], 'r1');
    expect(a.members).toEqual(['a', 'b']);
    expect(a.tasks).toEqual({
      '0/0': 'a',
      '0/1': 'a',
      '0/2': 'b',
      '0/3': 'b',
      '1/0': 'a',
      '1/1': 'a',
      '1/2': 'b',
      '1/3': 'b',
    });
    expect(assignSubtasks(planOf([1, 3], [false]), ['x', 'y', 'z'], 'r').tasks).toEqual({
      '0/0': 'x',
      '1/0': 'x',
      '1/1': 'y',
      '1/2': 'z',
    });
  });

  it('refuses no members, a duplicate member and a run id that is not a NATS token', () => {
    expect(() => assignSubtasks(planOf([2], []), [], 'r')).toThrow(InvalidOptionError);
    expect(() => assignSubtasks(planOf([2], []), ['a', 'a'], 'r')).toThrow(/twice/);
    expect(() => assignSubtasks(planOf([2], []), ['a'], 'r.1')).toThrow(/NATS token/);
  });

  it('seeded variants: every subtask on exactly one member, contiguous and balanced per vertex; forward edges local; flows unique', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rand = seededRandom(seed);
      const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
      const m = int(1, 6);
      const members = Array.from({ length: m }, (_, i) => `m${(i * 7919 + seed) % 1000}-${i}`);
      const n = int(1, 5);
      const ps: number[] = [int(1, 12)];
      const forward: boolean[] = [];
      for (let i = 1; i < n; i++) {
        const f = rand() < 0.4;
        forward.push(f);
        ps.push(f ? ps[i - 1] : int(1, 12));
      }
      const plan = planOf(ps, forward);
      const shuffled = [...members].sort(() => rand() - 0.5);
      const a = assignSubtasks(plan, shuffled, `run${seed}`);
      // The same whatever order the members were listed in.
      expect(assignSubtasks(plan, members, `run${seed}`)).toEqual(a);
      for (const v of plan.vertices) {
        const owners = Array.from({ length: v.parallelism }, (_, s) => a.tasks[`${v.vertexId}/${s}`]);
        for (const o of owners) expect(members).toContain(o);
        // Contiguous: an owner's subtasks form one run (so its key groups form one range).
        const runs = owners.filter((o, i) => i === 0 || owners[i - 1] !== o);
        expect(new Set(runs).size).toBe(runs.length);
        const counts = members.map((id) => owners.filter((o) => o === id).length);
        const used = counts.filter((c) => c > 0);
        expect(Math.max(...used) - Math.min(...used)).toBeLessThanOrEqual(1);
        expect(used.length).toBe(Math.min(m, v.parallelism));
      }
      // Every task belongs to exactly one member's share.
      const shares = members.flatMap((id) => tasksOf(plan, a, id));
      expect(shares.sort()).toEqual(Object.keys(a.tasks).sort());
      // Each channel: a ring on one member, or a remote flow seen by exactly its two ends.
      const flows = new Set<string>();
      for (const ch of allChannels(plan)) {
        const edge = plan.edges[ch.edgeId];
        const views = members.map((id) =>
          placementOf(a, id).channel(ch, edge.targetVertexId, edge.sourceVertexId),
        );
        const rings = views.filter((v) => v.kind === 'ring').length;
        const remote = views.filter((v) => v.kind === 'remote');
        if (edge.partitioning === 'forward') expect(rings).toBe(1);
        expect(rings === 1 ? remote.length === 0 : remote.length === 2).toBe(true);
        if (remote.length === 2) {
          const names = remote.map((v) => (v.kind === 'remote' ? v.flow : ''));
          expect(names[0]).toBe(names[1]);
          expect(flows.has(names[0])).toBe(false);
          flows.add(names[0]);
          expect(names[0]).toMatch(/^[A-Za-z0-9_-]+$/);
        }
      }
    }
  });

  it('flow names differ between runs', () => {
    const ch = { edgeId: 1, producerSubtask: 2, consumerSubtask: 3 };
    expect(flowName('c-5-0', ch)).not.toBe(flowName('c-5-1', ch));
  });
});
