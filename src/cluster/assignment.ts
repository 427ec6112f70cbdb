/**
 * Which instance runs which subtask of a cluster job, and what each channel becomes: a pure
 * function of (execution plan, live members, run id), so every instance derives the same
 * deployment from the coordinator's published assignment (`cluster-job.ts`).
 *
 * Rule: members are sorted by id; subtask `s` of a vertex of parallelism `P` goes to member
 * `floor(s × M / P)` of the `M` members. So
 * - every member gets a contiguous range of each vertex's subtasks, hence (keyed operators) a
 *   contiguous range of key groups — subtask `s` owns key-group range `s` of the plan — and
 *   (sources) the splits of those subtasks;
 * - per vertex the members' shares differ by at most one subtask;
 * - subtask `s` of two vertices of equal parallelism lands on the same member, so a forward edge
 *   never crosses members and a hash edge between equal parallelisms keeps 1/M of its channels local.
 * A vertex of parallelism `P < M` runs on `P` of the members; the others get none of it.
 *
 * A channel with both ends on one member is a ring there; a channel across members is one remote
 * flow named `<run>-<edge>-<producer>-<consumer>`: `run` is unique per deployment attempt, so a
 * flow name is never reused (a receiver restarted under an old name is not supported,
 * remote-edge-sequence.ts).
 */

import { InvalidOptionError } from '../errors.js';
import type { ChannelEndpoints, ExecutionPlan } from '../graph/execution-plan.js';

/** What the coordinator publishes: enough for every member to deploy its share. */
export interface ClusterAssignment {
  /** One NATS token, unique per deployment attempt: prefixes flow names and the run's subjects. */
  readonly run: string;
  /** The members the job runs on, sorted. */
  readonly members: readonly string[];
  /** `vertexId/subtask` → instance id, for every subtask of the plan. */
  readonly tasks: Readonly<Record<string, string>>;
}

const TOKEN = /^[A-Za-z0-9_-]+$/;

/** The planned shape an assignment depends on (a plan, or its vertices' parallelism alone). */
export interface PlanShape {
  readonly vertices: readonly { readonly vertexId: number; readonly parallelism: number }[];
}

export function assignSubtasks(plan: PlanShape, members: readonly string[], run: string): ClusterAssignment {
  if (members.length === 0) throw new InvalidOptionError('cluster', 'no live member to assign subtasks to');
  if (new Set(members).size !== members.length)
    throw new InvalidOptionError('cluster', `a member is listed twice: ${members.join(', ')}`);
  if (!TOKEN.test(run))
    throw new InvalidOptionError('cluster', `run id ${JSON.stringify(run)} is not a NATS token`);
  const sorted = [...members].sort();
  const m = sorted.length;
  const tasks: Record<string, string> = {};
  for (const v of plan.vertices) {
    for (let s = 0; s < v.parallelism; s++)
      tasks[`${v.vertexId}/${s}`] = sorted[Math.floor((s * m) / v.parallelism)];
  }
  return { run, members: sorted, tasks };
}

/** The flow name of a channel across members in run `run`. */
export function flowName(run: string, ch: ChannelEndpoints): string {
  return `${run}-${ch.edgeId}-${ch.producerSubtask}-${ch.consumerSubtask}`;
}

/** One member's view of an assignment: which tasks are its own, and each channel's kind. */
export interface Placement {
  readonly instanceId: string;
  /** Task keys (`vertexId/subtask`) this member runs. */
  isLocal(taskKey: string): boolean;
  /**
   * `ring` when both ends run here, `remote` with the flow name when one does, `none` when
   * neither (the channel is another member's business).
   */
  channel(ch: ChannelEndpoints, targetVertexId: number, sourceVertexId: number): ChannelPlacement;
}

export type ChannelPlacement =
  | { readonly kind: 'ring' }
  | { readonly kind: 'remote'; readonly flow: string }
  | { readonly kind: 'none' };

export function placementOf(assignment: ClusterAssignment, instanceId: string): Placement {
  const here = (key: string): boolean => assignment.tasks[key] === instanceId;
  return {
    instanceId,
    isLocal: here,
    channel(ch, targetVertexId, sourceVertexId) {
      const producer = here(`${sourceVertexId}/${ch.producerSubtask}`);
      const consumer = here(`${targetVertexId}/${ch.consumerSubtask}`);
      if (producer && consumer) return { kind: 'ring' };
      if (producer || consumer) return { kind: 'remote', flow: flowName(assignment.run, ch) };
      return { kind: 'none' };
    },
  };
}

/** Task keys of `instanceId` in `assignment`, in plan order. */
export function tasksOf(plan: ExecutionPlan, assignment: ClusterAssignment, instanceId: string): string[] {
  const out: string[] = [];
  for (const v of plan.vertices)
    for (let s = 0; s < v.parallelism; s++)
      if (assignment.tasks[`${v.vertexId}/${s}`] === instanceId) out.push(`${v.vertexId}/${s}`);
  return out;
}
