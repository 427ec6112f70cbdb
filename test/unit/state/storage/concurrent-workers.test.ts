import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointStorage, type ChunkHandle } from '../../../../src/state/storage/index.js';
import { chunkSeed, chunkSize } from './fixtures/chunk-plan.js';
import { metadataFor, seededBytes, subtask, tempDir } from './helpers.js';

type Message =
  | { kind: 'ack'; checkpointId: number; subtaskIndex: number; handles: ChunkHandle[] }
  | { kind: 'ready'; subtaskIndex: number }
  | { kind: 'closed'; subtaskIndex: number };

const WORKERS = 2;
const CHECKPOINTS = 8;
const CHUNKS = 16;

describe('two worker threads and the coordinator on one directory', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('workers write concurrently while the main thread commits; everything verifies afterwards', async () => {
    const t = tempDir('workers');
    cleanups.push(t.remove);
    const coordinator = CheckpointStorage.open(t.dir);
    cleanups.push(() => coordinator.close());

    // gate[0]: go flag (main → workers, once both opened their handle and said 'ready');
    // gate[2]: checkpoint 1 committed (main → worker 0, which waits for it before writing round 2).
    const gate = new SharedArrayBuffer(12);
    const flags = new Int32Array(gate);
    const acks = new Map<number, Map<number, ChunkHandle[]>>();
    const commits: Promise<unknown>[] = [];
    let closedWorkers = 0;
    let readyWorkers = 0;
    let allReady!: () => void;
    const ready = new Promise<void>((resolve) => (allReady = resolve));
    let committedBeforeWorkersClosed = 0;

    const workers = Array.from({ length: WORKERS }, (_, subtaskIndex) => {
      const worker = new Worker(new URL('./fixtures/chunk-writer-worker.mjs', import.meta.url), {
        workerData: { dir: t.dir, subtaskIndex, checkpoints: CHECKPOINTS, chunksPerCheckpoint: CHUNKS, gate },
      });
      cleanups.push(() => worker.terminate());
      return worker;
    });
    const finished = Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            worker.on('error', reject);
            worker.on('exit', (code) =>
              code === 0 ? resolve() : reject(new Error(`worker exited with ${code}`)),
            );
            worker.on('message', (message: Message) => {
              if (message.kind === 'ready') {
                if (++readyWorkers === WORKERS) allReady();
                return;
              }
              if (message.kind === 'closed') {
                closedWorkers++;
                return;
              }
              const forId = acks.get(message.checkpointId) ?? new Map<number, ChunkHandle[]>();
              acks.set(message.checkpointId, forId);
              forId.set(message.subtaskIndex, message.handles);
              if (forId.size < WORKERS) return;
              const subtasks = [...forId].map(([index, handles]) => subtask('writer', index, handles));
              commits.push(
                coordinator.commitCheckpoint(metadataFor(message.checkpointId, subtasks)).then((outcome) => {
                  expect(outcome.state).toBe('committed');
                  if (closedWorkers < WORKERS) committedBeforeWorkersClosed++;
                  if (message.checkpointId === 1) {
                    Atomics.store(flags, 2, 1);
                    Atomics.notify(flags, 2);
                  }
                }),
              );
            });
          }),
      ),
    );

    // Release both workers at once, after both opened their handles.
    await ready;
    Atomics.store(flags, 0, 1);
    Atomics.notify(flags, 0);
    await finished;
    await Promise.all(commits);

    // Deterministic (worker 0 waited for it): at least checkpoint 1 committed mid-run.
    expect(committedBeforeWorkersClosed).toBeGreaterThan(0);
    // The workers closed their handles; the coordinator's handle in this thread still works.
    expect(coordinator.listCompleted()).toEqual(Array.from({ length: CHECKPOINTS }, (_, i) => i + 1));
    expect(coordinator.nextCheckpointId()).toBe(CHECKPOINTS + 1);
    for (let checkpointId = 1; checkpointId <= CHECKPOINTS; checkpointId++) {
      expect(coordinator.verifyCheckpoint(checkpointId).state).toBe('ok');
      const metadata = coordinator.loadMetadata(checkpointId)!;
      for (const { subtaskIndex, chunks } of metadata.subtasks) {
        chunks.forEach((handle, i) => {
          const expected = seededBytes(
            chunkSeed(checkpointId, subtaskIndex, i),
            chunkSize(checkpointId, subtaskIndex, i),
          );
          expect(Buffer.from(coordinator.readChunk(handle)).equals(Buffer.from(expected))).toBe(true);
        });
      }
    }
  });
});
