/**
 * What a `StreamTask` (stream-task.ts) needs from its surroundings, as narrow interfaces (timely's
 * `push` and `pull` endpoints): its input gate and output channels (src/channels: rings;
 * src/cluster: remote edges) and its barrier handler (src/worker/barrier). Tests implement them
 * with fakes (test/unit/worker/task/task-harness.ts).
 */

import type { EncodedBatches } from '../channels/encoded-batches.js';
import type { CheckpointBarrier, ControlFrame, Frame } from '../channels/frame.js';

/** What the task needs from its input gate (src/channels). */
export interface TaskInputGate {
  pollNext(): {
    readonly channelIndex: number;
    readonly frame: Frame;
    /** Record batches an overtaking barrier passed (input-gate.ts GateFrame). */
    readonly overtaken?: EncodedBatches;
  } | null;
  block(channelIndex: number): void;
  unblock(channelIndex: number): void;
  /** Pulls a matching in-band barrier ahead of the channel's frames (input-gate.ts); optional. */
  pullBarrier?(channelIndex: number, match: (barrier: CheckpointBarrier) => boolean): boolean;
  readonly allEnded: boolean;
  /** Parks until a channel has something, `wake()`, or `timeoutMs` elapsed. */
  waitAsync(timeoutMs?: number): Promise<void>;
  /**
   * Like {@link waitAsync} but blocking the thread (Atomics.wait), and returning at once while a
   * control message is flagged. Optional: a gate without it always parks asynchronously.
   */
  waitSync?(timeoutMs?: number): boolean;
  /** Whether a control message was flagged since the last call (clears the flag). With waitSync. */
  takeControl?(): boolean;
  /**
   * False when a channel is filled by this thread's event loop (a remote edge), which a blocking
   * park would hold still: the task then always parks asynchronously. Absent: true.
   */
  readonly mayParkBlocking?: boolean;
  wake(): void;
  close(): void;
  /** Buffer debloating: on when non-null (optional: test gates leave it out). */
  readonly debloat?: unknown;
  /** Ring limits the gate published (buffer debloating). */
  readonly debloatStats?: { readonly published: number };
  /** Share in use of the fullest input ring, read for metrics; absent: not reported. */
  fillRatio?(): number;
}

/** What the task needs from each output channel (src/channels). */
export interface TaskOutputChannel {
  writeControl(frame: ControlFrame): void;
  /** Publishes what is batched; true when nothing is left pending. */
  flush(): boolean;
  readonly backlogged: boolean;
  waitForCapacity(): Promise<void>;
  /**
   * Rings the consumer for frames published but left unrung (ChannelWriter `wakeDelayMs`); called
   * on every output before the task waits. Absent: every publish rings (or wakes) at once.
   */
  ringDeferred?(): void;
  /** Makes a pending waitForCapacity return so the task can serve a command (cancel). */
  interruptWait?(): void;
  /**
   * Unaligned checkpoints: writes a barrier that overtakes what the channel holds (channel-writer.ts);
   * absent: the barrier is written in band.
   */
  writeOvertakingBarrier?(barrier: CheckpointBarrier): boolean;
  close(): void;
  /** Share of the ring in use (1 while backlogged), read for metrics; absent: not reported. */
  readonly fillRatio?: number;
}

/** Routes control frames to the aligning or tracking handler (src/worker/barrier). */
export interface TaskBarrierHandler {
  onBarrier(channelIndex: number, barrier: CheckpointBarrier): void;
  onCancelMarker(channelIndex: number, checkpointId: number): void;
  onEndOfPartition(channelIndex: number): void;
  /**
   * Alignment timeout (alternating-barrier-handler.ts): ms until the alignment in progress times
   * out, Infinity when none; the loop parks no longer, and then calls {@link onAlignmentTimer}.
   */
  msUntilAlignmentTimeout?(): number;
  onAlignmentTimer?(): void;
  /**
   * Alignment timeout: the in-band barriers to pull ahead of their rings' frames now, and where
   * (alignment-timeout-state.ts `barriersToPull`); null when none.
   */
  barriersToPull?(): {
    readonly channels: readonly number[];
    readonly match: (barrier: CheckpointBarrier) => boolean;
  } | null;
}
