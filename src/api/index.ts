// The DataStream API: re-exports only.
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
export { KeyedStream } from './keyed-stream.js';
export type * from './source.js';
export { StreamEnvironment } from './stream-environment.js';
