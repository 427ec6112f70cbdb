// The DataStream API: re-exports only.

export type {
  CommitContext,
  CommitRetryOptions,
  Committer,
  CommittingSink,
  CommittingSinkOptions,
  CommittingSinkWriter,
  SinkWriterContext,
} from './committing-sink.js';
export { ConnectedStreams } from './connected-streams.js';
export { DataStream } from './data-stream.js';
export { DataStreamSink } from './data-stream-sink.js';
export {
  buildStreamGraph,
  defineJob,
  isJobDefinition,
  JOB_DEFINITION_BRAND,
  type JobBuildFunction,
  type JobDefinition,
  loadJobDefinition,
} from './define-job.js';
export type * from './functions.js';
export {
  IntervalJoin,
  IntervalJoined,
  type ProcessJoinContext,
  type ProcessJoinFunction,
} from './interval-join.js';
export { JoinedStreams, JoinWhereEqual, WindowedJoin } from './joined-streams.js';
export { KeyedStream } from './keyed-stream.js';
export { consoleLogger, type LogFn, type Logger, type LogLevel } from './logger.js';
export { OutputTag } from './output-tag.js';
export type * from './source.js';
export { StreamEnvironment } from './stream-environment.js';
export type { WatermarkStrategy } from './watermarks.js';
export { type ProcessWindowFunction, type WindowContext, WindowedStream } from './windowed-stream.js';
export {
  type SessionOptions,
  type SlidingOptions,
  type TimeWindow,
  type TumblingOptions,
  type WindowAssigner,
  type WindowTime,
  windows,
} from './windows.js';
