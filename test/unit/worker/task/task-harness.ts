/**
 * A StreamTask on fakes, in the test's own thread: a scripted input gate, outputs whose
 * backpressure the test switches, operators that log what they receive and hand out keyed
 * snapshots counting their releases, and a storage whose writes the test can fail. No worker
 * thread, no ring, no clock: every wait synchronises on an event (a task event posted, a frame
 * consumed, an output wait entered).
 */
import type { MessagePort } from 'node:worker_threads';
import type { ControlFrame, Frame } from '../../../../src/channels/frame.js';
import type { TaskCheckpointConfig, TaskEvent } from '../../../../src/protocol/task-deployment.js';
import type { KeyedStateSnapshot } from '../../../../src/state/keyed-state-backend.js';
import type { ChunkHandle } from '../../../../src/state/storage/chunk-handle.js';
import { createBarrierHandler } from '../../../../src/worker/barrier/create-barrier-handler.js';
import { ChannelStateRecorder } from '../../../../src/worker/channel-state/channel-state-recorder.js';
import type { ReplayBatch } from '../../../../src/worker/channel-state/channel-state-replay.js';
import type { OperatorChain } from '../../../../src/worker/operator-chain.js';
import type {
  OperatorSnapshot,
  StreamOperator,
  WatermarkOutput,
} from '../../../../src/worker/operators/stream-operator.js';
import type { KeyedChunk, TaskSnapshotStorage } from '../../../../src/worker/snapshot-storage.js';
import { StreamTask } from '../../../../src/worker/stream-task.js';
import type { TaskInputGate, TaskOutputChannel } from '../../../../src/worker/task-endpoints.js';
import { TaskTime } from '../../../../src/worker/timers/task-time.js';

/** A promise with its resolver, for events the test waits on. */
function signal<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Input channels as scripted frame queues. `allEnded` once every channel's end was polled. */
export class FakeGate implements TaskInputGate {
  readonly #queues: Frame[][];
  readonly #blocked: boolean[];
  readonly #ended: boolean[];
  #waiter: (() => void) | null = null;
  #next = 0;
  closed = false;

  constructor(channels: number) {
    this.#queues = Array.from({ length: channels }, () => []);
    this.#blocked = new Array(channels).fill(false);
    this.#ended = new Array(channels).fill(false);
  }

  push(channelIndex: number, ...frames: Frame[]): void {
    this.#queues[channelIndex].push(...frames);
    this.wake();
  }

  /** Frames not yet polled on `channelIndex`. */
  pending(channelIndex: number): number {
    return this.#queues[channelIndex].length;
  }

  pollNext() {
    const n = this.#queues.length;
    for (let k = 0; k < n; k++) {
      const channelIndex = (this.#next + k) % n;
      if (this.#blocked[channelIndex] || this.#queues[channelIndex].length === 0) continue;
      const frame = this.#queues[channelIndex].shift()!;
      if (frame.kind === 'end-of-partition') this.#ended[channelIndex] = true;
      this.#next = (channelIndex + 1) % n;
      return { channelIndex, frame };
    }
    return null;
  }

  block(channelIndex: number): void {
    this.#blocked[channelIndex] = true;
  }

  unblock(channelIndex: number): void {
    this.#blocked[channelIndex] = false;
  }

  get allEnded(): boolean {
    return this.#ended.every(Boolean);
  }

  /** Parks until a frame is pushed or `wake()`; the timeout is ignored (nothing here is timed). */
  waitAsync(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  wake(): void {
    const w = this.#waiter;
    this.#waiter = null;
    w?.();
  }

  close(): void {
    this.closed = true;
  }
}

/** An output that records control frames; backpressure is switched by the test. */
export class FakeOutput implements TaskOutputChannel {
  readonly control: ControlFrame[] = [];
  backlogged = false;
  #capacity: (() => void) | null = null;
  #waiting = signal();
  /** Resolves once the task waits for capacity on this output. */
  get waiting(): Promise<void> {
    return this.#waiting.promise;
  }

  #controlWaiters: (() => void)[] = [];

  writeControl(frame: ControlFrame): void {
    this.control.push(frame);
    const ws = this.#controlWaiters;
    this.#controlWaiters = [];
    for (const w of ws) w();
  }

  /** Resolves once a control frame matching `pred` was written. */
  async written(pred: (frame: ControlFrame) => boolean): Promise<ControlFrame> {
    for (;;) {
      const found = this.control.find(pred);
      if (found) return found;
      await new Promise<void>((r) => this.#controlWaiters.push(r));
    }
  }

  flush(): boolean {
    return !this.backlogged;
  }

  waitForCapacity(): Promise<void> {
    return new Promise((resolve) => {
      this.#capacity = resolve;
      this.#waiting.resolve();
    });
  }

  interruptWait(): void {
    const c = this.#capacity;
    this.#capacity = null;
    c?.();
  }

  /** Backpressure ends. */
  release(): void {
    this.backlogged = false;
    this.interruptWait();
  }

  close(): void {}
}

/** A keyed snapshot that counts its releases; `serialize` fails when told. */
export class FakeKeyedSnapshot {
  releases = 0;
  constructor(
    readonly checkpointId: number,
    readonly uid: string,
    readonly failSerialize: boolean,
  ) {}
  readonly sharedChunks = [];
  async serialize(): Promise<KeyedChunk[]> {
    if (this.failSerialize) throw new Error(`serializing ${this.uid} failed`);
    return [{ name: `kg-${this.uid}`, bytes: new Uint8Array([1, 2, 3]) }];
  }
  async *serializeChunks(): AsyncGenerator<KeyedChunk, void, undefined> {
    yield* await this.serialize();
  }
  persisted(): void {}
  release(): void {
    this.releases++;
  }
}

/** An operator that logs records (with the task time's timestamp), hands out keyed snapshots. */
export class FakeOperator implements StreamOperator {
  readonly nodeId: number;
  readonly name: string;
  recordsIn = 0;
  watermarkOutput: WatermarkOutput = { emitWatermark() {} };
  readonly received: {
    value: unknown;
    input: 0 | 1;
    keyGroup: number | undefined;
    timestamp: number | undefined;
  }[] = [];
  readonly snapshots: FakeKeyedSnapshot[] = [];
  readonly completed: number[] = [];
  readonly aborted: number[] = [];
  finished = false;
  closed = false;
  /** Its next snapshot's serialize fails (set by the test before a checkpoint). */
  failSerialize = false;
  /** The chained operator it emits every record to (null: the last of the chain). */
  next: FakeOperator | null = null;
  /** Called after each record (the test switches backpressure from here). */
  onRecord: (() => void) | null = null;

  constructor(
    readonly uid: string,
    nodeId: number,
    readonly time: TaskTime,
  ) {
    this.nodeId = nodeId;
    this.name = uid;
  }

  open(): void {}
  processElement(value: unknown, input: 0 | 1, keyGroup?: number): void {
    this.recordsIn++;
    this.received.push({ value, input, keyGroup, timestamp: this.time.timestamp });
    this.onRecord?.();
    this.next?.processElement(value, 0);
  }
  processWatermark(): void {}
  onProcessingTime(): void {}
  finish(): void {
    this.finished = true;
  }
  snapshotState(checkpointId: number): OperatorSnapshot {
    const keyed = new FakeKeyedSnapshot(checkpointId, this.uid, this.failSerialize);
    this.snapshots.push(keyed);
    return { operatorState: [this.recordsIn], keyedState: keyed as unknown as KeyedStateSnapshot };
  }
  notifyCheckpointComplete(checkpointId: number): void {
    this.completed.push(checkpointId);
  }
  notifyCheckpointAborted(checkpointId: number): void {
    this.aborted.push(checkpointId);
  }
  close(): void {
    this.closed = true;
  }
  counters(): undefined {
    return undefined;
  }
}

/** Storage that keeps what it was given; a write for a uid in `failFor` rejects. */
export class FakeStorage implements TaskSnapshotStorage {
  readonly writes: {
    checkpointId: number;
    uid: string;
    operatorState: readonly unknown[];
    chunks: string[];
  }[] = [];
  readonly failFor = new Set<string>();
  async writeKeyedChunks(
    checkpointId: number,
    uid: string,
    keyedChunks: readonly KeyedChunk[],
  ): Promise<{ handles: ChunkHandle[]; bytes: number }> {
    const { handles, bytes } = await this.writeOperatorChunks(checkpointId, uid, [], keyedChunks);
    return { handles, bytes };
  }
  async writeOperatorChunks(
    checkpointId: number,
    uid: string,
    operatorState: readonly unknown[],
    keyedChunks: readonly KeyedChunk[],
  ): Promise<{ handles: ChunkHandle[]; keyedHandles: ChunkHandle[]; bytes: number }> {
    if (this.failFor.has(uid)) throw new Error(`disk full writing ${uid}`);
    this.writes.push({ checkpointId, uid, operatorState, chunks: keyedChunks.map((c) => c.name) });
    const handles: ChunkHandle[] = keyedChunks.map((c) => ({
      chunkId: `${checkpointId}-${uid}-${c.name}`,
      checkpointId,
      name: c.name,
      size: c.bytes.byteLength,
      checksum: 'fake',
    }));
    return { handles, keyedHandles: handles, bytes: handles.reduce((n, h) => n + h.size, 0) };
  }
  readChunk(): Uint8Array {
    throw new Error('nothing to read');
  }
  async close(): Promise<void> {}
}

export interface HarnessOptions {
  /** Operator uids, head first. Default: one operator. */
  readonly operators?: readonly string[];
  readonly channels?: number;
  readonly outputs?: number;
  /** Per channel: `[timestamp, value]` envelopes. */
  readonly timestampedChannels?: readonly boolean[];
  readonly replay?: readonly ReplayBatch[];
  /** Default: exactly-once, aligned. Null: no checkpointing. */
  readonly checkpointing?: TaskCheckpointConfig | null;
}

/** Exactly-once with unaligned checkpoints: the task records channel state (one recorder). */
export const UNALIGNED: TaskCheckpointConfig = {
  mode: 'exactly-once',
  dir: '/nonexistent',
  incremental: false,
  stateBackend: 'heap',
  unaligned: true,
};

export const EXACTLY_ONCE: TaskCheckpointConfig = {
  mode: 'exactly-once',
  dir: '/nonexistent',
  incremental: false,
  stateBackend: 'heap',
};

/** Builds a gate task on fakes; `until(pred)` resolves with the first task event matching `pred`. */
export function taskHarness(options: HarnessOptions = {}) {
  const time = new TaskTime();
  const uids = options.operators ?? ['head'];
  const operators = uids.map((uid, i) => new FakeOperator(uid, i + 1, time));
  for (let i = 1; i < operators.length; i++) operators[i - 1].next = operators[i];
  const chain = {
    head: operators[0],
    operators,
    outputs: operators.map(() => ({ count: 0 })),
    asyncOperators: [],
  } as unknown as OperatorChain;
  const channels = options.channels ?? 1;
  const gate = new FakeGate(channels);
  const outputs = Array.from({ length: options.outputs ?? 1 }, () => new FakeOutput());
  const storage = new FakeStorage();
  const events: TaskEvent[] = [];
  let waiters: (() => void)[] = [];
  const eventPort = {
    postMessage(e: TaskEvent) {
      events.push(e);
      const ws = waiters;
      waiters = [];
      for (const w of ws) w();
    },
  } as unknown as MessagePort;
  const checkpointing = options.checkpointing === undefined ? EXACTLY_ONCE : options.checkpointing;
  const channelState = checkpointing?.unaligned
    ? new ChannelStateRecorder(
        Array.from({ length: channels }, (_, i) => ({
          edgeId: 1,
          producerSubtask: i,
          inputIndex: 0 as const,
        })),
      )
    : null;
  const task = new StreamTask({
    name: 'fake (1/1)',
    chain,
    gate,
    inputIndexOf: new Array(channels).fill(0),
    timestampedChannels: options.timestampedChannels,
    time,
    outputs,
    checkpointing,
    createBarrierHandler: checkpointing
      ? (actions) =>
          createBarrierHandler(checkpointing.mode, {
            channelCount: channels,
            actions,
            clock: Date,
            unaligned: checkpointing.unaligned,
          })
      : null,
    storage,
    eventPort,
    replay: options.replay,
    channelState,
  });
  const until = async (pred: (e: TaskEvent) => boolean): Promise<TaskEvent> => {
    for (;;) {
      const found = events.find(pred);
      if (found) return found;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { task, gate, outputs, operators, storage, events, until, time };
}

export const records = (values: unknown[], keyGroups?: number[]): Frame => ({
  kind: 'records',
  records: values,
  ...(keyGroups ? { keyGroups: Uint16Array.from(keyGroups) } : {}),
});

export const barrier = (checkpointId: number, unaligned = false): Frame => ({
  kind: 'barrier',
  checkpointId,
  timestamp: 0,
  checkpointType: 'checkpoint',
  unaligned,
});

export const END: Frame = { kind: 'end-of-partition' };

export const kindOf = (kind: TaskEvent['kind'], checkpointId?: number) => (e: TaskEvent) =>
  e.kind === kind && (checkpointId === undefined || ('checkpointId' in e && e.checkpointId === checkpointId));
