// Public entry point of weir: re-exports only.

export * from './api/index.js';
export type { BufferDebloatOptions } from './channels/buffer-debloater.js';
export type { CheckpointBarrier, CheckpointType, Frame } from './channels/frame.js';
export type { DeadLetter } from './connectors/dead-letter.js';
export type { FilePendingPart, FileSinkOptions } from './connectors/file-sink.js';
export type { FileSourceOptions, FileSplitState } from './connectors/file-source.js';
export type { TextFormat } from './connectors/formats/text-format.js';
export {
  type LogSinkOptions,
  type LogSourceOptions,
  type PostgresSourceOptions,
  sinks,
  sources,
} from './connectors/index.js';
/** The Nexmark generator as pure functions (event number → event), for reference implementations and tests. */
export * as nexmark from './connectors/nexmark/index.js';
export {
  type CollectedEvent,
  type CompletedCheckpointStats,
  type DeployedEvent,
  type FailedCheckpointStats,
  JobClient,
  type JobEventListener,
  type JobEvents,
  type JobMetrics,
  type JobResult,
  type OperatorSummary,
  type RestartingEvent,
  runJob,
  type Savepoint,
  startJob,
} from './coordinator/job-client.js';
export {
  type FreshStartEvent,
  JobWarning,
  type JobWarningDetails,
  type RestoredEvent,
} from './coordinator/job-events.js';
export type {
  ChannelOptions,
  CheckpointingOptions,
  JobOptions,
  RestartStrategyOptions,
} from './coordinator/job-options.js';
export type { DashboardOptions } from './dashboard/dashboard-options.js';
export { JobMonitor, type JobSnapshot } from './dashboard/job-monitor.js';
export { prometheusText } from './dashboard/prometheus-text.js';
export * from './errors.js';
export { describePlan, type PlanSummary, planSummary } from './graph/describe-plan.js';
export type { ExecutionPlan, JobEdge, JobVertex } from './graph/execution-plan.js';
export * from './log/index.js';
export type { InjectedFault } from './protocol/injected-fault.js';
export * from './verify/index.js';
