/**
 * One subtask's run loop: reads frames from its {@link InputGate} (or polls its source), pushes
 * records through its {@link OperatorChain}, routes barriers to its barrier handler, takes
 * snapshots, and reacts to control calls from the main thread.
 *
 * The loop is asynchronous on purpose: control calls arrive as MessagePort messages, which a
 * thread blocked in `Atomics.wait` or a busy loop would never see. The loop therefore parks
 * with `Atomics.waitAsync` (through the gate) or a wakeable timer (sources), and yields to the
 * event loop every {@link YIELD_EVERY_MS} while busy. Every control call only enqueues a command
 * and wakes the loop; the loop executes commands between frames, so a snapshot never runs in
 * the middle of a record.
 *
 * End of input (see docs/architecture.md, "Bounded jobs"): a task whose inputs have all ended
 * (or whose source ended) finishes its operators, emits EndOfPartition, and reports
 * `input-ended`. Without checkpointing it then exits. With checkpointing it stays alive,
 * quiescent, acknowledging every later checkpoint with its final state (triggered directly,
 * FLIP-147), until the coordinator's final checkpoint has completed, so two-phase-commit sinks
 * commit their last transaction; then it exits.
 *
 * The snapshot path (operator snapshots, channel state, storage writes, acknowledge or decline)
 * is the {@link SubtaskCheckpointer}'s (subtask-checkpointer.ts); this file holds the loop, its
 * command queue and the waits, which share the loop's state (commands, wake-up, time meter). It is
 * over 400 lines because the three loops (source, inputs, async operators) and the waits they
 * share read best side by side: each serves commands at the same points.
 */

import type { MessagePort } from 'node:worker_threads';
import { consoleLogger, type Logger } from '../api/logger.js';
import type { CheckpointBarrier, CheckpointType, ControlFrame } from '../channels/frame.js';
import type { CheckpointFailureReason } from '../errors.js';
import type {
  OperatorMetrics,
  RemoteEdgeMetrics,
  TaskCheckpointConfig,
  TaskControl,
  TaskEvent,
  TaskLoadMetrics,
} from '../protocol/task-deployment.js';
import { assertNever } from '../util/assert-never.js';
import type { AbortOrigin, BarrierHandlerActions } from './barrier/barrier-handler.js';
import type { BusyMarker } from './busy-marker.js';
import type { ChannelStateRecorder } from './channel-state/channel-state-recorder.js';
import type { ReplayBatch } from './channel-state/channel-state-replay.js';
import type { OperatorChain } from './operator-chain.js';
import type { AsyncWaitOperator } from './operators/async-wait-operator.js';
import { SourceOperator } from './operators/source-operator.js';
import type { StreamOperator } from './operators/stream-operator.js';
import type { TaskSnapshotStorage } from './snapshot-storage.js';
import { type AlignmentOutcome, NO_ALIGNMENT, SubtaskCheckpointer } from './subtask-checkpointer.js';
import type { TaskBarrierHandler, TaskInputGate, TaskOutputChannel } from './task-endpoints.js';
import { TaskTimeMeter } from './task-time-meter.js';
import type { TaskTime } from './timers/task-time.js';
import { WatermarkValve } from './timers/watermark-valve.js';
import { Wakeup } from './wakeup.js';

/** Longest stretch of busy processing between two yields to the event loop (control latency). */
export const YIELD_EVERY_MS = 2;
/**
 * The same while a snapshot's keyed state is being serialized: serialization runs in slices
 * between the loop's yields (one slice per turn), so at 2 ms a busy task gave it a third of the
 * thread and a 50 k-key snapshot took ~10 turns of the loop, i.e. most of a checkpoint's duration
 * under backpressure (issue 14). At this pace it gets most of the thread until it is encoded
 * (not while the chunks are written: the loop then goes back to 2 ms).
 */
export const SNAPSHOT_YIELD_EVERY_MS = 0.2;
/** Longest park while waiting for an async operator (a settled request wakes the loop earlier). */
export const ASYNC_PARK_MAX_MS = 1000;
/** Records a source emits per poll. */
export const SOURCE_BATCH = 256;
/**
 * Longest a consumer blocks in `Atomics.wait` without a turn of its event loop. Control messages
 * wake it at once (ringing-endpoint.ts); this bound is for anything else the loop may owe the
 * thread that {@link StreamTask} cannot see. ~20 turns a second cost nothing measurable.
 */
export const BLOCKING_PARK_MAX_MS = 50;

/**
 * How often, at most, a task with an alignment timeout scans its input rings for barriers to pull
 * ahead of their frames (stream-task.ts #pullBarriers): a scan reads two words per frame published
 * (~500 frames in a full 1 MiB ring), so scanning at every 2 ms yield costs well under 1 %.
 */
export const PULL_SCAN_EVERY_MS = 2;

type Command =
  | {
      kind: 'trigger';
      checkpointId: number;
      timestamp: number;
      checkpointType: CheckpointType;
      final: boolean;
    }
  | { kind: 'complete'; checkpointId: number }
  | { kind: 'aborted'; checkpointId: number; rebase: boolean }
  | { kind: 'cancel' }
  /**
   * Fail the task from the loop: the asynchronous part of a snapshot failed in a way retrying
   * cannot fix, or an operator's asynchronous work failed (a committing sink's pre-commit or commit).
   */
  | { kind: 'fail'; error: unknown };

export interface StreamTaskOptions {
  readonly name: string;
  readonly chain: OperatorChain;
  /** Every keyed backend of the chain: its next snapshot is full (an abort that re-bases). */
  readonly rebaseKeyedState?: () => void;
  /** Null for source tasks. `inputIndexOf[channel]` maps a gate channel to the head's input. */
  readonly gate: TaskInputGate | null;
  readonly inputIndexOf: readonly (0 | 1)[];
  /** Per gate channel: records arrive as `[timestamp | null, value]` envelopes (event time). */
  readonly timestampedChannels?: readonly boolean[];
  /** Idle timeout (ms) of the input channels for the watermark; undefined: never idle. */
  readonly inputIdleTimeout?: number;
  /** The chain's element timestamp and processing-time deadline. */
  readonly time: TaskTime;
  readonly outputs: readonly TaskOutputChannel[];
  readonly checkpointing: TaskCheckpointConfig | null;
  /** Builds the barrier handler once the task can act on its decisions. */
  readonly createBarrierHandler: ((task: BarrierHandlerActions) => TaskBarrierHandler) | null;
  readonly storage: TaskSnapshotStorage | null;
  /** The job's logger (records are forwarded to the main thread; see task-logger.ts). Default: the console. */
  readonly logger?: Logger;
  readonly eventPort: MessagePort;
  /** Unaligned checkpoints: records in-flight data as channel state. */
  readonly channelState?: ChannelStateRecorder | null;
  /** Restored channel state: processed before any new input. */
  readonly replay?: readonly ReplayBatch[];
  /** Stuck-task watchdog: marked busy around each batch of user code (null: no watchdog). */
  readonly busy?: BusyMarker | null;
  /** The task's remote edge flows (cluster jobs), for their counters in the load metrics. */
  readonly remote?: { metrics(): readonly RemoteEdgeMetrics[] } | null;
}

export class TaskCancelledError extends Error {
  constructor() {
    super('task cancelled');
    this.name = 'TaskCancelledError';
  }
}

export class StreamTask implements BarrierHandlerActions {
  readonly #o: StreamTaskOptions;
  readonly #commands: Command[] = [];
  readonly #wakeup = new Wakeup();
  readonly #barrierHandler: TaskBarrierHandler | null;
  readonly #source: SourceOperator | null;
  #cancelled = false;
  #inputEnded = false;
  /** Highest checkpoint id whose completion was notified. */
  #lastCompleted = -1;
  /** Id of the checkpoint taken directly after end of input (the final one), once taken. */
  #finalCheckpointId: number | null = null;
  /** The snapshot path: sync and async parts, acknowledge and decline. */
  readonly #checkpointer: SubtaskCheckpointer;
  /** Id of the last checkpoint the barrier handler triggered; -1 before any. Tells the loop a timer switched. */
  #latestTriggered = -1;
  /** When #pullBarriers last scanned the input rings (performance.now()). */
  #lastPullScan = -Infinity;
  /** Input watermark of the head, from the valve (gate tasks); only increases. */
  #watermark = -Infinity;
  readonly #valve: WatermarkValve | null;
  /** The chain's async operators (mapAsync); empty for most tasks, then every check is free. */
  readonly #asyncOps: readonly AsyncWaitOperator[];
  /** Idle and backpressured time of this thread (task-time-meter.ts): clock reads per park only. */
  readonly #time = new TaskTimeMeter();

  constructor(options: StreamTaskOptions) {
    this.#o = options;
    this.#source = options.chain.head instanceof SourceOperator ? options.chain.head : null;
    this.#checkpointer = new SubtaskCheckpointer({
      name: options.name,
      operators: options.chain.operators,
      rebaseKeyedState: options.rebaseKeyedState ?? (() => {}),
      storage: options.storage,
      unaligned: options.checkpointing?.unaligned === true,
      channelState: options.channelState ?? null,
      forward: (frame) => this.#forward(frame),
      emit: (event) => this.#emit(event),
      fail: (error) => this.#enqueue({ kind: 'fail', error }),
    });
    this.#barrierHandler = options.createBarrierHandler?.(this) ?? null;
    // Asynchronous operator failures fail the task from the loop, between two frames.
    for (const op of options.chain.operators)
      op.bindAsyncFailure?.((error) => this.#enqueue({ kind: 'fail', error }));
    this.#valve = options.gate
      ? new WatermarkValve(options.inputIndexOf.length, options.inputIdleTimeout, options.time.now())
      : null;
    this.#asyncOps = options.chain.asyncOperators;
    // A settled request wakes the loop wherever it parks (source sleep or gate wait).
    for (const op of this.#asyncOps)
      op.setWakeup(() => {
        this.#wakeup.wake();
        options.gate?.wake();
      });
  }

  /** Control calls, exposed to the main thread over comlink. Each only enqueues and wakes. */
  readonly control: TaskControl = {
    triggerCheckpoint: (checkpointId, timestamp, checkpointType, final) =>
      this.#enqueue({ kind: 'trigger', checkpointId, timestamp, checkpointType, final }),
    notifyCheckpointComplete: (checkpointId) => this.#enqueue({ kind: 'complete', checkpointId }),
    notifyCheckpointAborted: (checkpointId, options) =>
      this.#enqueue({ kind: 'aborted', checkpointId, rebase: options?.rebase === true }),
    cancel: () => this.#enqueue({ kind: 'cancel' }),
    // Answered directly: the counters are plain numbers of this thread, read between two turns
    // of the loop (a control message only runs when the loop yields).
    metrics: () => this.#metrics(),
    awaitCommitted: async (checkpointId) => {
      const waits = this.#o.chain.operators.flatMap((op) =>
        op.awaitCommitted ? [op.awaitCommitted(checkpointId)] : [],
      );
      return (await Promise.all(waits)).every(Boolean);
    },
  };

  #metrics(): OperatorMetrics[] {
    const { chain, gate } = this.#o;
    return chain.operators.map((op, i) => ({
      nodeId: op.nodeId,
      name: op.name,
      recordsIn: op.recordsIn,
      recordsOut: chain.outputs[i].count,
      counters:
        i === 0 && gate?.debloat && gate.debloatStats
          ? // The chain head reports its input gate's debloating: how often it set new ring limits.
            { ...op.counters(), debloatLimitsPublished: gate.debloatStats.published }
          : op.counters(),
      ...(op.sourceLag ? { sourceLag: op.sourceLag() } : {}),
      ...(i === 0 && this.#watermark !== Number.NEGATIVE_INFINITY ? { inputWatermark: this.#watermark } : {}),
      ...(i === 0 ? { load: this.#load() } : {}),
    }));
  }

  /** The task's time split and ring fill, read now (O(channels) atomic loads). */
  #load(): TaskLoadMetrics {
    let outputFill: number | undefined;
    for (const w of this.#o.outputs)
      if (w.fillRatio !== undefined) outputFill = Math.max(outputFill ?? 0, w.fillRatio);
    const inputFill = this.#o.gate?.fillRatio?.();
    const remoteEdges = this.#o.remote?.metrics();
    return {
      ...this.#time.read(),
      ...(outputFill !== undefined ? { outputFill } : {}),
      ...(inputFill !== undefined ? { inputFill } : {}),
      ...(remoteEdges && remoteEdges.length > 0 ? { remoteEdges } : {}),
    };
  }

  #enqueue(c: Command): void {
    this.#commands.push(c);
    this.#wakeup.wake();
    this.#o.gate?.wake();
    // A task blocked on backpressure must see a cancel even when its consumer stopped reading,
    // and an unaligned source its trigger: its barrier overtakes the full rings.
    if (c.kind === 'cancel' || (c.kind === 'trigger' && this.#overtakes()))
      for (const w of this.#o.outputs) w.interruptWait?.();
  }

  /** Whether this task's barriers overtake its output rings (unaligned checkpoints). */
  #overtakes(): boolean {
    return this.#o.checkpointing?.unaligned === true;
  }

  #emit(event: TaskEvent): void {
    this.#o.eventPort.postMessage(event);
  }

  async run(): Promise<readonly OperatorMetrics[]> {
    const { chain } = this.#o;
    for (const op of chain.operators) op.open();
    try {
      if (this.#source) await this.#runSource(this.#source);
      else await this.#runInputs();
      await this.#endOfInput();
      if (this.#o.checkpointing) await this.#awaitFinalCommit();
      await this.#checkpointer.waitForAsyncParts();
      await this.#settleOperators();
    } finally {
      for (const op of chain.operators) {
        try {
          op.close();
        } catch (e) {
          // close() failures must not hide the original failure; they are reported as a warning.
          (this.#o.logger ?? consoleLogger).warn(
            { operator: op.name, err: e },
            'closing the operator failed',
          );
        }
      }
      this.#o.gate?.close();
      this.#o.channelState?.close();
    }
    const metrics = this.#metrics();
    this.#emit({ kind: 'finished', metrics });
    return metrics;
  }

  // ---------------------------------------------------------------- main loops

  async #runSource(source: SourceOperator): Promise<void> {
    let lastYield = performance.now();
    for (;;) {
      this.#drainCommands();
      this.#fireProcessingTime();
      if (this.#asyncOps.length > 0) await this.#serveAsync('capacity');
      this.#o.time.timestamp = undefined;
      this.#o.busy?.enter();
      const r = source.poll(SOURCE_BATCH);
      this.#o.busy?.exit();
      if (r.state === 'end') return;
      if (r.state === 'idle') {
        this.#flushOutputs();
        // The reader's own wake-up (e.g. an append to the log it reads) cuts the sleep short.
        r.wake?.then(() => this.#wakeup.wake());
        this.#time.park('idle');
        await this.#wakeup.sleep(Math.min(r.ms, this.#msUntilDeadline()));
        this.#time.unpark();
        lastYield = performance.now();
        continue;
      }
      if (this.#anyBacklogged()) await this.#awaitCapacity();
      const now = performance.now();
      if (now - lastYield >= YIELD_EVERY_MS) {
        await yieldToEventLoop();
        lastYield = performance.now();
      }
    }
  }

  async #runInputs(): Promise<void> {
    const gate = this.#o.gate!;
    const head = this.#o.chain.head;
    const inputIndexOf = this.#o.inputIndexOf;
    const timestamped = this.#o.timestampedChannels ?? [];
    const time = this.#o.time;
    const valve = this.#valve!;
    const tracksIdleness = valve.tracksIdleness;
    let nextIdleCheck = valve.nextIdleCheck();
    const recorder = this.#o.channelState ?? null;
    const busy = this.#o.busy ?? null;
    // Restored in-flight records first: they preceded everything the inputs will deliver.
    for (const batch of this.#o.replay ?? []) {
      busy?.enter();
      pushRecords(head, time, batch.records, batch.inputIndex, batch.timestamped, undefined);
      busy?.exit();
      this.#drainCommandsWhileBlocked();
      if (this.#anyBacklogged()) await this.#awaitCapacity();
      if (this.#asyncOps.length > 0) await this.#serveAsync('capacity');
    }
    let lastYield = performance.now();
    /** When the event loop last turned (a blocking park does not turn it). */
    let lastTurn = lastYield;
    for (;;) {
      this.#drainCommands();
      this.#fireProcessingTime();
      if (tracksIdleness) {
        // Checked only once the earliest channel can have become idle: O(channels) per check.
        // Activity only pushes deadlines later, so the cached one is never late, except when no
        // channel was active (Infinity): then a channel resuming must re-arm it.
        const now = time.now();
        if (now >= nextIdleCheck || nextIdleCheck === Infinity) {
          this.#advanceWatermark(valve.checkIdle(now));
          nextIdleCheck = valve.nextIdleCheck();
        }
      }
      if (this.#asyncOps.length > 0) await this.#serveAsync('capacity');
      const next = gate.pollNext();
      if (next === null) {
        if (gate.allEnded) return;
        // Nothing readable while aligning: the timeout may have passed (and the switch unblocks).
        if (this.#alignmentTimer()) continue;
        // Idle: publish partial batches so latency stays low without a timer.
        this.#flushOutputs();
        if (this.#anyBacklogged()) await this.#awaitCapacity();
        else {
          const timeoutMs = Math.min(this.#msUntilDeadline(), this.#msUntilAlignmentTimeout());
          // Blocking park (docs/architecture.md, "Waiting"): the producer's ring wakes it with a
          // futex wake instead of a task posted to this thread's event loop, the cheaper wake-up
          // at low rates. Only while nothing but control messages can arrive through the event
          // loop, and once BLOCKING_PARK_MAX_MS passed without a turn of it, the park is an
          // asynchronous one (which turns it; an idle task then sleeps there without a timeout).
          const blocking = performance.now() - lastTurn < BLOCKING_PARK_MAX_MS && this.#mayBlock(gate);
          this.#time.park('idle');
          if (blocking) gate.waitSync!(Math.min(timeoutMs, BLOCKING_PARK_MAX_MS));
          else await gate.waitAsync(timeoutMs);
          this.#time.unpark();
          // A control message was posted (its ring may have ended the park): one turn of the event
          // loop delivers it; the loop's next drainCommands runs it. Also after an asynchronous
          // park: the park's promise can resolve before the port's message is dispatched.
          const control = gate.takeControl?.() === true;
          if (control) await passEventLoop();
          if (control || !blocking) lastTurn = performance.now();
        }
        lastYield = performance.now();
        continue;
      }
      const { channelIndex, frame } = next;
      switch (frame.kind) {
        case 'records': {
          const input = inputIndexOf[channelIndex];
          const records = frame.records;
          if (recorder?.isRecording(channelIndex)) recorder.record(channelIndex, records);
          if (tracksIdleness) valve.onActivity(channelIndex, time.now());
          // Busy marks per batch, not per record (busy-marker.ts). A throw leaves the slot busy:
          // the task fails, and the scheduler stops the watchdog before it could misreport.
          busy?.enter();
          pushRecords(head, time, records, input, timestamped[channelIndex] === true, frame.keyGroups);
          busy?.exit();
          break;
        }
        case 'barrier':
          if (this.#barrierHandler) {
            // An overtaking barrier: the batches it passed (delivered next) are its channel state.
            if (next.overtaken !== undefined && recorder !== null) {
              recorder.recordOvertaken(frame.checkpointId, channelIndex, next.overtaken);
              this.#barrierHandler.onBarrier(channelIndex, frame);
              recorder.dropStaged();
            } else this.#barrierHandler.onBarrier(channelIndex, frame);
          } else this.#forward(frame); // not checkpointing here: pass barriers through untouched
          break;
        case 'cancel-checkpoint':
          if (this.#barrierHandler) this.#barrierHandler.onCancelMarker(channelIndex, frame.checkpointId);
          else this.#forward(frame);
          break;
        case 'watermark':
          this.#advanceWatermark(valve.onWatermark(channelIndex, frame.timestamp, time.now()));
          break;
        case 'end-of-partition':
          this.#barrierHandler?.onEndOfPartition(channelIndex);
          this.#advanceWatermark(valve.onEnd(channelIndex));
          break;
        default:
          assertNever(frame, 'frame');
      }
      if (this.#anyBacklogged()) await this.#awaitCapacity();
      const now = performance.now();
      if (now - lastYield >= (this.#checkpointer.serializing ? SNAPSHOT_YIELD_EVERY_MS : YIELD_EVERY_MS)) {
        await yieldToEventLoop();
        lastYield = performance.now();
        lastTurn = lastYield;
        // Busy on the unblocked channels: the alignment timeout is checked at this pace too.
        this.#alignmentTimer();
      }
    }
  }

  /**
   * Whether an idle park may block the thread: nothing this task started is pending (a snapshot's
   * asynchronous part, an async operator's requests, a queued command), and the event loop holds
   * nothing but message ports — no user timer, socket or file request whose callback would wait
   * for the park. Control messages ring the doorbell (ringing-endpoint.ts). Cost: one
   * `process.getActiveResourcesInfo()` per idle park (a few µs; parks are per idle period).
   */
  #mayBlock(gate: TaskInputGate): boolean {
    if (gate.waitSync === undefined || gate.takeControl === undefined) return false;
    if (gate.mayParkBlocking === false) return false;
    if (this.#asyncOps.length > 0 || this.#checkpointer.hasAsyncParts || this.#commands.length > 0)
      return false;
    for (const resource of process.getActiveResourcesInfo()) if (resource !== 'MessagePort') return false;
    return true;
  }

  /**
   * Lets the barrier handler switch an alignment that timed out (checkpointing.alignmentTimeout).
   * True when it switched. Free when no alignment is in progress or no timeout is configured.
   */
  #alignmentTimer(): boolean {
    const h = this.#barrierHandler;
    let switched = false;
    if (h?.onAlignmentTimer && this.#msUntilAlignmentTimeout() <= 1) {
      const before = this.#latestTriggered;
      h.onAlignmentTimer();
      switched = this.#latestTriggered !== before;
    }
    return this.#pullBarriers() || switched;
  }

  /**
   * The alignment timeout out of band: barriers that a switched checkpoint still waits for, or
   * that have been on their way for the timeout, are pulled out of the input rings ahead of the
   * frames before them (those become channel state), instead of waiting until the task has read
   * its way to them (alignment-timeout-state.ts `barriersToPull`). At most one scan of the rings
   * per {@link PULL_SCAN_EVERY_MS}. True when a barrier was pulled (the next poll delivers it).
   */
  #pullBarriers(): boolean {
    const gate = this.#o.gate;
    const h = this.#barrierHandler;
    if (!gate?.pullBarrier || !h?.barriersToPull) return false;
    const now = performance.now();
    if (now - this.#lastPullScan < PULL_SCAN_EVERY_MS) return false;
    this.#lastPullScan = now;
    const pull = h.barriersToPull();
    if (pull === null) return false;
    let pulled = false;
    for (const c of pull.channels) if (gate.pullBarrier(c, pull.match)) pulled = true;
    return pulled;
  }

  /** Ms the loop may park before an alignment in progress times out (+1: the clock is in whole ms). */
  #msUntilAlignmentTimeout(): number {
    const ms = this.#barrierHandler?.msUntilAlignmentTimeout?.() ?? Infinity;
    return ms === Infinity ? Infinity : ms + 1;
  }

  async #endOfInput(): Promise<void> {
    // End of input is the end of event time: every event-time timer and window fires (Flink's
    // MAX_WATERMARK). A source chain passes it to its assigner, if any.
    this.#advanceWatermark(Infinity);
    for (const op of this.#o.chain.operators) {
      op.finish();
      // Every request must be answered (and its results pass the chain) before EndOfPartition
      // and the final checkpoint; what a finishing operator emits may start new requests.
      if (this.#asyncOps.length > 0) await this.#serveAsync('idle');
    }
    this.#inputEnded = true;
    for (const w of this.#o.outputs) w.writeControl({ kind: 'end-of-partition' });
    // Only backlogged writers are touched: once EndOfPartition is published, the consumer may
    // finish and close the channel, and a flush of a closed channel throws even when nothing is
    // left to publish.
    await this.#awaitCapacity(false);
  }

  /** Quiescent after end of input: serve the final checkpoint, exit once it completed. */
  async #awaitFinalCommit(): Promise<void> {
    this.#emit({ kind: 'input-ended' });
    await this.#serveCommandsUntil(
      () => this.#finalCheckpointId !== null && this.#lastCompleted >= this.#finalCheckpointId,
    );
  }

  /**
   * Waits for the operators' asynchronous work (a committing sink's last commits) while still
   * serving commands: a cancel or an asynchronous failure ends the wait.
   */
  async #settleOperators(): Promise<void> {
    const drains = this.#o.chain.operators.flatMap((op) => (op.settle ? [op.settle()] : []));
    if (drains.length === 0) return;
    let done = false;
    void Promise.all(drains).then(
      () => {
        done = true;
        this.#wakeup.wake();
      },
      // The failure also reached the loop as a 'fail' command, which serveCommandsUntil throws.
      () => this.#wakeup.wake(),
    );
    await this.#serveCommandsUntil(() => done);
  }

  /**
   * Quiescent wait: serves commands (a cancel or failure throws) until `done()` holds, parked in
   * between. Whatever makes `done()` true must wake the loop (a command does).
   */
  async #serveCommandsUntil(done: () => boolean): Promise<void> {
    for (;;) {
      this.#drainCommands();
      if (done()) return;
      this.#time.park('idle');
      await this.#wakeup.sleep(1000);
      this.#time.unpark();
    }
  }

  // ---------------------------------------------------------------- time

  /** Feeds an advanced input watermark (from the valve; `undefined`: no change) to the head. */
  #advanceWatermark(watermark: number | undefined): void {
    if (watermark === undefined || watermark <= this.#watermark) return;
    this.#watermark = watermark;
    this.#o.chain.head.processWatermark(watermark);
  }

  /** Calls `onProcessingTime` on the chain once a requested deadline passed. Free when none is pending. */
  #fireProcessingTime(): void {
    const time = this.#o.time;
    if (time.nextDeadline === Infinity) return;
    const now = time.now();
    if (now < time.nextDeadline) return;
    time.nextDeadline = Infinity;
    for (const op of this.#o.chain.operators) op.onProcessingTime(now);
  }

  /** How long the loop may park: until the next processing-time deadline or idleness check. */
  #msUntilDeadline(): number {
    const next = Math.min(this.#o.time.nextDeadline, this.#valve?.nextIdleCheck() ?? Infinity);
    if (next === Infinity) return Infinity;
    return Math.max(0, next - this.#o.time.now()) + 1;
  }

  // ---------------------------------------------------------------- async operators (mapAsync)

  /**
   * Emits what the chain's async operators have ready, then parks until `until` holds:
   * `'capacity'` — every async operator accepts input (the loop may feed the next frame);
   * `'idle'` — every async operator has emitted everything (end of input).
   * While parked the task serves commands (cancel, checkpoint triggers of a source task — the
   * snapshot holds the in-flight records, so a checkpoint never waits for a request), fires
   * processing-time timers and honours output backpressure. The thread never blocks: the park is
   * the Wakeup's promise, resolved by a settled request (or a command).
   */
  async #serveAsync(until: 'capacity' | 'idle'): Promise<void> {
    for (;;) {
      let done = true;
      for (const op of this.#asyncOps) {
        op.drain();
        if (until === 'capacity' ? !op.acceptsInput : !op.idle) done = false;
      }
      if (done) return;
      this.#flushOutputs();
      if (this.#anyBacklogged()) await this.#awaitCapacity();
      // Capped: a Wakeup timer of Infinity would fire at once (Node clamps it to 1 ms).
      else {
        // Waiting for requests in flight counts as idle: the thread has nothing to run.
        this.#time.park('idle');
        await this.#wakeup.sleep(Math.min(this.#msUntilDeadline(), ASYNC_PARK_MAX_MS));
        this.#time.unpark();
      }
      this.#drainCommands();
      this.#fireProcessingTime();
    }
  }

  // ---------------------------------------------------------------- commands

  #drainCommands(): void {
    while (this.#commands.length > 0) {
      const c = this.#commands.shift()!;
      switch (c.kind) {
        case 'cancel':
          this.#cancelled = true;
          throw new TaskCancelledError();
        case 'fail':
          throw c.error;
        case 'trigger':
          this.#onTrigger(c.checkpointId, c.timestamp, c.checkpointType, c.final);
          break;
        case 'complete':
          if (c.checkpointId > this.#lastCompleted) this.#lastCompleted = c.checkpointId;
          this.#checkpointer.notifyCheckpointComplete(c.checkpointId);
          break;
        case 'aborted':
          this.#checkpointer.notifyCheckpointAborted(c.checkpointId, c.rebase);
          break;
        default:
          assertNever(c, 'command');
      }
    }
  }

  #onTrigger(checkpointId: number, timestamp: number, checkpointType: CheckpointType, final: boolean): void {
    const barrier: CheckpointBarrier = {
      kind: 'barrier',
      checkpointId,
      timestamp,
      checkpointType,
      unaligned: this.#o.checkpointing?.unaligned ?? false,
    };
    if (this.#inputEnded) {
      // Every channel is drained: nothing to align, no one to forward a barrier to (FLIP-147:
      // the snapshot is the task's final state, and consumers count the ended channel as
      // aligned). Periodic checkpoints trigger ended tasks so, until the final one; only the
      // final one lets the task exit once it completes.
      if (checkpointId <= this.#checkpointer.latestCheckpointId) return; // taken (or aborted) through a barrier
      if (final) this.#finalCheckpointId = checkpointId;
      this.#checkpointer.checkpoint(barrier, NO_ALIGNMENT, false);
    } else if (this.#source) {
      // Positions and barrier in one synchronous step: no record falls between them.
      this.#checkpointer.checkpoint(barrier, NO_ALIGNMENT, true);
    } else {
      this.#checkpointer.decline(
        checkpointId,
        'declined',
        'a direct trigger reached a running non-source task',
      );
    }
  }

  // ---------------------------------------------------------------- barrier actions

  blockChannel(channelIndex: number): void {
    this.#o.gate!.block(channelIndex);
  }

  unblockChannel(channelIndex: number): void {
    this.#o.gate!.unblock(channelIndex);
  }

  triggerCheckpoint(barrier: CheckpointBarrier, metrics: AlignmentOutcome): void {
    this.#latestTriggered = barrier.checkpointId;
    this.#checkpointer.checkpointOnBarrier(barrier, metrics);
  }

  startChannelState(checkpointId: number, channels: readonly number[]): void {
    this.#checkpointer.startChannelState(checkpointId, channels);
  }

  stopChannelState(checkpointId: number, channelIndex: number): void {
    this.#checkpointer.stopChannelState(checkpointId, channelIndex);
  }

  finishChannelState(checkpointId: number): void {
    this.#checkpointer.finishChannelState(checkpointId);
  }

  abortCheckpoint(checkpointId: number, reason: CheckpointFailureReason, origin: AbortOrigin): void {
    this.#checkpointer.abortCheckpoint(checkpointId, reason, origin);
  }

  // ---------------------------------------------------------------- outputs

  #forward(frame: ControlFrame): void {
    // A switched checkpoint (alignment timeout) is unaligned from here on: its barrier overtakes too.
    if (
      frame.kind === 'barrier' &&
      frame.unaligned &&
      (this.#overtakes() || this.#o.checkpointing?.alignmentTimeout !== undefined)
    ) {
      for (const w of this.#o.outputs) {
        if (w.writeOvertakingBarrier) w.writeOvertakingBarrier(frame);
        else w.writeControl(frame);
      }
      return;
    }
    for (const w of this.#o.outputs) w.writeControl(frame);
  }

  #flushOutputs(): void {
    for (const w of this.#o.outputs) w.flush();
  }

  #anyBacklogged(): boolean {
    for (const w of this.#o.outputs) if (w.backlogged) return true;
    return false;
  }

  /**
   * Waits until no output is backlogged, still serving cancel and failures (the other commands
   * wait for the loop). `serveTriggers` (while input runs): an unaligned source also takes its
   * checkpoints, since its barrier overtakes the full rings.
   */
  async #awaitCapacity(serveTriggers = true): Promise<void> {
    // A consumer of another output may sleep on frames left unrung (wakeDelayMs): wake it before
    // this task sleeps too, or it could wait for a publish that waits for it.
    for (const w of this.#o.outputs) w.ringDeferred?.();
    for (const w of this.#o.outputs) {
      while (w.backlogged) {
        this.#drainCommandsWhileBlocked();
        if (serveTriggers && this.#source && this.#overtakes()) this.#triggerWhileBlocked();
        this.#time.park('backpressured');
        try {
          await w.waitForCapacity();
        } finally {
          this.#time.unpark();
        }
      }
    }
  }

  /** Serves the queued checkpoint triggers (only those: the others wait for the loop). */
  #triggerWhileBlocked(): void {
    if (!this.#commands.some((c) => c.kind === 'trigger')) return;
    const rest: Command[] = [];
    for (const c of this.#commands.splice(0)) {
      if (c.kind === 'trigger') this.#onTrigger(c.checkpointId, c.timestamp, c.checkpointType, c.final);
      else rest.push(c);
    }
    this.#commands.push(...rest);
  }

  /** While blocked on backpressure only cancel is served; other commands wait for the loop. */
  #drainCommandsWhileBlocked(): void {
    if (this.#commands.some((c) => c.kind === 'cancel')) {
      this.#cancelled = true;
      throw new TaskCancelledError();
    }
    const failure = this.#commands.find((c) => c.kind === 'fail');
    if (failure) throw failure.error;
  }

  get cancelled(): boolean {
    return this.#cancelled;
  }
}

/** Lets queued MessagePort messages (control calls) run. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Returns after at least one poll phase of the event loop, whichever phase it is called from:
 * an immediate set during the check phase runs in the next iteration, so the second of two
 * always comes after a poll phase (which delivers messages posted before the call).
 */
async function passEventLoop(): Promise<void> {
  await yieldToEventLoop();
  await yieldToEventLoop();
}

/**
 * Pushes one batch of records into the chain's head: the task's only per-record loop, shared by
 * the input frames and the replayed channel state. Per record: one call, plus the envelope's
 * timestamp on an event-time edge. Key groups come with records from a hash partitioner (keyed
 * heads use them: no rehash).
 */
function pushRecords(
  head: StreamOperator,
  time: TaskTime,
  records: readonly unknown[],
  input: 0 | 1,
  timestamped: boolean,
  keyGroups: Uint16Array | undefined,
): void {
  if (timestamped) {
    for (let i = 0; i < records.length; i++) {
      const envelope = records[i] as [number | null, unknown];
      time.timestamp = envelope[0] ?? undefined;
      head.processElement(envelope[1], input, keyGroups === undefined ? -1 : keyGroups[i]);
    }
    return;
  }
  time.timestamp = undefined;
  if (keyGroups === undefined) {
    for (let i = 0; i < records.length; i++) head.processElement(records[i], input);
  } else {
    for (let i = 0; i < records.length; i++) head.processElement(records[i], input, keyGroups[i]);
  }
}
