/**
 * The catalogue of weir's typed errors. Every error carries a stable `code` and, where it
 * wraps another failure, a `cause`.
 *
 * Every failure is one of three kinds, and the code that raises it says which
 * (see {@link FailureKind}):
 * - `decline`: this checkpoint is declined; the job runs on.
 * - `task`: a task failed; the job restarts from the latest completed checkpoint
 *   (if the restart strategy allows).
 * - `fatal`: the job stops; restarting cannot help (bad configuration, bad job module).
 *
 * Why one file: the catalogue is read as a whole (which code, which failure kind, which cause), and
 * every error class is a few lines of the same form; split by subsystem, the one question a user
 * has when catching ("which errors can this throw, and is it retryable?") would need several files.
 */

export type FailureKind = 'decline' | 'task' | 'fatal';

export abstract class WeirError extends Error {
  abstract readonly code: string;
  abstract readonly failureKind: FailureKind;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

// ---------- configuration and job definition (fatal) ----------

/** An option or argument has an invalid value. Thrown before anything runs. */
export class InvalidOptionError extends WeirError {
  readonly code = 'ERR_WEIR_INVALID_OPTION';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly option: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid option ${option}: ${message}`, options);
  }
}

/** The job module cannot be loaded or does not default-export `defineJob(...)`. */
export class JobModuleError extends WeirError {
  readonly code = 'ERR_WEIR_JOB_MODULE';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly module: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`job module ${module}: ${message}`, options);
  }
}

/** The job graph is invalid (no sink, a cycle, a bad parallelism, ...). */
export class InvalidGraphError extends WeirError {
  readonly code = 'ERR_WEIR_INVALID_GRAPH';
  readonly failureKind = 'fatal' as const;
}

/**
 * A user function returned a Promise (or any other thenable) where weir expects a value (or,
 * for `process`-like functions, nothing). User functions run synchronously inside the task's
 * loop, between two records: a promise's result, and whatever the function emits after its first
 * `await`, would be lost. Fatal: a restart runs the same code again.
 */
export class AsyncUserFunctionError extends WeirError {
  readonly code = 'ERR_WEIR_ASYNC_USER_FUNCTION';
  readonly failureKind = 'fatal' as const;
  constructor(
    /** The operator whose function returned the thenable; undefined for a state's function (the task names it). */
    readonly operator: string | undefined,
    /** Which function: `map function`, `key selector`, `aggregate function add`, ... */
    readonly functionKind: string,
  ) {
    super(
      `${functionKind}${operator === undefined ? '' : ` of operator "${operator}"`} returned a Promise ` +
        '(or another thenable); user functions must be synchronous: they run inside the task loop, so ' +
        'the promise result and anything emitted after its first await would be lost. For asynchronous ' +
        'I/O use stream.mapAsync(fn, { capacity, timeoutMs, ordered }) and hand its result to this ' +
        'function; otherwise remove async/await',
    );
  }
}

/**
 * An options object has a key weir does not know (usually a typo): it would be ignored
 * silently. Names the key, its place and the closest known key, if one is close.
 */
export class UnknownOptionError extends InvalidOptionError {
  constructor(
    option: string,
    /** The closest known key (edit distance), if any is close enough to be a likely typo. */
    readonly suggestion: string | undefined,
    readonly known: readonly string[],
  ) {
    super(
      option,
      `unknown option${suggestion === undefined ? '' : `; did you mean ${suggestion}?`} ` +
        `(known: ${known.join(', ')})`,
    );
  }
}

/** A key produced by a key selector has no canonical encoding (function, symbol, cycle, ...). */
export class KeyNotSerializableError extends WeirError {
  readonly code = 'ERR_WEIR_KEY_NOT_SERIALIZABLE';
  readonly failureKind = 'task' as const;
  constructor(
    readonly operator: string,
    readonly keyDescription: string,
  ) {
    super(
      `key selector of ${operator} returned a key that cannot be serialized (${keyDescription}); ` +
        'keys must be strings, numbers, booleans, bigints, or arrays/plain objects of those',
    );
  }
}

// ---------- data plane ----------

/** The peer closed the channel (shutdown or cancel) while this side was using it. */
export class ChannelClosedError extends WeirError {
  readonly code = 'ERR_WEIR_CHANNEL_CLOSED';
  readonly failureKind = 'task' as const;
  constructor(message = 'channel closed') {
    super(message);
  }
}

/** A single record does not fit the channel and fragmentation is off or exceeded its limit. */
export class RecordTooLargeError extends WeirError {
  readonly code = 'ERR_WEIR_RECORD_TOO_LARGE';
  readonly failureKind = 'task' as const;
  constructor(
    readonly sizeBytes: number,
    readonly limitBytes: number,
    readonly option: string,
  ) {
    super(
      `record of ${sizeBytes} bytes exceeds the limit of ${limitBytes} bytes; raise the ${option} option`,
    );
  }
}

// ---------- execution ----------

/**
 * A task failed: user code threw, the worker exited, or an asynchronous error escaped.
 * Names the operator, the subtask and the original error (as `cause`, with its stack).
 */
export class TaskFailureError extends WeirError {
  readonly code = 'ERR_WEIR_TASK_FAILURE';
  /**
   * Other failures of the same attempt, judged consequences of this one (peers that saw a closed
   * channel or were cancelled by the teardown, a checkpoint failure it caused, worker errors that
   * arrived while the attempt was torn down). Filled by the scheduler before the error is published.
   */
  readonly suppressed: Error[] = [];
  /**
   * `task` (restart as the strategy says), unless the original error was a {@link WeirError}
   * classified `fatal` (e.g. {@link AsyncUserFunctionError}): then the job ends without restarts.
   */
  readonly failureKind: FailureKind;
  /** The original error's class name (`TypeError`, `AsyncUserFunctionError`, ...), when it was an Error. */
  readonly originalName: string | undefined;
  /** The original error's `code`, when it had one (`ERR_WEIR_ASYNC_USER_FUNCTION`, ...). */
  readonly originalCode: string | undefined;
  constructor(
    readonly task: string,
    readonly operator: string | undefined,
    readonly originalMessage: string,
    readonly originalStack: string | undefined,
    options?: {
      cause?: unknown;
      failureKind?: FailureKind;
      originalName?: string;
      originalCode?: string;
    },
  ) {
    super(
      `task ${task}${operator ? ` (operator ${operator})` : ''} failed: ${originalMessage}` +
        (originalStack ? `\n--- original stack ---\n${originalStack}` : ''),
      options,
    );
    this.failureKind = options?.failureKind ?? 'task';
    this.originalName = options?.originalName;
    this.originalCode = options?.originalCode;
  }
}

/**
 * A task stayed in user code on one batch of records (or one source poll) for longer than the
 * job's `stuckTaskTimeout`: an infinite loop, a blocking call. Found by the stuck-task watchdog;
 * the attempt fails and the stuck thread is terminated.
 */
export class TaskStuckError extends WeirError {
  readonly code = 'ERR_WEIR_TASK_STUCK';
  readonly failureKind = 'task' as const;
  constructor(
    readonly task: string,
    readonly operator: string,
    readonly busyMs: number,
    readonly timeoutMs: number,
  ) {
    super(
      `task ${task} is stuck in user code of operator ${operator}: busy on one batch for ` +
        `${Math.round(busyMs)} ms, more than stuckTaskTimeout (${timeoutMs} ms) allows; its thread is terminated`,
    );
  }
}

/** The job failed and the restart strategy gave up (or there is none). `cause` is the last failure. */
export class JobFailedError extends WeirError {
  readonly code = 'ERR_WEIR_JOB_FAILED';
  readonly failureKind = 'fatal' as const;
  /** Worker errors that arrived outside any attempt (e.g. during a restart delay); logged, never fatal. */
  readonly suppressed: Error[] = [];
  constructor(
    message: string,
    readonly restarts: number,
    options?: {
      cause?: unknown;
      /** `fatal-error`: the failure was fatal, no restart was tried; `restarts-exhausted`: the strategy gave up. */
      reason?: 'fatal-error' | 'restarts-exhausted';
    },
  ) {
    super(message, options);
    this.reason = options?.reason ?? 'restarts-exhausted';
  }
  readonly reason: 'fatal-error' | 'restarts-exhausted';
}

/** The job was cancelled by the user. */
export class JobCancelledError extends WeirError {
  readonly code = 'ERR_WEIR_JOB_CANCELLED';
  readonly failureKind = 'fatal' as const;
  constructor(message = 'job cancelled') {
    super(message);
  }
}

/**
 * The job was cancelled through the `signal` option. Compatible with the DOM `AbortError`:
 * `name === 'AbortError'`, and `cause` is the signal's `reason`.
 */
export class JobAbortedError extends WeirError {
  readonly code = 'ABORT_ERR';
  readonly failureKind = 'fatal' as const;
  constructor(reason: unknown) {
    super('job aborted by its signal', { cause: reason });
    this.name = 'AbortError';
  }
}

/** A call that the job's current state does not allow (e.g. a savepoint after the job ended). */
export class JobStateError extends WeirError {
  readonly code = 'ERR_WEIR_JOB_STATE';
  readonly failureKind = 'fatal' as const;
}

// ---------- checkpoints ----------

/** Why a checkpoint did not complete. Mirrors Flink's CheckpointFailureReason. */
export type CheckpointFailureReason =
  | 'expired'
  | 'declined'
  | 'subsumed'
  | 'task-failure'
  | 'end-of-input'
  | 'async-snapshot-failed'
  | 'too-many-concurrent'
  | 'job-stopping'
  | 'storage-failed';

/** A checkpoint was declined or aborted. The job runs on (unless tolerable failures are exceeded). */
export class CheckpointDeclinedError extends WeirError {
  readonly code = 'ERR_WEIR_CHECKPOINT_DECLINED';
  readonly failureKind = 'decline' as const;
  constructor(
    readonly checkpointId: number,
    readonly reason: CheckpointFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`checkpoint ${checkpointId} ${reason}: ${message}`, options);
  }
}

/** Checkpoint storage is unusable: nothing to restore from, or every retained checkpoint is corrupt. */
export class CheckpointStorageError extends WeirError {
  readonly code = 'ERR_WEIR_CHECKPOINT_STORAGE';
  readonly failureKind = 'fatal' as const;
}

/** Stored state failed its checksum or cannot be decoded. */
export class CorruptStateError extends WeirError {
  readonly code = 'ERR_WEIR_CORRUPT_STATE';
  readonly failureKind = 'task' as const;
}

/**
 * A file of the checkpoint directory does not match what LMDB's own header says about it (a
 * truncated or overwritten `data.mdb`), found before the file is memory-mapped: mapping it would
 * kill the process with SIGBUS/SIGSEGV on the first read past its end.
 */
export class CheckpointFileDamagedError extends CheckpointStorageError {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(
      `checkpoint file ${file} is damaged: ${reason}; restore it from a backup, or move the directory ` +
        'aside to start from the beginning (committed output would then be produced again)',
    );
  }
}

// ---------- restore refusals (fatal): a restore that cannot be exact is refused ----------

/** A newer checkpoint that restore would have to pass over, and why. */
export interface DamagedCheckpoint {
  readonly checkpointId: number;
  readonly problem: string;
}

/**
 * The newest checkpoint(s) failed verification, and restoring an older one could commit output
 * twice: two-phase-commit sinks commit a checkpoint's transactions once it completed, so the
 * output of every damaged (but committed) checkpoint may already be out, and replaying from the
 * older one would produce it again. Names the damaged checkpoints and the one restore would
 * fall back to.
 */
export class RestoreFallbackRefusedError extends WeirError {
  readonly code = 'ERR_WEIR_RESTORE_FALLBACK_REFUSED';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly dir: string,
    readonly damaged: readonly DamagedCheckpoint[],
    readonly fallbackCheckpointId: number,
  ) {
    super(
      `refusing to restore checkpoint ${fallbackCheckpointId} from ${dir}: the newer ` +
        `checkpoint(s) ${damaged.map((d) => d.checkpointId).join(', ')} completed but failed verification ` +
        `(${damaged.map((d) => `${d.checkpointId}: ${d.problem}`).join('; ')}), and sinks may already ` +
        `have committed their output, which a run from checkpoint ${fallbackCheckpointId} would commit ` +
        `again. Inspect with \`weir checkpoints ${dir}\` and repair the storage; or accept duplicates ` +
        'with allowFallbackPastDamaged: true (CLI --allow-fallback-past-damaged)',
    );
  }
}

/** State of an operator of the checkpoint that no operator of the new job takes. */
export interface OrphanedState {
  readonly operatorUid: string;
  /** The operator's name when the checkpoint was taken, if recorded. */
  readonly name?: string;
  /** `operator`: operator and keyed state; `channel`: in-flight records of an unaligned checkpoint. */
  readonly kind: 'operator' | 'channel';
}

/**
 * The checkpoint holds state for operators the new job does not have (Flink:
 * allowNonRestoredState). Restoring would drop that state silently.
 */
export class NonRestoredStateError extends WeirError {
  readonly code = 'ERR_WEIR_NON_RESTORED_STATE';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly checkpointId: number,
    readonly operators: readonly OrphanedState[],
  ) {
    super(
      `checkpoint ${checkpointId} holds state that no operator of this job takes: ` +
        `${operators.map(describeOrphan).join(', ')}. If the operator was renamed, moved or its ` +
        'uid changed, give it back its uid with .uid(...); if it was removed on purpose, restore with ' +
        'allowNonRestoredState: true (CLI --allow-non-restored-state) to drop that state',
    );
  }
}

export function describeOrphan(o: OrphanedState): string {
  const what = o.kind === 'channel' ? 'in-flight records of' : 'state of';
  return `${what} uid "${o.operatorUid}"${o.name === undefined ? '' : ` (operator "${o.name}")`}`;
}

/**
 * The job's maxParallelism differs from the one the checkpoint's keyed state was written with:
 * keys would map to other key groups and state would land on the wrong keys.
 */
export class MaxParallelismMismatchError extends WeirError {
  readonly code = 'ERR_WEIR_MAX_PARALLELISM_MISMATCH';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly checkpointId: number,
    readonly checkpointMaxParallelism: number,
    readonly jobMaxParallelism: number,
  ) {
    super(
      `checkpoint ${checkpointId} holds keyed state written with maxParallelism ${checkpointMaxParallelism}, ` +
        `but this job runs with maxParallelism ${jobMaxParallelism}; key groups would change meaning. ` +
        `Run with maxParallelism: ${checkpointMaxParallelism} (CLI --max-parallelism ${checkpointMaxParallelism})`,
    );
  }
}

// ---------- keyed and operator state ----------

/**
 * A key was set on a keyed state backend whose key-group range does not contain the key's key
 * group: the key was routed to the wrong subtask (a non-deterministic key selector, or a
 * partitioner and a backend that disagree on maxParallelism). Restarting does not fix a
 * non-deterministic key selector, but the task cannot tell, so this fails the task.
 */
export class KeyGroupOutOfRangeError extends WeirError {
  readonly code = 'ERR_WEIR_KEY_GROUP_OUT_OF_RANGE';
  readonly failureKind = 'task' as const;
  constructor(
    readonly keyGroup: number,
    readonly rangeStart: number,
    readonly rangeEnd: number,
    readonly keyDescription: string,
  ) {
    super(
      `key ${keyDescription} belongs to key group ${keyGroup}, outside this subtask's key-group range ` +
        `[${rangeStart}, ${rangeEnd}]: the key selector must be deterministic and every partitioner ` +
        'must use the same maxParallelism as the state backend',
    );
  }
}

/** Keyed or operator state was used wrongly: no current key, one name used for two state kinds, ... */
export class StateAccessError extends WeirError {
  readonly code = 'ERR_WEIR_STATE_ACCESS';
  readonly failureKind = 'task' as const;
}

/** A stored key-group chunk failed its checksum or cannot be decoded. Names the key group. */
export class KeyGroupCorruptError extends CorruptStateError {
  constructor(
    readonly keyGroup: number,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`state of key group ${keyGroup} is corrupt: ${reason}`, options);
  }
}

/** A channel's shared memory holds something that is not a valid frame (corruption or a version mismatch). */
export class ChannelProtocolError extends WeirError {
  readonly code = 'ERR_WEIR_CHANNEL_PROTOCOL';
  readonly failureKind = 'task' as const;
}

// ---------- checkpoint protocol ----------

/**
 * An input channel delivered control events that break the barrier protocol: the same
 * checkpoint's barrier twice, barriers out of id order, or anything after its EndOfPartition.
 * A bug in the producer or the channel, not in user code; the task fails and restarts.
 */
export class BarrierProtocolError extends WeirError {
  readonly code = 'ERR_WEIR_BARRIER_PROTOCOL';
  readonly failureKind = 'task' as const;
  constructor(
    readonly channelIndex: number,
    readonly checkpointId: number | undefined,
    message: string,
  ) {
    super(`input channel ${channelIndex}: ${message}`);
  }
}

/**
 * More consecutive checkpoints failed than `checkpointing.tolerableFailures` allows. Fails the
 * job like a task failure (Flink: a global failover), so the restart strategy decides what
 * happens next. `cause` is the last counted {@link CheckpointDeclinedError}.
 */
export class CheckpointFailureThresholdError extends WeirError {
  readonly code = 'ERR_WEIR_CHECKPOINT_FAILURE_THRESHOLD';
  readonly failureKind = 'task' as const;
  constructor(
    readonly consecutiveFailures: number,
    readonly tolerableFailures: number,
    options?: { cause?: unknown },
  ) {
    super(
      `${consecutiveFailures} consecutive checkpoints failed, more than checkpointing.tolerableFailures ` +
        `(${tolerableFailures}) allows`,
      options,
    );
  }
}

// ---------- file connectors ----------

/**
 * A file source cannot read a file: it is missing or unreadable, vanished, was truncated or
 * replaced while followed, or holds a record larger than the limit. Names the file.
 */
export class FileSourceError extends WeirError {
  readonly code = 'ERR_WEIR_FILE_SOURCE';
  readonly failureKind = 'task' as const;
  constructor(
    readonly file: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`file source: ${file}: ${reason}`, options);
  }
}

/** A record of an input file does not parse in the source's format (`onError: 'fail'`). */
export class MalformedRecordError extends WeirError {
  readonly code = 'ERR_WEIR_MALFORMED_RECORD';
  readonly failureKind = 'task' as const;
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: malformed record: ${reason}`);
  }
}

/**
 * A file sink cannot write or commit: a record it cannot encode, an I/O failure, or a pending
 * part file that is gone without its committed file (output a checkpoint covers would be lost).
 */
export class FileSinkError extends WeirError {
  readonly code = 'ERR_WEIR_FILE_SINK';
  readonly failureKind = 'task' as const;
  constructor(
    readonly path: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`file sink: ${path}: ${reason}`, options);
  }
}

// ---------- two-phase-commit sinks (sinks.custom) ----------

/**
 * A committing sink broke its contract in a way no restart can fix: `write` returned a promise
 * (it must be synchronous), or the sink's options are inconsistent. Names the sink and the rule.
 */
export class SinkProtocolError extends WeirError {
  readonly code = 'ERR_WEIR_SINK_PROTOCOL';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly sink: string,
    readonly reason: string,
  ) {
    super(`sink ${sink}: ${reason}`);
  }
}

/**
 * A committing sink's `commit` kept failing: the first try and every retry threw. A task
 * failure: the job restarts from its latest completed checkpoint, whose committables are
 * committed again. `cause` is the last error.
 */
export class SinkCommitError extends WeirError {
  readonly code = 'ERR_WEIR_SINK_COMMIT';
  readonly failureKind = 'task' as const;
  constructor(
    readonly sink: string,
    readonly checkpointId: number,
    readonly subtaskIndex: number,
    readonly tries: number,
    options: { cause: unknown },
  ) {
    const m = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(
      `sink ${sink}: commit of checkpoint ${checkpointId} (writer subtask ${subtaskIndex}) failed ${tries} times, last: ${m}`,
      options,
    );
  }
}

// ---------- embedded log (src/log) ----------

/** The log's directory cannot be opened, has another format, or LMDB failed a read or write. */
export class LogStorageError extends WeirError {
  readonly code = 'ERR_WEIR_LOG_STORAGE';
  readonly failureKind = 'task' as const;
}

/** A {@link Log} or one of its topics was used after `log.close()`. */
export class LogClosedError extends WeirError {
  readonly code = 'ERR_WEIR_LOG_CLOSED';
  readonly failureKind = 'task' as const;
  constructor(readonly dir: string) {
    super(`log ${dir} is closed`);
  }
}

/** A topic was opened without `partitions` and does not exist. Creating it needs a partition count. */
export class LogTopicNotFoundError extends WeirError {
  readonly code = 'ERR_WEIR_LOG_TOPIC_NOT_FOUND';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly dir: string,
    readonly topic: string,
  ) {
    super(`log ${dir} has no topic "${topic}"; create it with log.topic(name, { partitions })`);
  }
}

/** A topic was opened with a partition count other than the one it was created with (which is fixed). */
export class LogPartitionCountMismatchError extends WeirError {
  readonly code = 'ERR_WEIR_LOG_PARTITION_COUNT_MISMATCH';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly topic: string,
    readonly existingPartitions: number,
    readonly requestedPartitions: number,
  ) {
    super(
      `topic "${topic}" has ${existingPartitions} partition(s), fixed at creation; it was opened with ` +
        `partitions: ${requestedPartitions}`,
    );
  }
}

/**
 * A record given to `topic.append` cannot be encoded with msgpack (a symbol, a function, a cycle,
 * ...) or its key cannot be hashed. Raised before anything is written: the whole batch is
 * rejected. `cause` is the encoder's error.
 */
export class LogRecordEncodingError extends WeirError {
  readonly code = 'ERR_WEIR_LOG_RECORD_ENCODING';
  readonly failureKind = 'task' as const;
  constructor(
    readonly topic: string,
    readonly recordIndex: number,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `record ${recordIndex} of the batch for topic "${topic}" cannot be appended: ${reason}; ` +
        'nothing of the batch was written',
      options,
    );
  }
}

// ---------- async I/O (mapAsync) ----------

/**
 * A request of an async operator (`mapAsync` / `flatMapAsync`) did not settle within `timeoutMs`
 * on its last allowed attempt. Names the operator, the subtask and the record's position in the
 * subtask's input (counted from the start of the attempt, restored in-flight records first).
 * Fails the task: the job restarts from the latest checkpoint, which re-issues the request.
 */
export class AsyncTimeoutError extends WeirError {
  readonly code = 'ERR_WEIR_ASYNC_TIMEOUT';
  readonly failureKind = 'task' as const;
  constructor(
    readonly operator: string,
    readonly subtaskIndex: number,
    readonly recordPosition: number,
    readonly timeoutMs: number,
    readonly attempts: number,
  ) {
    super(
      `${operator} (subtask ${subtaskIndex}): the request for input record #${recordPosition} timed out ` +
        `after ${timeoutMs} ms on attempt ${attempts} of ${attempts}; raise timeoutMs or allow retries ` +
        '(retry: { attempts, backoffMs })',
    );
  }
}

/**
 * The promise an async operator's function returned was rejected (or the function threw) on the
 * last allowed attempt, or a `flatMapAsync` function resolved to something that is not iterable.
 * `cause` is the user's error. Fails the task.
 */
export class AsyncRequestError extends WeirError {
  readonly code = 'ERR_WEIR_ASYNC_REQUEST';
  readonly failureKind = 'task' as const;
  constructor(
    readonly operator: string,
    readonly subtaskIndex: number,
    readonly recordPosition: number,
    readonly attempts: number,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${operator} (subtask ${subtaskIndex}): the request for input record #${recordPosition} failed on ` +
        `attempt ${attempts} of ${attempts}: ${reason}`,
      options,
    );
  }
}

// ---------- values ----------

/**
 * A record or a state value holds something weir cannot carry between threads or into a
 * snapshot without changing it (a function). Raised where it is encoded; `subject` names the
 * operator that emitted the record, or the state and its operator.
 */
export class ValueNotSerializableError extends WeirError {
  readonly code = 'ERR_WEIR_VALUE_NOT_SERIALIZABLE';
  readonly failureKind = 'task' as const;
  /** The operator whose state or record it is, when known. */
  readonly operator: string | undefined;
  /** The state's name, for a state value. */
  readonly state: string | undefined;
  constructor(
    readonly subject: string,
    readonly reason: string,
    options?: { cause?: unknown; operator?: string; state?: string },
  ) {
    super(
      `${subject} cannot be serialized: ${reason}; records and state may hold numbers, strings, ` +
        'booleans, null, undefined, bigints, Dates, Maps, Sets, typed arrays, arrays and plain objects',
      options,
    );
    this.operator = options?.operator;
    this.state = options?.state;
  }
}

// ---------- broker and database connectors (src/connectors) ----------

/** A JetStream source cannot read: connection failure, a lost consumer, or an undecodable payload. */
export class JetStreamSourceError extends WeirError {
  readonly code = 'ERR_WEIR_JETSTREAM_SOURCE';
  readonly failureKind = 'task' as const;
  constructor(
    readonly where: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`jetstream source: ${where}: ${reason}`, options);
  }
}

/** The JetStream stream a connector names does not exist (connectors never create streams). */
export class JetStreamStreamNotFoundError extends WeirError {
  readonly code = 'ERR_WEIR_JETSTREAM_STREAM_NOT_FOUND';
  readonly failureKind = 'task' as const;
  constructor(
    readonly stream: string,
    options?: { cause?: unknown },
  ) {
    super(
      `JetStream stream "${stream}" does not exist; create it first (e.g. nats stream add ${stream})`,
      options,
    );
  }
}

/** A PostgreSQL sink cannot write or commit (connection, SQL error, a row it cannot map). */
export class PostgresSinkError extends WeirError {
  readonly code = 'ERR_WEIR_POSTGRES_SINK';
  readonly failureKind = 'task' as const;
  constructor(
    readonly table: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`postgres sink: table "${table}": ${reason}`, options);
  }
}

/**
 * The table a PostgreSQL connector names does not exist (a sink creates it only with
 * `createTable`; `sources.postgres` never does).
 */
export class PostgresTableNotFoundError extends WeirError {
  readonly code = 'ERR_WEIR_POSTGRES_TABLE_NOT_FOUND';
  readonly failureKind = 'task' as const;
  constructor(
    readonly table: string,
    options?: { cause?: unknown; hint?: string },
  ) {
    super(
      `PostgreSQL table "${table}" does not exist; ${options?.hint ?? 'create it, or pass createTable: true'}`,
      options,
    );
  }
}

/** A PostgreSQL source cannot read: connection failure or an SQL error while scanning. */
export class PostgresSourceError extends WeirError {
  readonly code = 'ERR_WEIR_POSTGRES_SOURCE';
  readonly failureKind = 'task' as const;
  constructor(
    readonly table: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`postgres source: table "${table}": ${reason}`, options);
  }
}

/**
 * The table does not fit a `sources.postgres` scan: a named column is missing, or the order key
 * is not unique (no primary key or unique index within its columns), nullable, or of a type with
 * no ordering. Fatal: a restart would find the same table.
 */
export class PostgresSourceSchemaError extends WeirError {
  readonly code = 'ERR_WEIR_POSTGRES_SOURCE_SCHEMA';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly table: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`postgres source: table "${table}": ${reason}`, options);
  }
}

/** A JetStream sink cannot publish (connection failure, no stream captures the subject, encoding). */
export class JetStreamSinkError extends WeirError {
  readonly code = 'ERR_WEIR_JETSTREAM_SINK';
  readonly failureKind = 'task' as const;
  constructor(
    readonly subject: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`jetstream sink: subject "${subject}": ${reason}`, options);
  }
}

/** A Redis stream connector cannot read, append or commit (connection, a missing stream, a bad entry). */
export class RedisStreamError extends WeirError {
  readonly code = 'ERR_WEIR_REDIS_STREAM';
  readonly failureKind = 'task' as const;
  constructor(
    readonly stream: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`redis stream "${stream}": ${reason}`, options);
  }
}

// ---------- weir verify ----------

/** A failure injected by `weir verify` (job option `faultInjection`): a task failure by design. */
export class InjectedFailureError extends WeirError {
  readonly code = 'ERR_WEIR_INJECTED_FAILURE';
  readonly failureKind = 'task' as const;
  constructor(
    readonly operator: string,
    readonly subtaskIndex: number,
    readonly attempt: number,
    readonly atRecord: number,
  ) {
    super(
      `injected failure (weir verify): ${operator} subtask ${subtaskIndex}, attempt ${attempt}, before record ${atRecord}`,
    );
  }
}

/** `weir verify` cannot read back what a sink committed, so it cannot compare its output. */
export class VerifyUnsupportedSinkError extends WeirError {
  readonly code = 'ERR_WEIR_VERIFY_UNSUPPORTED_SINK';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly sink: string,
    readonly sinkType: string,
    /** Why this sink, which can be read back, still cannot be compared (e.g. an upsert sink). */
    readonly reason?: string,
  ) {
    super(
      reason !== undefined
        ? `weir verify cannot compare the output of sink "${sink}" (type ${sinkType}): ${reason}`
        : `weir verify cannot read back the output of sink "${sink}" (type ${sinkType}): supported are ` +
            'sinks.collect, sinks.file (jsonl, csv), sinks.log, sinks.postgres (append mode), ' +
            'sinks.jetstream, sinks.redisStream, and sinks.custom with readCommitted(); ' +
            'sinks.stdout and sinks.discard are skipped',
    );
  }
}

/** None of the job's sinks has output `weir verify` can compare (only stdout or discard sinks). */
export class VerifyNothingToCompareError extends WeirError {
  readonly code = 'ERR_WEIR_VERIFY_NOTHING_TO_COMPARE';
  readonly failureKind = 'fatal' as const;
  constructor(readonly sinks: readonly string[]) {
    super(
      `weir verify has no output to compare: the job's sinks (${sinks.join(', ') || 'none'}) keep nothing ` +
        'it can read back; sink to sinks.collect, sinks.file, sinks.log, sinks.postgres, sinks.jetstream, ' +
        'sinks.redisStream or a sinks.custom with readCommitted()',
    );
  }
}

/** Reading back what a sink committed (its `readCommitted()`) failed: verify cannot compare that sink. */
export class VerifyReadBackError extends WeirError {
  readonly code = 'ERR_WEIR_VERIFY_READ_BACK';
  readonly failureKind = 'fatal' as const;
  constructor(
    readonly sink: string,
    cause: unknown,
  ) {
    super(
      `weir verify could not read back what sink "${sink}" committed: its readCommitted() failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/**
 * `weir verify` ended without a report: the process had nothing left to run while verify still
 * awaited something (a promise that never settles: in a sink's `readCommitted()`, in the job, or a
 * weir bug). Reported by the CLI as it exits, instead of exiting silently with no report.
 */
export class VerifyIncompleteError extends WeirError {
  readonly code = 'ERR_WEIR_VERIFY_INCOMPLETE';
  readonly failureKind = 'fatal' as const;
  constructor(readonly job: string) {
    super(
      `weir verify ${job} ended before its report: nothing was left to run while it still awaited a result ` +
        "(a promise that never settles, e.g. in a sink's readCommitted(); otherwise a weir bug: please report it)",
    );
  }
}

// ---------- scale-out cluster (src/cluster) ----------

/**
 * The cluster's NATS server or its KV buckets cannot be reached, read or written: connecting,
 * creating a bucket, a heartbeat or a watch failed, or the named cluster does not exist.
 */
export class ClusterError extends WeirError {
  readonly code = 'ERR_WEIR_CLUSTER';
  readonly failureKind = 'task' as const;
  constructor(
    readonly cluster: string,
    readonly where: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cluster "${cluster}": ${where}: ${reason}`, options);
  }
}

/**
 * Why an instance is not (or no longer) the coordinator: it never held the lease (`not-holder`),
 * its lease ran out before a renewal succeeded (`expired`, known locally), another instance took
 * the lease over so the server refused the write (`superseded`, the fencing check), or a write's
 * outcome is unknown (`ambiguous`: a timeout or a dropped connection; the instance steps down
 * rather than guess).
 */
export type LeaseLossReason = 'not-holder' | 'expired' | 'superseded' | 'ambiguous';

/**
 * A coordinator action was refused because this instance does not hold the coordinator lease
 * (any more). A fenced commit that throws this did not commit, except for `ambiguous`, whose
 * outcome is unknown: the next coordinator reads what is there.
 */
export class CoordinatorLeaseLostError extends WeirError {
  readonly code = 'ERR_WEIR_COORDINATOR_LEASE_LOST';
  readonly failureKind = 'task' as const;
  constructor(
    readonly cluster: string,
    readonly reason: LeaseLossReason,
    /** The lease epoch this instance held (the revision of its acquiring write), if any. */
    readonly epoch: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(
      `cluster "${cluster}": not the coordinator: ${reason}${epoch === undefined ? '' : ` (lease epoch ${epoch})`}`,
      options,
    );
  }
}

/**
 * A remote edge (one producer subtask → one consumer subtask over NATS, `src/cluster/remote-edge-*`)
 * received a message that is not a valid remote-edge message: wrong magic or version, an unknown
 * type, a truncated frame, or a generation the receiver never issued. A bug or a foreign
 * publisher on the flow's subject; the task fails and restarts.
 */
export class RemoteEdgeProtocolError extends WeirError {
  readonly code = 'ERR_WEIR_REMOTE_EDGE_PROTOCOL';
  readonly failureKind = 'task' as const;
  constructor(
    readonly flow: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`remote edge ${flow}: ${message}`, options);
  }
}

/**
 * A remote edge's sequence numbers broke: a `duplicate` (a message with a sequence number already
 * delivered in the same generation — core NATS never duplicates, so a second publisher or a bug),
 * or a `gap` that cannot be repaired (the producer no longer holds the missing messages, or
 * claims never to have sent a message the receiver saw). Gaps the producer can still fill are
 * repaired by a resume and never reach this error; nothing is ever skipped.
 */
export class RemoteEdgeSequenceError extends WeirError {
  readonly code = 'ERR_WEIR_REMOTE_EDGE_SEQUENCE';
  readonly failureKind = 'task' as const;
  constructor(
    readonly flow: string,
    readonly sequenceFault: 'gap' | 'duplicate',
    readonly expectedSeq: number,
    readonly receivedSeq: number,
    message: string,
  ) {
    super(`remote edge ${flow}: ${sequenceFault}: ${message}`);
  }
}
