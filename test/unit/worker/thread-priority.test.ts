/**
 * A job's worker threads lower their own CPU priority and only theirs: the main thread (the
 * embedding service's) keeps its nice value (Linux keeps one per thread).
 */

import { once } from 'node:events';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { lowerWorkerThreadPriority } from '../../../src/worker/thread-priority.js';

async function niceOfWorkerAfter(nice: number): Promise<number> {
  const worker = new Worker(new URL('./fixtures/nice-thread.mjs', import.meta.url), { workerData: nice });
  try {
    const [value] = (await once(worker, 'message')) as [number];
    return value;
  } finally {
    await worker.terminate();
  }
}

describe.runIf(process.platform === 'linux')('lowerWorkerThreadPriority', () => {
  it('lowers a worker thread’s priority by that many levels and leaves the main thread’s alone', async () => {
    const before = getPriority(0);
    expect(await niceOfWorkerAfter(5)).toBe(Math.min(19, before + 5));
    expect(getPriority(0)).toBe(before);
  });

  it('lowers it at most to 19', async () => {
    expect(await niceOfWorkerAfter(30)).toBe(19);
  });

  it('does nothing on the main thread', () => {
    const before = getPriority(0);
    lowerWorkerThreadPriority(5);
    expect(getPriority(0)).toBe(before);
  });

  it('with 0, leaves a worker thread at the priority it started with', async () => {
    expect(await niceOfWorkerAfter(0)).toBe(getPriority(0));
  });
});
