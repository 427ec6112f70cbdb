/**
 * What the main thread hands a worker to run one subtask, the events the task reports back and
 * the result it ends with. Everything here crosses a thread boundary by structured clone: no functions. SharedArrayBuffers
 * are shared, MessagePorts are transferred.
 */

import type { MessagePort } from 'node:worker_threads';
import type { LogLevel } from '../api/logger.js';
import type { CheckpointMode, SourceLag } from '../api/source.js';
import type { BufferDebloatOptions } from '../channels/buffer-debloater.js';
import type { CheckpointType } from '../channels/frame.js';
import type { CheckpointFailureReason, FailureKind } from '../errors.js';
import type { ChunkHandle } from '../state/storage/chunk-handle.js';
import type { InjectedFault } from './injected-fault.js';
import type { ChannelStateChunkRef } from './snapshot-chunks.js';

/**
 * A channel whose other end is a subtask in another process: one remote-edge flow over NATS
 * (src/cluster/remote-edge-*.ts) instead of a ring. Deployed by cluster jobs (src/cluster/cluster-job.ts).
 */
export interface RemoteChannelDeployment {
  /** The flow's name (one NATS token), the same at both ends; unique per run attempt. */
  readonly remoteFlow: string;
}

/** Where a task's remote channels connect; required when any channel is remote. */
export interface RemoteEdgesDeployment {
  readonly servers: readonly string[];
  /** Subject prefix (remote-edge-wire.ts). Default `weir.edge`. */
  readonly prefix?: string;
  /** The credit window of every flow, bytes. Default 1 MiB. */
  readonly windowBytes?: number;
  /** Resync period of every flow, ms. Default 1000. */
  readonly resyncAfterMs?: number;
}

export function isRemoteChannel(
  c: SharedArrayBuffer | RemoteChannelDeployment,
): c is RemoteChannelDeployment {
  return !(c instanceof SharedArrayBuffer);
}

export interface InputChannelDeployment {
  readonly edgeId: number;
  readonly producerSubtask: number;
  readonly inputIndex: 0 | 1;
  readonly ring: SharedArrayBuffer | RemoteChannelDeployment;
}

export interface OutputEdgeDeployment {
  readonly edgeId: number;
  /** Indexed by consumer subtask; a forward edge has exactly one entry, at index 0. */
  readonly rings: readonly (SharedArrayBuffer | RemoteChannelDeployment)[];
  /** The doorbell of each consumer task, in the same order as `rings` (null for a remote one). */
  readonly doorbells: readonly (SharedArrayBuffer | null)[];
}

export interface TaskCheckpointConfig {
  readonly mode: CheckpointMode;
  readonly dir: string;
  readonly incremental: boolean;
  /** With `incremental`: a full keyed snapshot at least every this many checkpoints (chain bound). */
  readonly fullEvery?: number;
  readonly stateBackend: 'heap' | 'lmdb';
  /** Exactly-once without alignment: in-flight records become channel state. */
  readonly unaligned?: boolean;
  /** Exactly-once: ms of alignment after which a task takes the checkpoint unaligned; absent: never. */
  readonly alignmentTimeout?: number;
}

/** State handed to a task on restore, already redistributed to this subtask. */
export interface TaskRestoreState {
  readonly checkpointId: number;
  /**
   * The checkpoint's sinks committed all it holds before the job stopped
   * (`CheckpointMetadata.sinksCommitted`): sinks restore no pending transactions (no
   * commit-on-restore). False: they commit the restored transactions again.
   */
  readonly sinksCommitted: boolean;
  /** operator uid → operator-state entries (source positions, sink transactions). */
  readonly operatorState: Readonly<Record<string, readonly unknown[]>>;
  /** operator uid → keyed-state chunks of the key groups this subtask owns, from every old subtask. */
  readonly keyedState: Readonly<Record<string, readonly ChunkHandle[]>>;
  /** Unaligned checkpoints: in-flight records to replay before any new input (see channel-state-replay.ts). */
  readonly channelState?: readonly ChannelStateChunkRef<ChunkHandle>[];
  /** Checkpoint directory the chunks are in, when it is not the job's (a savepoint). */
  readonly dir?: string;
}

export interface TaskDeployment {
  readonly jobModule: string;
  readonly args: Readonly<Record<string, string>>;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly vertexId: number;
  readonly subtaskIndex: number;
  readonly attempt: number;
  readonly inputs: readonly InputChannelDeployment[];
  readonly outputs: readonly OutputEdgeDeployment[];
  /** The NATS server of the remote channels; absent when every channel is a ring. */
  readonly remoteEdges?: RemoteEdgesDeployment;
  readonly doorbell: SharedArrayBuffer;
  /** Main → task control calls (comlink). */
  readonly controlPort: MessagePort;
  /** Task → main events ({@link TaskEvent}), in order. */
  readonly eventPort: MessagePort;
  readonly checkpointing: TaskCheckpointConfig | null;
  /** Keyed state backend (job option `stateBackend`); absent means 'heap'. */
  readonly stateBackend?: 'heap' | 'lmdb';
  /** Parent directory of lmdb state environments (created and removed by the main thread). */
  readonly stateDir?: string;
  readonly restore: TaskRestoreState | null;
  /** Failures to inject (`weir verify`); the task arms those of its attempt. */
  readonly faultInjection: readonly InjectedFault[];
  /** The task's busy slot for the stuck-task watchdog (worker/busy-marker.ts); null: no watchdog. */
  readonly busy: { readonly buffer: SharedArrayBuffer; readonly slot: number } | null;
  /** Batch options; from job options. */
  readonly channelOptions: {
    readonly batchRecords: number;
    readonly batchBytes: number;
    /** Shape codec for one-shape batches (false: msgpack only). */
    readonly shapeBatches: boolean;
    /** Buffer debloating of the input gate; null = off. */
    readonly debloat: BufferDebloatOptions | null;
    /** Wake-up batching of the output rings (ChannelOptions.wakeDelayMs); 0 = off. */
    readonly wakeDelayMs: number;
  };
}

export interface OperatorMetrics {
  readonly nodeId: number;
  readonly name: string;
  readonly recordsIn: number;
  readonly recordsOut: number;
  /** Operator-specific counters (e.g. a file source's skipped lines), summed across subtasks. */
  readonly counters?: Readonly<Record<string, number>>;
  /**
   * The task's input watermark (event-time ms), on the chain head of a task with network inputs,
   * once one arrived. Read when sampled: no per-record cost.
   */
  readonly inputWatermark?: number;
  /** The task's time split and ring fill, on the chain head (one per task). Read when sampled. */
  readonly load?: TaskLoadMetrics;
  /** How far a source is behind the end of what it reads (see `SourceReader.lag`), when known. */
  readonly sourceLag?: SourceLag;
}

/** Where a task's thread spent its time (cumulative, this attempt) and how full its rings are. */
export interface TaskLoadMetrics {
  /** Parked with nothing to do: no input, nothing to read, waiting for async requests. */
  readonly idleMs: number;
  /** Parked because an output ring was full (its consumer is slower). */
  readonly backpressuredMs: number;
  /** Share in use of the fullest output ring, 1 while frames wait for room; absent without outputs. */
  readonly outputFill?: number;
  /** Share in use of the fullest input ring; absent for sources. */
  readonly inputFill?: number;
  /** The task's channels to and from other processes of a cluster job (src/cluster/remote-edge-*.ts). */
  readonly remoteEdges?: readonly RemoteEdgeMetrics[];
}

/**
 * One remote edge flow as one of its two ends sees it, cumulative over the attempt except the
 * lag. The lag of a flow is what its producer sent and its consumer has not read yet: the sender
 * sees it as `outstandingBytes` (sent, not yet credited back as consumed: up to the credit window),
 * the receiver as `queuedBytes` (arrived, not yet read by its task).
 */
export interface RemoteEdgeMetrics {
  /** The flow's name: `<run>-<edge>-<producer>-<consumer>`, the same at both ends. */
  readonly flow: string;
  readonly direction: 'out' | 'in';
  /** Records sent (out) or read (in). */
  readonly records: number;
  /** Bytes of data messages sent (out) or received (in). */
  readonly bytes: number;
  /** out: bytes sent and not yet consumed by the receiver. */
  readonly outstandingBytes?: number;
  /** out: times the credit window stopped the sender (remote backpressure). */
  readonly creditStalls?: number;
  /** out: messages sent again after a cut connection. */
  readonly resent?: number;
  /** in: bytes received and not yet read by the task. */
  readonly queuedBytes?: number;
  /** in: gaps (messages lost on a cut) repaired by a resume. */
  readonly gaps?: number;
}

export interface TaskCheckpointMetrics {
  readonly alignmentDurationMs: number;
  /** The alignment timed out (or an unaligned barrier came) and the task took the checkpoint unaligned. */
  readonly switchedToUnaligned?: boolean;
  readonly syncDurationMs: number;
  readonly asyncDurationMs: number;
  readonly bytes: number;
  /**
   * Where the checkpoint's time went at this task (issue 14), ms: trigger (`barrier.timestamp`)
   * → first barrier here (or the trigger, for a source): the trigger's path and the barrier's travel.
   */
  readonly checkpointStartDelayMs?: number;
  /** Async part waiting for the channel state to complete (the last barrier of an unaligned checkpoint). */
  readonly channelStateWaitMs?: number;
  /** Async part serializing keyed state (in slices between the loop's turns). */
  readonly serializeMs?: number;
  /** Async part encoding channel state and writing the chunks (storage commit and fsync included). */
  readonly writeMs?: number;
  /** Wall clock (ms since the epoch, fractional) when the acknowledgement was posted. */
  readonly ackSentAt?: number;
}

/**
 * What a task's snapshot consists of, as the coordinator stores it in checkpoint metadata: per
 * operator, the handles of the chunks written to checkpoint storage (operator state as one chunk,
 * keyed state as one chunk per key group).
 */
export interface TaskSnapshotHandles {
  readonly operators: readonly { readonly operatorUid: string; readonly chunks: readonly ChunkHandle[] }[];
}

/** Task → main events. A closed union keyed on `kind`. */
export type TaskEvent =
  | {
      readonly kind: 'deliver';
      readonly sink: string;
      readonly records: unknown[];
      /** Committed transaction id (taken once by the client), or null for non-transactional output. */
      readonly transactionId: string | null;
    }
  | {
      readonly kind: 'acknowledge';
      readonly checkpointId: number;
      readonly state: TaskSnapshotHandles;
      readonly metrics: TaskCheckpointMetrics;
    }
  | {
      readonly kind: 'decline';
      readonly checkpointId: number;
      readonly reason: CheckpointFailureReason;
      readonly message: string;
    }
  | ({ readonly kind: 'failed' } & TaskFailureDescription)
  /**
   * A log record for the job's `logger` (workers cannot receive functions). `fields` are
   * structured-clone safe: `operator`, `checkpointId`, `err` as `{ name, message, stack }`.
   */
  | {
      readonly kind: 'log';
      readonly level: LogLevel;
      readonly msg: string;
      readonly fields: Readonly<Record<string, unknown>>;
    }
  /** All inputs ended and operators finished; with checkpointing the task now awaits the final checkpoint. */
  /** The task loaded the job module, opened its channels and restored its state; it runs now. */
  | { readonly kind: 'running' }
  | { readonly kind: 'input-ended' }
  | { readonly kind: 'finished'; readonly metrics: readonly OperatorMetrics[] };

/** What an abort tells the task beside the checkpoint's id. */
export interface CheckpointAbortOptions {
  /**
   * The keyed backends' next snapshot is full (their incremental chain starts over): a cluster
   * coordinator could not commit the checkpoint's record, which names every chunk of each chain
   * (cluster-record-limit.ts). Absent: the chain goes on (a delta over the last confirmed base).
   */
  readonly rebase?: boolean;
}

/** Main → task control calls, exposed by the task over comlink. */
export interface TaskControl {
  /**
   * `final`: the coordinator's last checkpoint of a bounded job (every task ended its input); the
   * task exits once it completed. Any other trigger never ends a task.
   */
  triggerCheckpoint(
    checkpointId: number,
    timestamp: number,
    checkpointType: CheckpointType,
    final: boolean,
  ): void;
  notifyCheckpointComplete(checkpointId: number): void;
  notifyCheckpointAborted(checkpointId: number, options?: CheckpointAbortOptions): void;
  cancel(): void;
  /** The task's counters now (records in/out per operator of the current attempt). */
  metrics(): readonly OperatorMetrics[];
  /**
   * Stop-with-savepoint: resolves `true` once every committing sink of the task committed all it
   * holds of checkpoints `<= checkpointId` (at once without committing sinks), `false` as soon as
   * one failed or closed first. Answered off the loop's commands: it only watches the ledgers.
   */
  awaitCommitted(checkpointId: number): Promise<boolean>;
}

/**
 * What a task's worker thread hands back to the scheduler when its run ends: its operators'
 * final metrics, or a description of its failure. A failure travels as plain strings and flags
 * (a structured clone of the original error could itself fail, e.g. on a function-valued
 * field), enough to rebuild the user's error on the main thread and to rank it among the
 * attempt's other failures (see coordinator/failure-attribution.ts); the worker builds it with
 * `describeFailure` (worker/task-failure-description.ts).
 */
export type TaskResult = (
  | { readonly state: 'finished'; readonly metrics: readonly OperatorMetrics[] }
  | {
      readonly state: 'failed';
      readonly failure: TaskFailureDescription;
    }
) & {
  /**
   * A sink's commit or teardown was still running when the task gave up waiting for it: the
   * thread must not be reused (the scheduler terminates it, which ends that work), or it could
   * overlap the next attempt's re-commit of the same committable.
   */
  readonly lingering?: true;
};

export interface TaskFailureDescription {
  /** The operator whose user code threw, if the failure came from user code. */
  readonly operator: string | undefined;
  /** `Name: message` of the original error. */
  readonly message: string;
  readonly stack: string | undefined;
  /** The original error's `name` and `message`, to rebuild it as the failure's `cause`. */
  readonly errorName: string;
  readonly errorMessage: string;
  /**
   * True when this failure is a consequence of another one: a peer closed a channel this task
   * used (it failed, or teardown closed it), or teardown cancelled this task. The scheduler never
   * reports such a failure as the attempt's cause while it knows a root cause.
   */
  readonly consequence: boolean;
  /** The original error's kind (a WeirError's own, else `task`): `fatal` ends the job without restarts. */
  readonly failureKind: FailureKind;
  /** The original error's `code`, when it had one (`ERR_WEIR_ASYNC_USER_FUNCTION`, ...). */
  readonly errorCode: string | undefined;
}
