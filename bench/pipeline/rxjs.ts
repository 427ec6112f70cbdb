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
import { LastSumSink, RunningSum } from './running-sum.js';
import { checksumOf } from './sum-digest.js';

export function rxjsMapCase(name = 'rxjs (map + Map)'): PipelineCase {
  return {
    name,
    run(n) {
      return new Promise<PipelineResult>((resolve, reject) => {
        const sum = new RunningSum();
        const sink = new LastSumSink();
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
              resolve({ records: n, ms, checksum: checksumOf(sink.digest()) });
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
        const sink = new LastSumSink();
        const start = performance.now();
        range(0, n)
          .pipe(
            map(toRecord),
            filter(keep),
            groupBy((record) => record.key),
            mergeMap((group) => {
              return group.pipe(
                scan((sum, record) => sum + record.value, 0),
                map((sum) => ({ key: group.key, sum })),
              );
            }),
          )
          .subscribe({
            next: (out) => sink.push(out),
            error: reject,
            complete: () => {
              const ms = performance.now() - start;
              resolve({ records: n, ms, checksum: checksumOf(sink.digest()) });
            },
          });
      });
    },
  };
}
