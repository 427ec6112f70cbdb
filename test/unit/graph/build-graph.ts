// Builds a StreamGraph / ExecutionPlan from a build function, the way the runtime does.
import { buildStreamGraph, defineJob, type JobBuildFunction } from '../../../src/api/define-job.js';
import { buildExecutionPlan, type ExecutionPlanOptions } from '../../../src/graph/build-execution-plan.js';
import type { ExecutionPlan } from '../../../src/graph/execution-plan.js';
import type { StreamGraph } from '../../../src/graph/stream-graph.js';

export function graphOf(build: JobBuildFunction, args: Record<string, string> = {}): StreamGraph {
  return buildStreamGraph(defineJob(build), args);
}

export function planOf(
  build: JobBuildFunction,
  options: ExecutionPlanOptions = { parallelism: 2 },
): ExecutionPlan {
  return buildExecutionPlan(graphOf(build), options);
}

/** Vertex names in id order: the quickest readable assertion on chaining. */
export function vertexNames(plan: ExecutionPlan): string[] {
  return plan.vertices.map((v) => v.name);
}
