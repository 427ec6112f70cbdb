/**
 * A checkpoint's asynchronous part writes keyed chunks while later key groups are still being
 * serialized (issue 14): storage sees chunks before the snapshot is fully encoded, and the bytes
 * encoded but not yet durable stay under batch + in-flight bound + one chunk, instead of the
 * whole snapshot. The written chunks, in handle order, restore the state at the barrier, for
 * each backend.
 */

import { afterEach, describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../../src/protocol/task-deployment.js';
import type { KeyedStateBackend, KeyedStateSnapshot } from '../../../../src/state/keyed-state-backend.js';
import type { ChunkHandle } from '../../../../src/state/storage/chunk-handle.js';
import type { OperatorSnapshot, StreamOperator } from '../../../../src/worker/operators/stream-operator.js';
import type { KeyedChunk, TaskSnapshotStorage } from '../../../../src/worker/snapshot-storage.js';
import { SubtaskCheckpointer } from '../../../../src/worker/subtask-checkpointer.js';
import { closeBackends, syncBackendFactories } from '../../state/backend-factories.js';

afterEach(closeBackends);

const MAX_PARALLELISM = 128;
const KEYS = 4000;
const BATCH = 8 * 1024;
const IN_FLIGHT = 16 * 1024;

/** Counts the bytes the snapshot has produced; storage counts what became durable. */
class Meter {
  produced = 0;
  producedChunks = 0;
  durable = 0;
  maxHeld = 0;
  maxChunk = 0;
  /** Chunks produced when storage was first handed keyed chunks (-1: never). */
  producedAtFirstWrite = -1;
  note(): void {
    this.maxHeld = Math.max(this.maxHeld, this.produced - this.durable);
  }
}

/** The real snapshot, with its stream metered. */
function metered(snap: KeyedStateSnapshot, meter: Meter): KeyedStateSnapshot {
  return {
    checkpointId: snap.checkpointId,
    timestamp: snap.timestamp,
    baseCheckpointId: snap.baseCheckpointId,
    mode: snap.mode,
    sharedChunks: snap.sharedChunks,
    persisted: (h) => snap.persisted(h),
    encode: (m, o) => snap.encode(m, o),
    release: () => snap.release(),
    serialize: async () => {
      const all = [];
      for await (const c of metered(snap, meter).serializeChunks()) all.push(c);
      return all;
    },
    async *serializeChunks() {
      for await (const c of snap.serializeChunks()) {
        meter.produced += c.bytes.byteLength;
        meter.producedChunks++;
        meter.maxChunk = Math.max(meter.maxChunk, c.bytes.byteLength);
        meter.note();
        yield c;
      }
    },
  };
}

/** Storage that keeps every chunk and makes each write durable a few event-loop turns later. */
class SlowStorage implements TaskSnapshotStorage {
  readonly stored = new Map<string, KeyedChunk>();
  #next = 0;
  constructor(readonly meter: Meter) {}
  async writeKeyedChunks(checkpointId: number, _uid: string, chunks: readonly KeyedChunk[]) {
    return this.#write(checkpointId, chunks);
  }
  async writeOperatorChunks(
    checkpointId: number,
    _uid: string,
    _operatorState: readonly unknown[],
    chunks: readonly KeyedChunk[],
  ) {
    const { handles, bytes } = await this.#write(checkpointId, chunks);
    return { handles, keyedHandles: handles, bytes };
  }
  async #write(checkpointId: number, chunks: readonly KeyedChunk[]) {
    if (chunks.length > 0 && this.meter.producedAtFirstWrite < 0)
      this.meter.producedAtFirstWrite = this.meter.producedChunks;
    const handles: ChunkHandle[] = chunks.map((c) => {
      const chunkId = `c${this.#next++}`;
      this.stored.set(chunkId, c);
      return {
        chunkId,
        checkpointId,
        name: c.name,
        size: c.bytes.byteLength,
        checksum: 'x',
        keyGroup: c.keyGroup,
      };
    });
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    let bytes = 0;
    for (const c of chunks) bytes += c.bytes.byteLength;
    this.meter.durable += bytes;
    return { handles, bytes };
  }
  readChunk(): Uint8Array {
    throw new Error('not used');
  }
  async close(): Promise<void> {}
}

function operatorWith(keyed: KeyedStateSnapshot): StreamOperator {
  return {
    uid: 'sum',
    snapshotState: (): OperatorSnapshot => ({ operatorState: [], keyedState: keyed }),
    notifyCheckpointComplete() {},
    notifyCheckpointAborted() {},
  } as unknown as StreamOperator;
}

describe.each(Object.entries(syncBackendFactories))(
  'keyed chunks written ahead (%s backend)',
  (_name, make) => {
    it('writes chunks while serializing, holds a bounded part of them, and the chunks restore the barrier state', async () => {
      const range = { start: 0, end: MAX_PARALLELISM - 1 };
      const backend = make({ maxParallelism: MAX_PARALLELISM, keyGroupRange: range }) as KeyedStateBackend;
      const expected = new Map<string, string>();
      for (let k = 0; k < KEYS; k++) {
        backend.setCurrentKey(`key-${k}`);
        const v = `value ${k} `.repeat(4);
        backend.value<string>('v').update(v);
        expected.set(`key-${k}`, v);
      }
      const meter = new Meter();
      const storage = new SlowStorage(meter);
      const events: TaskEvent[] = [];
      const snapshot = metered(backend.snapshot(1), meter);
      const checkpointer = new SubtaskCheckpointer({
        name: 'sum#0',
        operators: [operatorWith(snapshot)],
        rebaseKeyedState() {},
        storage,
        unaligned: false,
        channelState: null,
        forward() {},
        emit: (e) => events.push(e),
        fail: (e) => {
          throw e;
        },
        keyedWriteBatchBytes: BATCH,
        keyedWriteInFlightBytes: IN_FLIGHT,
      });
      const barrier = { kind: 'barrier', checkpointId: 1, timestamp: Date.now() } as never;
      checkpointer.checkpoint(barrier, { alignmentDurationMs: 0 }, false);
      // Writes after the barrier: the checkpoint must still hold the barrier's values.
      for (let k = 0; k < KEYS; k += 7) {
        backend.setCurrentKey(`key-${k}`);
        backend.value<string>('v').update('after the barrier');
      }
      await checkpointer.waitForAsyncParts();

      const ack = events.find((e) => e.kind === 'acknowledge');
      expect(ack, JSON.stringify(events)).toBeDefined();
      expect(meter.produced).toBeGreaterThan(8 * (BATCH + IN_FLIGHT));
      // Storage got keyed chunks long before the last one was encoded...
      expect(meter.producedAtFirstWrite).toBeGreaterThan(0);
      expect(meter.producedAtFirstWrite).toBeLessThan(meter.producedChunks / 4);
      // ...and the task never held more than a batch, the in-flight bound and one chunk.
      expect(meter.maxHeld).toBeLessThanOrEqual(BATCH + IN_FLIGHT + meter.maxChunk);

      const handles = (ack as Extract<TaskEvent, { kind: 'acknowledge' }>).state.operators[0].chunks;
      const groups = handles.map((h) => h.keyGroup!);
      expect(groups).toEqual([...groups].sort((a, b) => a - b));
      expect(new Set(groups).size).toBe(groups.length);

      const restored = make({ maxParallelism: MAX_PARALLELISM, keyGroupRange: range }) as KeyedStateBackend;
      restored.restore(
        handles.map((h) => ({ keyGroup: h.keyGroup!, bytes: storage.stored.get(h.chunkId)!.bytes })),
      );
      for (const [key, v] of expected) {
        restored.setCurrentKey(key);
        expect(restored.value<string>('v').value()).toBe(v);
      }
    });
  },
);
