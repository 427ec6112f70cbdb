// The embedded log: re-exports only.

export { Log, openLog } from './log.js';
export type { RetentionPolicy } from './log-layout.js';
export type {
  AppendOptions,
  Durability,
  LogKey,
  LogOptions,
  TailOptions,
  TopicOptions,
  TransactionalAppendOptions,
} from './log-options.js';
export type {
  AppendResult,
  LogPosition,
  LogRecord,
  OffsetRange,
  Topic,
  TransactionalAppendResult,
} from './topic.js';
export type { TopicTail } from './topic-tail.js';
