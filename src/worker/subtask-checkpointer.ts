/**
 * One subtask's snapshot path, apart from its run loop (Flink's `SubtaskCheckpointCoordinatorImpl`
 * beside `StreamTask`): the synchronous part (every operator's snapshot, then the barrier
 * forwarded), the asynchronous part (channel state awaited, keyed state serialized, chunks
 * written, then acknowledge or decline), and the release of every snapshot view on every path.
 *
 * Called only from the task's loop thread, between two frames (stream-task.ts), never in the
 * middle of a record; the asynchronous parts run on while the loop goes on, and the task waits
 * for them ({@link SubtaskCheckpointer.waitForAsyncParts}) before it exits.
 *
 * Failure kinds (STYLE.md 6): a failed asynchronous part declines its checkpoint (the job runs
 * on), except state that can never be serialized, which fails the task through `fail`.
 */

import type { CheckpointBarrier, ControlFrame } from '../channels/frame.js';
import { type CheckpointFailureReason, ValueNotSerializableError } from '../errors.js';
import { CHANNEL_STATE_CHUNK } from '../protocol/snapshot-chunks.js';
import type { TaskEvent } from '../protocol/task-deployment.js';
import type { KeyedStateSnapshot } from '../state/keyed-state-backend.js';
import type { ChunkHandle } from '../state/storage/chunk-handle.js';
import type { AbortOrigin, BarrierAlignmentMetrics } from './barrier/barrier-handler.js';
import type { ChannelStateBatch, ChannelStateRecorder } from './channel-state/channel-state-recorder.js';
import type { OperatorSnapshot, StreamOperator } from './operators/stream-operator.js';
import type { KeyedChunk, TaskSnapshotStorage } from './snapshot-storage.js';

/** What the barrier handler measured about a checkpoint's alignment at this task. */
export type AlignmentOutcome = Pick<BarrierAlignmentMetrics, 'alignmentDurationMs' | 'switchedToUnaligned'>;

/** A checkpoint triggered directly (a source, an ended task): nothing was aligned. */
export const NO_ALIGNMENT: AlignmentOutcome = { alignmentDurationMs: 0 };

export interface SubtaskCheckpointerOptions {
  /** The task's name, for decline messages. */
  readonly name: string;
  /** The chain's operators, head first: snapshotted and notified in this order. */
  readonly operators: readonly StreamOperator[];
  /** The next snapshot of every keyed backend of the chain is full (an abort that re-bases). */
  readonly rebaseKeyedState: () => void;
  readonly storage: TaskSnapshotStorage | null;
  /** Unaligned checkpoints: every checkpoint records channel state (else only a switched one). */
  readonly unaligned: boolean;
  readonly channelState: ChannelStateRecorder | null;
  /** Writes a control frame (barrier, cancel marker) on every output of the task. */
  readonly forward: (frame: ControlFrame) => void;
  /** Posts a task event (acknowledge, decline) to the main thread. */
  readonly emit: (event: TaskEvent) => void;
  /** Fails the task from its loop (enqueued: the loop throws it between two frames). */
  readonly fail: (error: unknown) => void;
  /** Keyed chunks go to storage in batches of at least this many bytes. Default {@link KEYED_WRITE_BATCH_BYTES}. */
  readonly keyedWriteBatchBytes?: number;
  /** Serialization waits while more keyed bytes than this are being written. Default {@link KEYED_WRITE_IN_FLIGHT_BYTES}. */
  readonly keyedWriteInFlightBytes?: number;
}

/**
 * A snapshot's keyed chunks are written in batches of this many bytes as they are serialized (a
 * 5 M-key checkpoint is ~17 MiB per task; held whole before, issue 14).
 */
export const KEYED_WRITE_BATCH_BYTES = 1024 * 1024;
/** At most this many keyed bytes of one snapshot are being written while serialization goes on. */
export const KEYED_WRITE_IN_FLIGHT_BYTES = 4 * 1024 * 1024;

/** What `#writeKeyedAhead` wrote, and the last batch it left for the operator's own write. */
interface WrittenAhead {
  readonly handles: readonly ChunkHandle[];
  readonly bytes: number;
  readonly rest: readonly KeyedChunk[];
  readonly serializeMs: number;
  readonly writeMs: number;
}

const NOTHING_AHEAD: WrittenAhead = { handles: [], bytes: 0, rest: [], serializeMs: 0, writeMs: 0 };

type BatchOutcome = { readonly handles: ChunkHandle[]; readonly bytes: number } | { readonly error: unknown };

export class SubtaskCheckpointer {
  readonly #o: SubtaskCheckpointerOptions;
  /**
   * Highest checkpoint id this task snapshotted or aborted; -1 before any. After end of input the
   * coordinator may trigger a checkpoint the task already took through a barrier (it cannot tell
   * whether the barrier got here before the end): such a trigger is ignored.
   */
  #latestCheckpointId = -1;
  /** Async snapshot parts still running; each removes itself once settled. */
  readonly #asyncParts = new Set<Promise<void>>();
  /** Async parts serializing keyed state right now (the loop then yields more often for them). */
  #serializing = 0;

  constructor(options: SubtaskCheckpointerOptions) {
    this.#o = options;
  }

  get latestCheckpointId(): number {
    return this.#latestCheckpointId;
  }

  /**
   * Whether an asynchronous part is serializing keyed state now: it runs in slices between the
   * loop's yields, so the loop yields at {@link SNAPSHOT_YIELD_EVERY_MS} meanwhile.
   */
  get serializing(): boolean {
    return this.#serializing > 0;
  }

  /** Whether an asynchronous part is still running (the loop must not block its thread then). */
  get hasAsyncParts(): boolean {
    return this.#asyncParts.size > 0;
  }

  /** Resolves once every asynchronous part started so far has acknowledged or declined. */
  async waitForAsyncParts(): Promise<void> {
    await Promise.all(this.#asyncParts);
  }

  /**
   * A checkpoint the barrier handler triggered (aligned, or barriers overtaking): its channel
   * state follows every unaligned trigger and a switched one (start-channel-state and, later,
   * finish or abort); an aligned trigger has none, and waiting for it would never end.
   */
  checkpointOnBarrier(barrier: CheckpointBarrier, alignment: AlignmentOutcome): void {
    const recordsChannelState = this.#o.unaligned || alignment.switchedToUnaligned === true;
    const channelState = recordsChannelState
      ? (this.#o.channelState?.open(barrier.checkpointId) ?? null)
      : null;
    this.checkpoint(barrier, alignment, true, channelState);
  }

  /**
   * Synchronous part: snapshot every operator, then forward the barrier (when `forward`). The
   * asynchronous part persists the snapshots while the loop goes on, then acknowledges (or
   * declines on failure). `channelState`: the in-flight records of an unaligned checkpoint, null
   * when it has none; resolving to null means the checkpoint was aborted while recording.
   */
  checkpoint(
    barrier: CheckpointBarrier,
    alignment: AlignmentOutcome,
    forward: boolean,
    channelState: Promise<ChannelStateBatch[] | null> | null = null,
  ): void {
    const t0 = performance.now();
    // Trigger → first barrier here (or the trigger itself): what precedes alignment and snapshot.
    const checkpointStartDelayMs = Math.max(
      0,
      performance.timeOrigin + t0 - barrier.timestamp - alignment.alignmentDurationMs,
    );
    this.#latestCheckpointId = Math.max(this.#latestCheckpointId, barrier.checkpointId);
    const snapshots: { uid: string; snapshot: OperatorSnapshot }[] = [];
    for (const op of this.#o.operators)
      snapshots.push({ uid: op.uid, snapshot: op.snapshotState(barrier.checkpointId) });
    if (forward) this.#o.forward(barrier);
    const syncDurationMs = performance.now() - t0;
    const part = this.#persist(
      barrier.checkpointId,
      snapshots,
      alignment,
      { syncDurationMs, checkpointStartDelayMs },
      channelState,
    );
    this.#asyncParts.add(part);
    void part.finally(() => this.#asyncParts.delete(part));
  }

  /** Gives up on a checkpoint (barrier handler's decision): decline (if ours) and forward a cancel marker. */
  abortCheckpoint(checkpointId: number, reason: CheckpointFailureReason, origin: AbortOrigin): void {
    this.#latestCheckpointId = Math.max(this.#latestCheckpointId, checkpointId);
    // An unaligned checkpoint's async part is waiting for its channel state: it ends silently.
    this.#o.channelState?.abort(checkpointId);
    // An upstream abort was already declined by the task that decided it.
    if (origin === 'this-task') this.decline(checkpointId, reason, `aborted by ${this.#o.name}`);
    this.#o.forward({ kind: 'cancel-checkpoint', checkpointId });
  }

  decline(checkpointId: number, reason: CheckpointFailureReason, message: string): void {
    this.#o.emit({ kind: 'decline', checkpointId, reason, message });
  }

  notifyCheckpointComplete(checkpointId: number): void {
    for (const op of this.#o.operators) op.notifyCheckpointComplete(checkpointId);
  }

  /**
   * `rebase`: the coordinator refused the checkpoint because of its chains' length (a cluster
   * record past the limit): an aborted checkpoint never becomes a base, so without starting the
   * chains over the next delta would be as long, and refused as well.
   */
  notifyCheckpointAborted(checkpointId: number, rebase = false): void {
    for (const op of this.#o.operators) op.notifyCheckpointAborted(checkpointId);
    if (rebase) this.#o.rebaseKeyedState();
  }

  // Channel state (unaligned checkpoints), as the barrier handler decides it.

  startChannelState(checkpointId: number, channels: readonly number[]): void {
    this.#o.channelState!.start(checkpointId, channels);
  }

  stopChannelState(checkpointId: number, channelIndex: number): void {
    this.#o.channelState!.stop(checkpointId, channelIndex);
  }

  finishChannelState(checkpointId: number): void {
    this.#o.channelState!.finish(checkpointId);
  }

  /**
   * Asynchronous part. Invariant: every snapshot's keyed view is released exactly once, whatever
   * happens (copy-on-write keeps preserving a view until it is released).
   */
  async #persist(
    checkpointId: number,
    snapshots: readonly { uid: string; snapshot: OperatorSnapshot }[],
    alignment: AlignmentOutcome,
    sync: { readonly syncDurationMs: number; readonly checkpointStartDelayMs: number },
    channelState: Promise<ChannelStateBatch[] | null> | null,
  ): Promise<void> {
    const t0 = performance.now();
    const operators: { operatorUid: string; chunks: ChunkHandle[] }[] = [];
    let bytes = 0;
    // Unaligned: the snapshot is complete only once every channel delivered the barrier.
    const channelBatches = channelState ? await channelState : null;
    const channelStateWaitMs = performance.now() - t0;
    let serializeMs = 0;
    let writeMs = 0;
    if (channelState && channelBatches === null) {
      // Aborted while recording: abortCheckpoint already declined (or an upstream task did).
      for (const { snapshot } of snapshots) snapshot.keyedState?.release();
      return;
    }
    let next = 0; // snapshots before this one are released
    try {
      const storage = this.#o.storage;
      if (!storage) throw new Error('checkpoint storage is not open in this task');
      for (let i = 0; i < snapshots.length; i++) {
        const { uid, snapshot } = snapshots[i];
        const keyed = snapshot.keyedState;
        next = i + 1;
        try {
          let keyedChunks: KeyedChunk[] = [];
          let ahead: WrittenAhead = NOTHING_AHEAD;
          if (keyed) {
            ahead = await this.#writeKeyedAhead(checkpointId, uid, keyed, storage);
            keyedChunks = [...ahead.rest];
            serializeMs += ahead.serializeMs;
            writeMs += ahead.writeMs;
          }
          const shared = keyed?.sharedChunks ?? [];
          const w0 = performance.now();
          // Channel state goes with the head operator (the one the replayed records enter).
          if (i === 0 && channelBatches && channelBatches.length > 0) {
            keyedChunks.push({
              name: CHANNEL_STATE_CHUNK,
              bytes: this.#o.channelState!.encode(channelBatches),
            });
          }
          const written = await storage.writeOperatorChunks(
            checkpointId,
            uid,
            // A committing sink's pre-commit: this acknowledgement waits for it (the loop does not).
            await snapshot.operatorState,
            keyedChunks,
          );
          writeMs += performance.now() - w0;
          // Before the acknowledgement: the backend's next delta builds on these handles, key
          // groups in order. (Channel state is never a base: it belongs to this checkpoint alone.)
          keyed?.persisted?.([
            ...ahead.handles,
            ...written.keyedHandles.filter((h) => h.name !== CHANNEL_STATE_CHUNK),
          ]);
          bytes += ahead.bytes;
          if (ahead.handles.length === 0 && written.handles.length === 0 && shared.length === 0) continue;
          // Shared chunks (base, earlier deltas) first: restore applies a key group's chunks in order.
          operators.push({
            operatorUid: uid,
            chunks: [...shared, ...ahead.handles, ...written.handles],
          });
          bytes += written.bytes;
        } finally {
          keyed?.release();
        }
      }
    } catch (e) {
      // Release the views not reached, or copy-on-write would keep preserving them.
      for (let i = next; i < snapshots.length; i++) snapshots[i].snapshot.keyedState?.release();
      // State that cannot be serialized fails every checkpoint to come: declining would only
      // bury it under "N consecutive checkpoints failed". The task fails, naming state and operator.
      if (e instanceof ValueNotSerializableError) this.#o.fail(e);
      // A failed async part declines this checkpoint; the job runs on.
      this.decline(checkpointId, 'async-snapshot-failed', e instanceof Error ? e.message : String(e));
      return;
    }
    this.#o.emit({
      kind: 'acknowledge',
      checkpointId,
      state: { operators },
      metrics: {
        alignmentDurationMs: alignment.alignmentDurationMs,
        ...(alignment.switchedToUnaligned ? { switchedToUnaligned: true } : {}),
        syncDurationMs: sync.syncDurationMs,
        asyncDurationMs: performance.now() - t0,
        bytes,
        checkpointStartDelayMs: sync.checkpointStartDelayMs,
        channelStateWaitMs,
        serializeMs,
        writeMs,
        ackSentAt: performance.timeOrigin + performance.now(),
      },
    });
  }

  /**
   * Serializes `keyed` and writes its chunks while later key groups are still being encoded:
   * batches of at least `keyedWriteBatchBytes` go to storage as they fill, and serialization
   * waits while more than `keyedWriteInFlightBytes` are being written, so the bytes this task
   * holds stay bounded (about one batch plus the in-flight bound plus one key group's chunk)
   * instead of the whole snapshot, and encoding overlaps the writes. Resolves once every batch
   * is durable, with their handles in key-group order and the last, partial batch unwritten
   * (`rest`: it goes with the operator's own chunks). On failure every batch has settled.
   */
  async #writeKeyedAhead(
    checkpointId: number,
    uid: string,
    keyed: KeyedStateSnapshot,
    storage: TaskSnapshotStorage,
  ): Promise<WrittenAhead> {
    const batchBytes = this.#o.keyedWriteBatchBytes ?? KEYED_WRITE_BATCH_BYTES;
    const maxInFlight = this.#o.keyedWriteInFlightBytes ?? KEYED_WRITE_IN_FLIGHT_BYTES;
    const inFlight: { readonly done: Promise<BatchOutcome>; readonly bytes: number }[] = [];
    let inFlightBytes = 0;
    const handles: ChunkHandle[] = [];
    let bytes = 0;
    let batch: KeyedChunk[] = [];
    let batchFill = 0;
    let serializeMs = 0;
    let writeMs = 0;
    const settleOldest = async (): Promise<void> => {
      const w = inFlight.shift()!;
      const outcome = await w.done;
      inFlightBytes -= w.bytes;
      if ('error' in outcome) throw outcome.error;
      for (const h of outcome.handles) handles.push(h);
      bytes += outcome.bytes;
    };
    const chunks = keyed.serializeChunks()[Symbol.asyncIterator]();
    let ended = false;
    this.#serializing++;
    try {
      for (;;) {
        const s0 = performance.now();
        let next: IteratorResult<KeyedChunk>;
        try {
          next = await chunks.next();
        } finally {
          serializeMs += performance.now() - s0;
        }
        if (next.done === true) break;
        batch.push(next.value);
        batchFill += next.value.bytes.byteLength;
        if (batchFill < batchBytes) continue;
        const w0 = performance.now();
        while (inFlight.length > 0 && inFlightBytes + batchFill > maxInFlight) await settleOldest();
        writeMs += performance.now() - w0;
        inFlight.push({
          // Settles to its error: a failure while serialization goes on is not an unhandled rejection.
          done: storage.writeKeyedChunks(checkpointId, uid, batch).catch((error: unknown) => ({ error })),
          bytes: batchFill,
        });
        inFlightBytes += batchFill;
        batch = [];
        batchFill = 0;
      }
      ended = true;
    } finally {
      this.#serializing--;
      if (!ended) {
        // Serialization or a write failed: end the stream (it releases the view) and let every
        // batch settle before the checkpoint is declined.
        await chunks.return?.(undefined);
        await Promise.all(inFlight.map((w) => w.done));
      }
    }
    const w0 = performance.now();
    while (inFlight.length > 0) await settleOldest();
    writeMs += performance.now() - w0;
    return { handles, bytes, rest: batch, serializeMs, writeMs };
  }
}
