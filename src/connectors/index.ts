// Built-in connectors, exposed as the `sources` and `sinks` namespaces.

export type { JetStreamSinkOptions, JetStreamTransaction } from './jetstream-sink.js';
export type { JetStreamFormat, JetStreamRecord, JetStreamSourceOptions } from './jetstream-source.js';
export type { LogSinkOptions } from './log-sink.js';
export type { LogSourceOptions } from './log-source.js';
export type { PostgresSinkOptions, PostgresTransaction } from './postgres-sink.js';
export type { PostgresSourceOptions, PostgresSplit } from './postgres-source.js';
export type { RedisStreamSinkOptions } from './redis-stream-sink.js';
export type { RedisStreamSourceOptions } from './redis-stream-source.js';
export * as sinks from './sinks.js';
export * as sources from './sources.js';
