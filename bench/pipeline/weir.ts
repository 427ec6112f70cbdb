/**
 * weir cases of the pipeline benchmark: the job `bench/jobs/keyed-sum-job.mjs` (the same
 * per-record work as the baselines, keyed running sum in keyed ValueState) at a given
 * parallelism and checkpointing configuration.
 *
 * Timed (`ms`): from the first record reaching a sink subtask to the last sink subtask's end of
 * input, from timestamps the sink took in the worker threads — the steady state, comparable to
 * the worker_threads baseline, which also starts its clock with its workers ready. Not timed:
 * `setupMs` = from calling `startJob` to the first sink record (module loading in every worker,
 * deployment, the first records' trip through the pipeline); `jobMs` = `startJob` to `done`
 * (set-up, the run, the final checkpoint and teardown). The checksum is the digest of the final
 * per-key sums, merged from the sink subtasks' reports.
 */

import type { CheckpointingOptions } from 'weir';
import { checkpointLabel, runWeirJob } from '../harness/weir-job-run.js';
import type { PipelineCase, PipelineResult } from './pipeline-case.js';
import { KEY_COUNT, type Workload } from './pipeline-spec.js';
import { checksumOf, mergeDigests, type SumDigest } from './sum-digest.js';

export const KEYED_SUM_JOB = new URL('../jobs/keyed-sum-job.mjs', import.meta.url);

/** What each sink subtask of keyed-sum-job.mjs reports at end of input. */
export interface DigestReport {
  readonly subtask: number;
  /** Wall-clock ms (`timeOrigin + now()`) of the first record at this sink subtask; 0 if none. */
  readonly firstAt: number;
  /** Wall-clock ms of this sink subtask's end of input. */
  readonly endAt: number;
  readonly digest: SumDigest;
}

export interface WeirCaseOptions {
  readonly parallelism: number;
  readonly checkpointing?: Pick<CheckpointingOptions, 'interval' | 'mode'>;
  /** Distinct keys (default: the pipeline's 10 000). */
  readonly keys?: number;
  /** The `map` the job runs (default `cheap`). */
  readonly workload?: Workload;
}

/** The timing and checksum of one run, from the sink reports. */
export function summarizeDigestReports(
  reports: readonly DigestReport[],
  startedAt: number,
): { ms: number; setupMs: number; checksum: string } {
  const active = reports.filter((r) => r.digest.emitted > 0);
  if (active.length === 0) throw new Error('keyed-sum job: no sink subtask reported a record');
  const firstAt = Math.min(...active.map((r) => r.firstAt));
  const endAt = Math.max(...reports.map((r) => r.endAt));
  return {
    ms: endAt - firstAt,
    setupMs: firstAt - startedAt,
    checksum: checksumOf(mergeDigests(reports.map((r) => r.digest))),
  };
}

export function weirCase(options: WeirCaseOptions): PipelineCase {
  const { parallelism, checkpointing } = options;
  const keys = options.keys ?? KEY_COUNT;
  return {
    name: `weir p=${parallelism} ${checkpointLabel(checkpointing)}`,
    async run(n): Promise<PipelineResult> {
      const { result, reports, startedAt, doneAt } = await runWeirJob<DigestReport>(
        KEYED_SUM_JOB,
        {
          parallelism,
          args: { n: String(n), keys: String(keys), workload: options.workload ?? 'cheap' },
          ...(checkpointing ? { checkpointing } : {}),
        },
        { reportSink: 'digest' },
      );
      if (reports.length !== parallelism) {
        throw new Error(`keyed-sum job: expected ${parallelism} sink reports, got ${reports.length}`);
      }
      return {
        records: n,
        ...summarizeDigestReports(reports, startedAt),
        jobMs: doneAt - startedAt,
        checkpoints: result.checkpoints.length,
      };
    },
  };
}
