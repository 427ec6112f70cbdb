/**
 * `verifyJob(module, options)`: checks a user's own job for exactly-once (or at-least-once)
 * output under failures. Steps: two failure-free reference runs (if their committed outputs
 * differ, the job is non-deterministic and nothing else can be judged: the report names the
 * sinks, the differing records and the likely causes); then one run under a seeded schedule of
 * injected failures (job option `faultInjection`, see `worker/fault-injection.ts`) and of stop
 * failures verify carries out itself (stop-with-savepoint, then a new run resumes from the
 * savepoint, at another parallelism for `rescale`), whose committed output per sink, over all
 * its runs, is compared with the reference as multisets.
 *
 * A sink's output of one run: `sinks.collect` from `JobResult.sinks`; every sink with
 * `readCommitted()` (`sinks.file`, `sinks.log`, `sinks.custom({ readCommitted })`) read before
 * and after the run, the difference being the run's (outputs only grow, so earlier runs in the
 * same directory do not disturb it). Other sinks are refused with a VerifyUnsupportedSinkError
 * before anything runs; `sinks.stdout` and `sinks.discard` are listed as not compared.
 *
 * I/O at the edge: the comparison, the schedule and the causes are pure (`output-multiset.ts`,
 * `failure-schedule.ts`, `likely-causes.ts`).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isCommittingSink } from '../api/committing-sink.js';
import { buildStreamGraph } from '../api/define-job.js';
import type { CheckpointMode } from '../api/source.js';
import { type JobResult, type Savepoint, startJob } from '../coordinator/job-client.js';
import {
  InvalidOptionError,
  VerifyNothingToCompareError,
  VerifyReadBackError,
  VerifyUnsupportedSinkError,
} from '../errors.js';
import { buildExecutionPlan } from '../graph/build-execution-plan.js';
import type { ExecutionPlan } from '../graph/execution-plan.js';
import { importJobModule, jobModuleUrl } from '../loader/job-module.js';
import type { InjectedFault } from '../protocol/injected-fault.js';
import {
  FAILURE_KINDS,
  type FailureKind,
  type FailureTarget,
  isStopFailure,
  type PlannedFailure,
  planFailures,
  type StopFailure,
} from './failure-schedule.js';
import { type LikelyCause, likelyCauses } from './likely-causes.js';
import { compareOutputs, multisetDifference, type OutputDifference, violates } from './output-multiset.js';

export interface VerifyOptions {
  /** Failures to inject, one per attempt. Default 3. */
  readonly failures?: number;
  /** Seed of the failure schedule. Default 1. */
  readonly seed?: number;
  /** Failure kinds to choose from. Default all of {@link FAILURE_KINDS}. */
  readonly kinds?: readonly FailureKind[];
  /** The guarantee to check. Default 'exactly-once'. */
  readonly mode?: CheckpointMode;
  /** Default 1. */
  readonly parallelism?: number;
  readonly args?: Readonly<Record<string, string>>;
  /** Checkpoint interval of every run, ms. Default 100. */
  readonly checkpointInterval?: number;
}

/** One sink's verdict. */
export interface SinkVerdict {
  readonly sink: string;
  readonly type: string;
  /** `unsupported`-free: only sinks verify can read are listed; `not-compared` for stdout/discard. */
  readonly status: 'ok' | 'differs' | 'not-compared';
  readonly difference?: OutputDifference;
}

/** What happened during the failure run, in order (ms since the run started). */
export type TimelineEvent =
  | {
      readonly atMs: number;
      readonly kind: 'deployed';
      readonly attempt: number;
      readonly restoredFrom?: number;
    }
  | { readonly atMs: number; readonly kind: 'checkpoint'; readonly checkpointId: number }
  | { readonly atMs: number; readonly kind: 'failure'; readonly attempt: number; readonly message: string }
  | {
      /** Attempt `attempt` stopped with savepoint `checkpointId`; the next run resumes at `parallelism`. */
      readonly atMs: number;
      readonly kind: 'stopped';
      readonly attempt: number;
      readonly checkpointId: number;
      readonly parallelism: number;
    };

/** A scheduled failure in the report, and whether it fired. */
export type ReportedFailure =
  | (InjectedFault & { readonly operator: string; readonly fired: boolean })
  | (StopFailure & { readonly fired: boolean });

export type VerifyReport =
  | {
      readonly verdict: 'non-deterministic';
      readonly job: string;
      readonly options: ResolvedVerifyOptions;
      /** The sinks whose two failure-free outputs differ, with the records that differ. */
      readonly sinks: readonly SinkVerdict[];
      readonly likelyCauses: readonly LikelyCause[];
    }
  | {
      readonly verdict: 'pass' | 'fail';
      readonly job: string;
      readonly options: ResolvedVerifyOptions;
      readonly sinks: readonly SinkVerdict[];
      /** The schedule, and per failure whether it fired. */
      readonly failures: readonly ReportedFailure[];
      readonly restarts: number;
      readonly checkpoints: number;
      readonly timeline: readonly TimelineEvent[];
    };

export interface ResolvedVerifyOptions {
  readonly failures: number;
  readonly seed: number;
  readonly kinds: readonly FailureKind[];
  readonly mode: CheckpointMode;
  readonly parallelism: number;
  readonly args: Readonly<Record<string, string>>;
  readonly checkpointInterval: number;
}

/** Operator kinds that run a user function (targets of a `throw`/`exit`). */
const USER_FUNCTION_KINDS = new Set([
  'map',
  'filter',
  'flat-map',
  'process',
  'keyed-process',
  'keyed-reduce',
  'co-process',
  'interval-join',
  'window',
]);

interface SinkReader {
  readonly sink: string;
  readonly type: string;
  /** undefined: not compared (stdout, discard). */
  readonly read?: (result: JobResult) => Promise<unknown[]>;
  readonly readAll?: () => Promise<readonly unknown[]>;
}

export function resolveVerifyOptions(o: VerifyOptions = {}): ResolvedVerifyOptions {
  const int = (name: string, v: number | undefined, dflt: number, min: number): number => {
    if (v === undefined) return dflt;
    if (!Number.isSafeInteger(v) || v < min) {
      throw new InvalidOptionError(`verify.${name}`, `must be an integer >= ${min}, got ${String(v)}`);
    }
    return v;
  };
  const kinds = o.kinds ?? FAILURE_KINDS;
  for (const k of kinds) {
    if (!(FAILURE_KINDS as readonly string[]).includes(k)) {
      throw new InvalidOptionError(
        'verify.kinds',
        `unknown failure kind ${JSON.stringify(k)}; available: ${FAILURE_KINDS.join(', ')} (sigkill is not implemented yet)`,
      );
    }
  }
  if (kinds.length === 0) throw new InvalidOptionError('verify.kinds', 'needs at least one kind');
  const mode = o.mode ?? 'exactly-once';
  if (mode !== 'exactly-once' && mode !== 'at-least-once') {
    throw new InvalidOptionError(
      'verify.mode',
      `must be 'exactly-once' or 'at-least-once', got ${String(mode)}`,
    );
  }
  return {
    failures: int('failures', o.failures, 3, 0),
    seed: int('seed', o.seed, 1, 0),
    kinds,
    mode,
    parallelism: int('parallelism', o.parallelism, 1, 1),
    args: { ...(o.args ?? {}) },
    checkpointInterval: int('checkpointInterval', o.checkpointInterval, 100, 10),
  };
}

function sinkReaders(plan: ExecutionPlan): SinkReader[] {
  const readers: SinkReader[] = [];
  for (const v of plan.vertices) {
    for (const op of v.operators) {
      if (op.spec.kind !== 'sink') continue;
      const sink = op.spec.sink;
      const type = sink.type;
      if (!isCommittingSink(sink) && type === 'collect') {
        readers.push({
          sink: `collect:${sink.name}`,
          type,
          read: async (r) => [...(r.sinks[sink.name] ?? [])],
        });
      } else if (isCommittingSink(sink) && typeof sink.readCommitted === 'function') {
        const name = op.name;
        const readAll = async (): Promise<readonly unknown[]> => {
          try {
            return await sink.readCommitted!();
          } catch (e) {
            throw new VerifyReadBackError(name, e);
          }
        };
        readers.push({ sink: op.name, type, readAll });
      } else if (type === 'stdout' || type === 'discard') {
        readers.push({ sink: op.name, type });
      } else {
        throw new VerifyUnsupportedSinkError(op.name, type);
      }
    }
  }
  return readers;
}

interface RunOutput {
  readonly result: JobResult;
  /** Per sink (same order as the readers): the records this run committed; undefined when not compared. */
  readonly outputs: readonly (unknown[] | undefined)[];
}

async function runOnce(
  url: string,
  readers: readonly SinkReader[],
  o: ResolvedVerifyOptions,
  faults: readonly InjectedFault[],
  onClient?: (client: Awaited<ReturnType<typeof startJob>>) => void,
): Promise<RunOutput> {
  const before = await Promise.all(readers.map((r) => r.readAll?.()));
  const client = await startJob(url, {
    parallelism: o.parallelism,
    args: o.args,
    checkpointing: { interval: o.checkpointInterval, mode: o.mode },
    restartStrategy:
      faults.length > 0 ? { type: 'fixed-delay', attempts: faults.length + 1, delay: 0 } : { type: 'none' },
    faultInjection: faults,
    metricsInterval: 0,
  });
  onClient?.(client);
  const result = await client.done;
  const outputs: (unknown[] | undefined)[] = [];
  for (let i = 0; i < readers.length; i++) {
    const r = readers[i];
    if (r.read) outputs.push(await r.read(result));
    else if (r.readAll) outputs.push(multisetDifference(await r.readAll(), before[i] ?? []));
    else outputs.push(undefined);
  }
  return { result, outputs };
}

interface FailureRunOutput {
  /** Per sink, as {@link RunOutput.outputs}: what all runs together committed. */
  readonly outputs: readonly (unknown[] | undefined)[];
  readonly restarts: number;
  readonly checkpoints: number;
  /** Global attempts whose failure fired. */
  readonly fired: ReadonlySet<number>;
  readonly timeline: readonly TimelineEvent[];
}

/**
 * The failure run: one job run per stop failure plus one. Each run gets the injected failures
 * up to the next stop failure (attempts renumbered from its own 0: a run restored from a
 * savepoint starts at attempt 0) and a restart strategy with one attempt more than those; the
 * stop fires once its attempt saw `afterCheckpoints` checkpoints complete. A stop whose attempt
 * never comes, or whose job ended first, does not fire and the run's result is final.
 */
async function runWithFailures(
  url: string,
  readers: readonly SinkReader[],
  o: ResolvedVerifyOptions,
  failures: readonly PlannedFailure[],
): Promise<FailureRunOutput> {
  const tmp = mkdtempSync(join(tmpdir(), 'weir-verify-'));
  try {
    const before = await Promise.all(readers.map((r) => r.readAll?.()));
    const collected: unknown[][] = readers.map(() => []);
    const timeline: TimelineEvent[] = [];
    const fired = new Set<number>();
    const t0 = performance.now();
    const at = () => Math.round(performance.now() - t0);
    let restarts = 0;
    let checkpoints = 0;
    let parallelism = o.parallelism;
    let restoreFrom: string | undefined;
    /** Global attempt number of this run's attempt 0. */
    let first = 0;
    for (let run = 0; ; run++) {
      const stop = failures.find((f): f is StopFailure => isStopFailure(f) && f.attempt >= first);
      const injected: InjectedFault[] = [];
      for (const f of failures) {
        if (isStopFailure(f) || f.attempt < first || (stop && f.attempt >= stop.attempt)) continue;
        injected.push({ ...f, attempt: f.attempt - first });
      }
      const client = await startJob(url, {
        parallelism,
        args: o.args,
        checkpointing: { interval: o.checkpointInterval, mode: o.mode, dir: join(tmp, `run-${run}`) },
        ...(restoreFrom === undefined ? {} : { restoreFrom }),
        restartStrategy:
          injected.length > 0
            ? { type: 'fixed-delay', attempts: injected.length + 1, delay: 0 }
            : { type: 'none' },
        faultInjection: injected,
        metricsInterval: 0,
      });
      const base = first;
      let attempt = 0;
      let completedInAttempt = 0;
      let stopping: Promise<Savepoint | undefined> | undefined;
      client.on('deployed', (e) => {
        attempt = e.attempt;
        completedInAttempt = 0;
        timeline.push({
          atMs: at(),
          kind: 'deployed',
          attempt: base + e.attempt,
          restoredFrom: e.restoredFrom,
        });
      });
      client.on('checkpoint', (c) => {
        timeline.push({ atMs: at(), kind: 'checkpoint', checkpointId: c.checkpointId });
        if (stop === undefined || stopping !== undefined || base + attempt !== stop.attempt) return;
        if (++completedInAttempt < stop.afterCheckpoints) return;
        // The job may end before the savepoint completes: then the stop did not happen.
        stopping = client.stopWithSavepoint(join(tmp, `savepoint-${stop.attempt}`)).catch(() => undefined);
      });
      client.on('restarting', (e) => {
        fired.add(base + e.attempt - 1);
        const cause = (e.cause as { cause?: unknown }).cause;
        const message = cause instanceof Error ? cause.message : e.cause.message;
        timeline.push({ atMs: at(), kind: 'failure', attempt: base + e.attempt - 1, message });
      });
      const result = await client.done;
      const savepoint = stopping === undefined ? undefined : await stopping;
      restarts += result.restarts;
      checkpoints += result.checkpoints.length;
      for (let i = 0; i < readers.length; i++) {
        const read = readers[i].read;
        if (read) collected[i].push(...(await read(result)));
      }
      if (stop === undefined || result.status !== 'stopped' || savepoint === undefined) break;
      fired.add(stop.attempt);
      timeline.push({
        atMs: at(),
        kind: 'stopped',
        attempt: stop.attempt,
        checkpointId: savepoint.checkpointId,
        parallelism: stop.parallelism,
      });
      restoreFrom = savepoint.path;
      parallelism = stop.parallelism;
      first = stop.attempt + 1;
    }
    const outputs: (unknown[] | undefined)[] = [];
    for (let i = 0; i < readers.length; i++) {
      const r = readers[i];
      if (r.read) outputs.push(collected[i]);
      else if (r.readAll) outputs.push(multisetDifference(await r.readAll(), before[i] ?? []));
      else outputs.push(undefined);
    }
    return { outputs, restarts, checkpoints, fired, timeline };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function failureTargets(plan: ExecutionPlan, result: JobResult): FailureTarget[] {
  const targets: FailureTarget[] = [];
  for (const v of plan.vertices) {
    for (const op of v.operators) {
      if (!USER_FUNCTION_KINDS.has(op.spec.kind)) continue;
      const m = result.metrics.operators.find((s) => s.vertexId === v.vertexId && s.name === op.name);
      targets.push({ uid: op.uid, name: op.name, parallelism: v.parallelism, recordsIn: m?.recordsIn ?? 0 });
    }
  }
  return targets;
}

/** Whether some task reads more than one input channel (see `likelyCauses`). */
function hasMultipleInputs(plan: ExecutionPlan): boolean {
  const channels = new Map<number, number>();
  for (const e of plan.edges) {
    // A forward edge gives each consumer subtask one channel; the others one per producer subtask.
    const producers =
      e.partitioning === 'forward'
        ? 1
        : (plan.vertices.find((v) => v.vertexId === e.sourceVertexId)?.parallelism ?? 1);
    const n = (channels.get(e.targetVertexId) ?? 0) + producers;
    if (n > 1) return true;
    channels.set(e.targetVertexId, n);
  }
  return false;
}

export async function verifyJob(jobModule: string | URL, options: VerifyOptions = {}): Promise<VerifyReport> {
  const o = resolveVerifyOptions(options);
  const url = jobModuleUrl(jobModule);
  const plan = buildExecutionPlan(buildStreamGraph(await importJobModule(url), o.args, url), {
    parallelism: o.parallelism,
  });
  const readers = sinkReaders(plan);
  if (!readers.some((r) => r.read !== undefined || r.readAll !== undefined)) {
    throw new VerifyNothingToCompareError(readers.map((r) => r.sink));
  }
  const job = typeof jobModule === 'string' ? jobModule : jobModule.href;

  // 1. Two failure-free runs: the reference, and the check that there is one.
  const ref = await runOnce(url, readers, o, []);
  const again = await runOnce(url, readers, o, []);
  const nondeterministic: SinkVerdict[] = [];
  const differing: unknown[] = [];
  readers.forEach((r, i) => {
    const a = ref.outputs[i];
    const b = again.outputs[i];
    if (a === undefined || b === undefined) return;
    const d = compareOutputs(a, b);
    if (violates(d, 'exactly-once')) {
      nondeterministic.push({ sink: r.sink, type: r.type, status: 'differs', difference: d });
      for (const x of [...d.lost, ...d.duplicated, ...d.unexpected]) differing.push(x.record);
    }
  });
  if (nondeterministic.length > 0) {
    return {
      verdict: 'non-deterministic',
      job,
      options: o,
      sinks: nondeterministic,
      likelyCauses: likelyCauses(differing, Date.now(), hasMultipleInputs(plan)),
    };
  }

  // 2. The run under failures.
  const faults = planFailures({
    seed: o.seed,
    count: o.failures,
    kinds: o.kinds,
    targets: failureTargets(plan, ref.result),
    parallelism: o.parallelism,
  });
  const run = await runWithFailures(url, readers, o, faults);
  const sinks: SinkVerdict[] = readers.map((r, i) => {
    const a = ref.outputs[i];
    const b = run.outputs[i];
    if (a === undefined || b === undefined) return { sink: r.sink, type: r.type, status: 'not-compared' };
    const d = compareOutputs(a, b);
    return { sink: r.sink, type: r.type, status: violates(d, o.mode) ? 'differs' : 'ok', difference: d };
  });
  const names = new Map(plan.vertices.flatMap((v) => v.operators.map((op) => [op.uid, op.name] as const)));
  return {
    verdict: sinks.some((s) => s.status === 'differs') ? 'fail' : 'pass',
    job,
    options: o,
    sinks,
    failures: faults.map(
      (f): ReportedFailure =>
        isStopFailure(f)
          ? { ...f, fired: run.fired.has(f.attempt) }
          : { ...f, operator: names.get(f.operatorUid) ?? f.operatorUid, fired: run.fired.has(f.attempt) },
    ),
    restarts: run.restarts,
    checkpoints: run.checkpoints,
    timeline: run.timeline,
  };
}
