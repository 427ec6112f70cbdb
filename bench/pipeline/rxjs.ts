/**
 * Baselines: RxJS 7, synchronous, on the main thread, one notification per record.
 *
 * - `rxjsMapCase`: range → map → filter → map(keyed Map running sum) → subscribe. Keyed state is
 *   a Map owned by the run (the pragmatic RxJS version).
 * - `rxjsGroupByCase`: range → map → filter → groupBy(key) → mergeMap(group → scan) → subscribe.
 *   The idiomatic "keyed stream" in RxJS: one inner Subject and scan per key (10 000 of them).
 */

import { filter, groupBy, map, mergeMap, range, scan } from 'rxjs';
import type { PipelineCase, PipelineResult } from './pipeline-case.js';
import { keep, toRecord } from './pipeline-spec.js';
import { DiscardSink, RunningSum } from './running-sum.js';
import { checksumOf, digestOf } from './sum-digest.js';

export function rxjsMapCase(name = 'rxjs (map + Map)'): PipelineCase {
  return {
    name,
    run(n) {
      return new Promise<PipelineResult>((resolve, reject) => {
        const sum = new RunningSum();
        const sink = new DiscardSink();
        const start = performance.now();
        range(0, n)
          .pipe(
            map(toRecord),
            filter(keep),
            map((record) => sum.apply(record)),
          )
          .subscribe({
            next: (out) => sink.push(out),
            error: reject,
            complete: () => {
              const ms = performance.now() - start;
              resolve({ records: n, ms, checksum: checksumOf(sum.digest(sink.count)) });
            },
          });
      });
    },
  };
}

export function rxjsGroupByCase(name = 'rxjs (groupBy + scan)'): PipelineCase {
  return {
    name,
    run(n) {
      return new Promise<PipelineResult>((resolve, reject) => {
        const sink = new DiscardSink();
        // One cell per key, written by that key's scan: read only for the checksum, after the
        // clock stops (the sink must not pay a Map.set per record just for verification).
        const finals = new Map<string, { sum: number }>();
        const start = performance.now();
        range(0, n)
          .pipe(
            map(toRecord),
            filter(keep),
            groupBy((record) => record.key),
            mergeMap((group) => {
              const cell = { sum: 0 };
              finals.set(group.key, cell);
              return group.pipe(
                scan((sum, record) => (cell.sum = sum + record.value), 0),
                map((sum) => ({ key: group.key, sum })),
              );
            }),
          )
          .subscribe({
            next: (out) => sink.push(out),
            error: reject,
            complete: () => {
              const ms = performance.now() - start;
              const sums = new Map([...finals].map(([key, cell]) => [key, cell.sum]));
              resolve({ records: n, ms, checksum: checksumOf(digestOf(sums, sink.count)) });
            },
          });
      });
    },
  };
}
