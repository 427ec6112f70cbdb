/**
 * Baseline: `node:stream` in object mode, the way a Node developer would compose it — a Readable
 * source and one Transform per step, joined by `stream/promises.pipeline`:
 *
 *   Readable(sequence) → Transform(map) → Transform(filter) → Transform(keyed sum) → Writable(LastSumSink)
 *
 * Chunks are batches of `batchSize` records (default 256), because per-record chunks would
 * measure stream bookkeeping (~1 µs per chunk per stage) rather than the pipeline. The default
 * object-mode highWaterMark (16 chunks) bounds memory per stage. Everything runs on the main
 * thread: this is the "no threads, but a real streaming abstraction" reference that the runner
 * reports ratios against.
 */

import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PipelineCase } from './pipeline-case.js';
import { type KeyedRecord, type KeyedSum, keep, mapperFor, type Workload } from './pipeline-spec.js';
import { LastSumSink, RunningSum } from './running-sum.js';
import { checksumOf } from './sum-digest.js';

function sequenceSource(n: number, batchSize: number): Readable {
  let next = 0;
  return new Readable({
    objectMode: true,
    read() {
      // Push until the buffer is full (push → false) instead of one batch per read() call.
      while (next < n) {
        const end = Math.min(next + batchSize, n);
        const batch: number[] = new Array(end - next);
        for (let i = next; i < end; i++) batch[i - next] = i;
        next = end;
        if (!this.push(batch)) return;
      }
      this.push(null);
    },
  });
}

export function nodeStreamCase(
  options: { name?: string; batchSize?: number; workload?: Workload } = {},
): PipelineCase {
  const batchSize = options.batchSize ?? 256;
  const toRecord = mapperFor(options.workload ?? 'cheap');
  return {
    name: options.name ?? `node:stream (batch ${batchSize})`,
    async run(n) {
      const sum = new RunningSum();
      const sink = new LastSumSink();
      const start = performance.now();
      await pipeline(
        sequenceSource(n, batchSize),
        new Transform({
          objectMode: true,
          transform(batch: number[], _encoding, callback) {
            callback(null, batch.map(toRecord));
          },
        }),
        new Transform({
          objectMode: true,
          transform(batch: KeyedRecord[], _encoding, callback) {
            const kept = batch.filter(keep);
            // An empty chunk would still cost a trip through the next stage: skip it.
            if (kept.length > 0) callback(null, kept);
            else callback();
          },
        }),
        new Transform({
          objectMode: true,
          transform(batch: KeyedRecord[], _encoding, callback) {
            callback(
              null,
              batch.map((record) => sum.apply(record)),
            );
          },
        }),
        new Writable({
          objectMode: true,
          write(batch: KeyedSum[], _encoding, callback) {
            sink.pushBatch(batch);
            callback();
          },
        }),
      );
      const ms = performance.now() - start;
      return { records: n, ms, checksum: checksumOf(sink.digest()) };
    },
  };
}
