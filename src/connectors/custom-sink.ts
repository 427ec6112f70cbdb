/**
 * `sinks.custom(options)`: a user-defined two-phase-commit sink (see `src/api/committing-sink.ts`
 * for the contract and `README.md`, "Writing your own exactly-once sink", for an example).
 * Checks the options up front; the runtime drives the result with `CommittingSinkOperator`.
 */

import type { CommitRetryOptions, CommittingSink, CommittingSinkOptions } from '../api/committing-sink.js';
import { InvalidOptionError, SinkProtocolError } from '../errors.js';

const DEFAULT_RETRY: Readonly<Required<CommitRetryOptions>> = {
  retries: 3,
  backoffMs: 100,
  maxBackoffMs: 5000,
};

export function custom<T, C = unknown>(options: CommittingSinkOptions<T, C>): CommittingSink<T, C> {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('sinks.custom(options)', 'expected an object with createWriter and commit');
  }
  const name = options.name ?? 'custom';
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidOptionError('sinks.custom.name', `must be a non-empty string, got ${String(name)}`);
  }
  if (typeof options.createWriter !== 'function') {
    throw new InvalidOptionError('sinks.custom.createWriter', 'must be a function (ctx) => writer');
  }
  const { commit, createCommitter } = options;
  if ((commit === undefined) === (createCommitter === undefined)) {
    throw new InvalidOptionError(
      'sinks.custom.commit',
      'give exactly one of commit(committable, ctx) and createCommitter(ctx)',
    );
  }
  if (commit !== undefined && typeof commit !== 'function') {
    throw new InvalidOptionError(
      'sinks.custom.commit',
      'must be a function (committable, ctx) => Promise<void>',
    );
  }
  if (createCommitter !== undefined && typeof createCommitter !== 'function') {
    throw new InvalidOptionError('sinks.custom.createCommitter', 'must be a function (ctx) => committer');
  }
  const retry = options.commitRetry ?? {};
  if (typeof retry !== 'object' || retry === null) {
    throw new InvalidOptionError(
      'sinks.custom.commitRetry',
      'must be an object { retries?, backoffMs?, maxBackoffMs? }',
    );
  }
  const commitRetry = { ...DEFAULT_RETRY };
  for (const key of ['retries', 'backoffMs', 'maxBackoffMs'] as const) {
    const v = retry[key];
    if (v === undefined) continue;
    if (!(Number.isSafeInteger(v) && v >= 0)) {
      throw new InvalidOptionError(
        `sinks.custom.commitRetry.${key}`,
        `must be an integer >= 0, got ${String(v)}`,
      );
    }
    commitRetry[key] = v;
  }
  if (options.readCommitted !== undefined && typeof options.readCommitted !== 'function') {
    throw new InvalidOptionError('sinks.custom.readCommitted', 'must be a function () => records');
  }
  return {
    kind: 'committing',
    type: 'custom',
    name,
    ...(options.readCommitted ? { readCommitted: options.readCommitted } : {}),
    createWriter: (ctx) => {
      // The runtime's committing-sink operator always passes sinkName; a legacy writer wrapper
      // (`{ createWriter(ctx) { const w = inner.createWriter(ctx); ... } }`) does not, and would
      // silently never commit: refuse it loudly instead.
      if (typeof (ctx as Partial<typeof ctx>)?.sinkName !== 'string') {
        throw new SinkProtocolError(
          name,
          'createWriter() was called outside the committing-sink runtime (a legacy SinkWriter wrapper around a committing sink?); wrap it as a committing sink instead: { ...sink, createWriter(ctx), createCommitter(ctx) }',
        );
      }
      return options.createWriter(ctx);
    },
    createCommitter: createCommitter
      ? (ctx) => {
          const committer = createCommitter(ctx);
          if (typeof committer?.commit !== 'function') {
            throw new InvalidOptionError(
              'sinks.custom.createCommitter',
              'must return an object with commit()',
            );
          }
          return committer;
        }
      : () => ({ commit: commit! }),
    commitRetry,
  };
}
