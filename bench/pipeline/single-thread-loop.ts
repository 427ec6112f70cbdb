/**
 * Baseline: the whole pipeline as one plain loop on the main thread — no framework, no batching,
 * no threads. It is the ceiling every other implementation is read against (what the per-record
 * work itself costs on this machine).
 */

import type { PipelineCase } from './pipeline-case.js';
import { keep, mapperFor, type Workload } from './pipeline-spec.js';
import { LastSumSink, RunningSum } from './running-sum.js';
import { checksumOf } from './sum-digest.js';

export function singleThreadLoopCase(
  name = 'single-thread loop',
  workload: Workload = 'cheap',
): PipelineCase {
  const toRecord = mapperFor(workload);
  return {
    name,
    async run(n) {
      const sum = new RunningSum();
      const sink = new LastSumSink();
      const start = performance.now();
      for (let i = 0; i < n; i++) {
        const record = toRecord(i);
        if (keep(record)) sink.push(sum.apply(record));
      }
      const ms = performance.now() - start;
      return { records: n, ms, checksum: checksumOf(sink.digest()) };
    },
  };
}
