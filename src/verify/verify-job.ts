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
 * `readCommitted()` (`sinks.file`, `sinks.log`, `sinks.postgres` in append mode, `sinks.jetstream`,
 * `sinks.redisStream`, `sinks.custom({ readCommitted })`) read before
 * and after the run, the difference being the run's (outputs only grow, so earlier runs in the
 * same directory do not disturb it). Other sinks are refused with a VerifyUnsupportedSinkError
 * before anything runs; `sinks.stdout` and `sinks.discard` are listed as not compared.
 *
 * I/O at the edge: the comparison, the schedule and the causes are pure (`output-multiset.ts`,
 * `failure-schedule.ts`, `likely-causes.ts`).
 *
 * Why one file: what is left is one procedure (options, reference runs, failure run, verdict)
 * whose steps share one bracket: a run's output is what each sink reader reads after it minus what
 * it read before, in the same sink order, so the readers, the reference run, the failure run's
 * segments (in this process or in children) and the report types that carry their results must
 * agree on it; the child process's side is in child-run.ts and verify-child.ts.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isCommittingSink } from '../api/committing-sink.js';
import { buildStreamGraph } from '../api/define-job.js';
import type { CheckpointMode } from '../api/source.js';
import { type JobResult, type Savepoint, startJob } from '../coordinator/job-client.js';
import type { JobOptions } from '../coordinator/job-options.js';
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
import { startChildRun } from './child-run.js';
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
import { compareKeyedSequences, type RecordKey, type SequenceDifference } from './output-sequence.js';

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
  /**
   * The key of an output record (a field path such as `'key'` or `'user.id'`, or a function):
   * `sinks.collect` outputs are then also compared per key as sequences, in the reference's
   * order (exactly-once only: at-least-once replays reorder by design). Default: none, multisets only.
   */
  readonly key?: RecordKey;
}

/** One sink's verdict. */
export interface SinkVerdict {
  readonly sink: string;
  readonly type: string;
  /** `unsupported`-free: only sinks verify can read are listed; `not-compared` for stdout/discard. */
  readonly status: 'ok' | 'differs' | 'not-compared';
  readonly difference?: OutputDifference;
  /** With the `key` option, for `sinks.collect`: where a key's sequence first departs from the reference. */
  readonly sequence?: SequenceDifference;
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
    }
  | {
      /**
       * The process running attempt `attempt` was SIGKILLed; the next run, in a new process,
       * restores the latest checkpoint it retained (the last one completed: `lastCheckpointId`).
       */
      readonly atMs: number;
      readonly kind: 'killed';
      readonly attempt: number;
      readonly lastCheckpointId: number | undefined;
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
  readonly key?: RecordKey;
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
        `unknown failure kind ${JSON.stringify(k)}; available: ${FAILURE_KINDS.join(', ')}`,
      );
    }
  }
  if (kinds.length === 0) throw new InvalidOptionError('verify.kinds', 'needs at least one kind');
  const mode = o.mode ?? 'exactly-once';
  if (o.key !== undefined && typeof o.key !== 'function' && (typeof o.key !== 'string' || o.key === '')) {
    throw new InvalidOptionError('verify.key', `must be a field path or a function, got ${String(o.key)}`);
  }
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
    ...(o.key === undefined ? {} : { key: o.key }),
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
        if (sink.committedOutput === 'latest-per-key') {
          throw new VerifyUnsupportedSinkError(
            name,
            type,
            'it keeps the latest record per key (upsert), so a run that writes the same values again ' +
              "leaves no trace of its own and verify cannot tell one run's output from another's; " +
              'verify the job with the sink in append mode (no upsertKey) instead',
          );
        }
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

/** How one segment of the failure run ended (in this process or in a child). */
interface SegmentEnd {
  readonly status: 'finished' | 'stopped' | 'killed';
  readonly restarts: number;
  readonly checkpoints: number;
  readonly savepoint?: { readonly checkpointId: number; readonly path: string };
  /** In-process segments: the job's result (collect sinks are read from it). */
  readonly result?: JobResult;
}

/**
 * The failure run: one job run per stop failure plus one. Each run gets the injected failures
 * up to the next stop failure (attempts renumbered from its own 0: a run restored from a
 * savepoint or checkpoint starts at attempt 0) and a restart strategy with one attempt more than
 * those; the stop fires once its attempt saw `afterCheckpoints` checkpoints complete: `savepoint`
 * and `rescale` stop with a savepoint and the next run resumes from it, `sigkill` SIGKILLs the
 * process running the job and the next run, in a new process, restores the latest checkpoint
 * retained in the same checkpoint directory (`restoreFrom: 'latest'`). A stop whose attempt never
 * comes, or whose job ended first, does not fire and the run's result is final.
 *
 * With a `sigkill` in the schedule every run is a child process (`child-run.ts`), and the
 * `sinks.collect` output is what the children's deliveries reported, each transaction once (a
 * restore commits the latest checkpoint's transactions again; the killed process may have
 * delivered them already). Otherwise every run is in this process, as `startJob`.
 */
async function runWithFailures(
  url: string,
  readers: readonly SinkReader[],
  o: ResolvedVerifyOptions,
  failures: readonly PlannedFailure[],
): Promise<FailureRunOutput> {
  const tmp = mkdtempSync(join(tmpdir(), 'weir-verify-'));
  const inChild = failures.some((f) => f.kind === 'sigkill');
  try {
    const before = await Promise.all(readers.map((r) => r.readAll?.()));
    const collected: unknown[][] = readers.map(() => []);
    const collectIndex = new Map(readers.map((r, i) => [r.sink, i] as const));
    const transactions = new Set<string>();
    const timeline: TimelineEvent[] = [];
    const fired = new Set<number>();
    const t0 = performance.now();
    const at = () => Math.round(performance.now() - t0);
    let restarts = 0;
    let checkpoints = 0;
    let parallelism = o.parallelism;
    let restoreFrom: string | undefined;
    let checkpointDir = join(tmp, 'run-0');
    /** Global attempt number of this run's attempt 0. */
    let first = 0;
    for (let run = 0; ; run++) {
      const stop = failures.find((f): f is StopFailure => isStopFailure(f) && f.attempt >= first);
      const injected: InjectedFault[] = [];
      for (const f of failures) {
        if (isStopFailure(f) || f.attempt < first || (stop && f.attempt >= stop.attempt)) continue;
        injected.push({ ...f, attempt: f.attempt - first });
      }
      const options: JobOptions = {
        parallelism,
        args: o.args,
        checkpointing: { interval: o.checkpointInterval, mode: o.mode, dir: checkpointDir },
        ...(restoreFrom === undefined ? {} : { restoreFrom }),
        restartStrategy:
          injected.length > 0
            ? { type: 'fixed-delay', attempts: injected.length + 1, delay: 0 }
            : { type: 'none' },
        faultInjection: injected,
        metricsInterval: 0,
      };
      const base = first;
      let attempt = 0;
      let completedInAttempt = 0;
      let lastCheckpoint: number | undefined;
      /** Seen here: a killed run reports no result. */
      let segmentCheckpoints = 0;
      let segmentRestarts = 0;
      let stopRequested = false;
      const savepointDir = stop ? join(tmp, `savepoint-${stop.attempt}`) : '';
      const handlers = {
        deployed: (a: number, restoredFrom: number | undefined) => {
          attempt = a;
          completedInAttempt = 0;
          timeline.push({ atMs: at(), kind: 'deployed', attempt: base + a, restoredFrom });
        },
        checkpoint: (checkpointId: number) => {
          lastCheckpoint = checkpointId;
          segmentCheckpoints++;
          timeline.push({ atMs: at(), kind: 'checkpoint', checkpointId });
          if (stop === undefined || stopRequested || base + attempt !== stop.attempt) return;
          if (++completedInAttempt < stop.afterCheckpoints) return;
          stopRequested = true;
          segment.stop(stop.kind === 'sigkill' ? null : savepointDir);
        },
        restarting: (a: number, message: string) => {
          segmentRestarts++;
          fired.add(base + a - 1);
          timeline.push({ atMs: at(), kind: 'failure', attempt: base + a - 1, message });
        },
        collected: (sink: string, transaction: string | null, records: readonly unknown[]) => {
          const i = collectIndex.get(`collect:${sink}`);
          if (i === undefined) return;
          if (transaction !== null) {
            const key = `${sink}/${transaction}`;
            if (transactions.has(key)) return;
            transactions.add(key);
          }
          collected[i].push(...records);
        },
      };
      const segment = inChild
        ? childSegment(url, options, handlers)
        : await inProcessSegment(url, options, handlers);
      const end = await segment.done;
      restarts += end.status === 'killed' ? segmentRestarts : end.restarts;
      checkpoints += end.status === 'killed' ? segmentCheckpoints : end.checkpoints;
      if (end.result) {
        for (let i = 0; i < readers.length; i++) {
          const read = readers[i].read;
          if (read) collected[i].push(...(await read(end.result)));
        }
      }
      if (stop === undefined) break;
      if (stop.kind === 'sigkill') {
        if (end.status !== 'killed') break;
        fired.add(stop.attempt);
        timeline.push({
          atMs: at(),
          kind: 'killed',
          attempt: stop.attempt,
          lastCheckpointId: lastCheckpoint,
        });
        restoreFrom = 'latest';
      } else {
        if (end.status !== 'stopped' || end.savepoint === undefined) break;
        fired.add(stop.attempt);
        timeline.push({
          atMs: at(),
          kind: 'stopped',
          attempt: stop.attempt,
          checkpointId: end.savepoint.checkpointId,
          parallelism: stop.parallelism,
        });
        restoreFrom = end.savepoint.path;
        checkpointDir = join(tmp, `run-${run + 1}`);
      }
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

interface SegmentHandlers {
  deployed(attempt: number, restoredFrom: number | undefined): void;
  checkpoint(checkpointId: number): void;
  restarting(attempt: number, message: string): void;
  collected(sink: string, transaction: string | null, records: readonly unknown[]): void;
}

interface Segment {
  /** Stop-with-savepoint into `dir`; null: SIGKILL (child segments only). */
  stop(dir: string | null): void;
  readonly done: Promise<SegmentEnd>;
}

async function inProcessSegment(url: string, options: JobOptions, on: SegmentHandlers): Promise<Segment> {
  const client = await startJob(url, options);
  client.on('deployed', (e) => on.deployed(e.attempt, e.restoredFrom));
  client.on('checkpoint', (c) => on.checkpoint(c.checkpointId));
  client.on('restarting', (e) => {
    const cause = (e.cause as { cause?: unknown }).cause;
    on.restarting(e.attempt, cause instanceof Error ? cause.message : e.cause.message);
  });
  let stopping: Promise<Savepoint | undefined> | undefined;
  const done = (async (): Promise<SegmentEnd> => {
    const result = await client.done;
    // The job may end before the savepoint completes: then the stop did not happen.
    const savepoint = stopping === undefined ? undefined : await stopping;
    return {
      status: result.status,
      restarts: result.restarts,
      checkpoints: result.checkpoints.length,
      ...(savepoint ? { savepoint } : {}),
      result,
    };
  })();
  return {
    stop: (dir) => {
      if (dir === null) throw new Error('weir verify: SIGKILL needs a child segment');
      stopping = client.stopWithSavepoint(dir).catch(() => undefined);
    },
    done,
  };
}

function childSegment(url: string, options: JobOptions, on: SegmentHandlers): Segment {
  const child = startChildRun(url, options, on);
  return {
    stop: (dir) => (dir === null ? child.kill() : child.stop(dir)),
    done: child.done.then(
      (end): SegmentEnd =>
        end.status === 'killed' ? { status: 'killed', restarts: 0, checkpoints: 0 } : end,
    ),
  };
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

/**
 * Per-key sequences, with the `key` option under exactly-once, for `sinks.collect` only: its
 * output is in commit order, each key's records in the order its subtask emitted them. (Files
 * and logs are read back in an order of their own.)
 */
function sequenceDifference(
  r: SinkReader,
  reference: readonly unknown[],
  actual: readonly unknown[],
  o: ResolvedVerifyOptions,
): SequenceDifference | undefined {
  if (o.key === undefined || o.mode !== 'exactly-once' || r.type !== 'collect') return undefined;
  return compareKeyedSequences(reference, actual, o.key);
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
    const seq = sequenceDifference(r, a, b, o);
    if (violates(d, 'exactly-once') || seq !== undefined) {
      nondeterministic.push({
        sink: r.sink,
        type: r.type,
        status: 'differs',
        difference: d,
        ...(seq ? { sequence: seq } : {}),
      });
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
    const seq = sequenceDifference(r, a, b, o);
    return {
      sink: r.sink,
      type: r.type,
      status: violates(d, o.mode) || seq !== undefined ? 'differs' : 'ok',
      difference: d,
      ...(seq ? { sequence: seq } : {}),
    };
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
