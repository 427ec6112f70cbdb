// Logical graph → execution plan, channels and partitioners: re-exports only.
export { buildExecutionPlan, type ExecutionPlanOptions } from './build-execution-plan.js';
export {
  allChannels,
  channelCountOfEdge,
  channelKey,
  channelsOfEdge,
  inputChannelsOf,
  outputChannelsOf,
  outputChannelsOfEdge,
} from './channels.js';
export { describePlan, type PlanSummary, planSummary } from './describe-plan.js';
export type * from './execution-plan.js';
export {
  ALL_CONSUMERS,
  BroadcastPartitioner,
  createPartitioner,
  createPartitionerFor,
  ForwardPartitioner,
  HashPartitioner,
  type Partitioner,
  RebalancePartitioner,
} from './partitioner.js';
export type * from './stream-graph.js';
export * from './task-id.js';
export { describeOperator, type ValidatedStreamGraph, validateStreamGraph } from './validate-stream-graph.js';
