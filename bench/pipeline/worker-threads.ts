/**
 * Baseline: `worker_threads` + `postMessage`, the way a competent Node developer would
 * parallelise the pipeline without a framework:
 *
 *   S source workers (sequence split → map → filter, chained)  ──hash(key) % C──►  C sum workers
 *
 * One MessageChannel per (source, sum worker) pair, so records never pass through the main
 * thread. Records travel as structured-cloned arrays of `batchSize` (256) plain objects, and
 * a credit scheme (`maxInFlight` batches per channel, acks every `ackEvery` batches) gives
 * backpressure, so memory stays bounded. `parallelism: p` means p sources and p sum workers
 * (the shape a Flink-style runtime deploys at parallelism p).
 *
 * Timed: from posting `start` to the sources until every sum worker has reported its digest.
 * Not timed (reported as `setupMs`): spawning the workers and loading their modules through tsx;
 * a fresh set of workers per run, so each run also pays its own JIT warm-up inside the clock.
 */

import { MessageChannel, Worker } from 'node:worker_threads';
import type { PipelineCase, PipelineResult } from './pipeline-case.js';
import type { Workload } from './pipeline-spec.js';
import { checksumOf, mergeDigests, type SumDigest } from './sum-digest.js';
import type {
  FromWorkerControl,
  SourceWorkerData,
  SumWorkerData,
  ToSourceControl,
} from './workers/messages.js';

export interface WorkerThreadsOptions {
  readonly name?: string;
  /** Source workers (default: `parallelism`). */
  readonly sources?: number;
  /** Sum workers (default: `parallelism`). */
  readonly consumers?: number;
  readonly parallelism?: number;
  /** Records per postMessage (default 256). */
  readonly batchSize?: number;
  /** Unacknowledged batches allowed per channel (default 16). */
  readonly maxInFlight?: number;
  /** The sum worker acks after this many batches (default 4; must be ≤ maxInFlight). */
  readonly ackEvery?: number;
  /** The sources' `map` (default `cheap`). */
  readonly workload?: Workload;
}

const SHIM = new URL('./workers/load-ts.mjs', import.meta.url);
const SOURCE_ENTRY = new URL('./workers/source-worker.ts', import.meta.url).href;
const SUM_ENTRY = new URL('./workers/sum-worker.ts', import.meta.url).href;

/** A spawned pipeline worker and promises for its control messages. */
interface Started {
  readonly worker: Worker;
  /** Resolves on the worker's `ready`. */
  readonly ready: Promise<void>;
  /** Resolves with a sum worker's digest (never resolves for a source). */
  readonly digest: Promise<SumDigest>;
}

function start(
  workerData: SourceWorkerData | SumWorkerData,
  failed: (err: Error) => void,
  stopping: () => boolean,
): Started {
  const worker = new Worker(SHIM, { workerData, transferList: [...workerData.ports] });
  let onReady!: () => void;
  let onDigest!: (digest: SumDigest) => void;
  /** A sum worker may exit on its own once it has reported (its ports are closed by then). */
  let reported = false;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const digest = new Promise<SumDigest>((resolve) => (onDigest = resolve));
  worker.on('message', (message: FromWorkerControl) => {
    if (message.kind === 'ready') onReady();
    else {
      reported = true;
      onDigest(message.digest);
    }
  });
  worker.on('error', failed);
  worker.on('exit', (code) => {
    if (!reported && !stopping()) failed(new Error(`pipeline worker exited early with code ${code}`));
  });
  return { worker, ready, digest };
}

/** Split of [0, n) for source `index` of `count`: contiguous, sizes differ by at most one. */
function split(n: number, count: number, index: number): { from: number; to: number } {
  return { from: Math.floor((index * n) / count), to: Math.floor(((index + 1) * n) / count) };
}

export function workerThreadsCase(options: WorkerThreadsOptions = {}): PipelineCase {
  const p = options.parallelism ?? 1;
  const sources = options.sources ?? p;
  const consumers = options.consumers ?? p;
  const batchSize = options.batchSize ?? 256;
  const maxInFlight = options.maxInFlight ?? 16;
  const ackEvery = options.ackEvery ?? 4;
  if (ackEvery > maxInFlight)
    throw new RangeError(`ackEvery (${ackEvery}) must be ≤ maxInFlight (${maxInFlight})`);
  return {
    name: options.name ?? `worker_threads postMessage ${sources}→${consumers}`,
    async run(n): Promise<PipelineResult> {
      const setupStart = performance.now();
      // Rejected by the first worker error or early exit; raced against every wait below, which
      // also marks it handled (a rejection after the run settled is then ignored, not unhandled).
      let fail!: (err: Error) => void;
      const failure = new Promise<never>((_, reject) => (fail = reject));
      let stopping = false;
      const isStopping = (): boolean => stopping;
      // channels[s][c] connects source s to sum worker c.
      const channels = Array.from({ length: sources }, () =>
        Array.from({ length: consumers }, () => new MessageChannel()),
      );
      const sums = Array.from({ length: consumers }, (_, c) =>
        start({ entry: SUM_ENTRY, ackEvery, ports: channels.map((row) => row[c].port2) }, fail, isStopping),
      );
      const feeds = Array.from({ length: sources }, (_, s) =>
        start(
          {
            entry: SOURCE_ENTRY,
            ...split(n, sources, s),
            batchSize,
            workload: options.workload ?? 'cheap',
            maxInFlight,
            ports: channels[s].map((ch) => ch.port1),
          },
          fail,
          isStopping,
        ),
      );
      const all = [...sums, ...feeds];
      try {
        await Promise.race([Promise.all(all.map((w) => w.ready)), failure]);
        const clock = performance.now();
        const setupMs = clock - setupStart;
        for (const feed of feeds) feed.worker.postMessage({ kind: 'start' } satisfies ToSourceControl);
        const digests = await Promise.race([Promise.all(sums.map((w) => w.digest)), failure]);
        const ms = performance.now() - clock;
        return { records: n, ms, setupMs, checksum: checksumOf(mergeDigests(digests)) };
      } finally {
        stopping = true;
        await Promise.all(all.map((w) => w.worker.terminate()));
      }
    },
  };
}
