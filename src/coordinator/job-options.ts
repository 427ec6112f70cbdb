/**
 * Options of `runJob`/`startJob` (DESIGN.md §6), checked up front: a bad value is an
 * {@link InvalidOptionError} naming the option before any thread starts.
 *
 * Why one file: the option types (the public shape of `JobOptions`) and their one validator,
 * `resolveJobOptions`, which checks every key against the same tables; split, a new option would
 * need edits in two files that must agree.
 */

import { type consoleLogger, LOG_LEVELS, type Logger } from '../api/logger.js';
import type { CheckpointMode } from '../api/source.js';
import {
  type BufferDebloatOptions,
  bufferDebloatOptions,
  DEFAULT_BUFFER_DEBLOAT,
} from '../channels/buffer-debloater.js';
import {
  type ClusterJobOptions,
  type ResolvedClusterJobOptions,
  resolveClusterJobOptions,
} from '../cluster/cluster-options.js';
import {
  type DashboardOptions,
  type ResolvedDashboardOptions,
  resolveDashboardOptions,
} from '../dashboard/dashboard-options.js';
import { InvalidOptionError } from '../errors.js';
import type { InjectedFault } from '../protocol/injected-fault.js';
import { checkKnownKeys, type KeyTable } from './option-keys.js';
import { createRestartStrategy, type RestartStrategyOptions } from './restart-strategy.js';

export type { RestartStrategyOptions };

import { DEFAULT_FULL_EVERY } from '../state/incremental-chain.js';
import { DEFAULT_MAX_PARALLELISM, UPPER_BOUND_MAX_PARALLELISM } from '../state/key-groups.js';

export interface CheckpointingOptions {
  /** Milliseconds between checkpoint triggers. */
  readonly interval: number;
  readonly mode?: CheckpointMode;
  /**
   * Unaligned checkpoints: a task takes its snapshot at a checkpoint's first barrier and records
   * the records still arriving before the other channels' barriers as channel state. Exactly-once
   * only. Default false.
   */
  readonly unaligned?: boolean;
  /**
   * Ms an exactly-once checkpoint may spend aligning at a task before that task takes it unaligned
   * (Flink's `execution.checkpointing.aligned-checkpoint-timeout`): it snapshots at once, forwards
   * the barrier marked unaligned (downstream tasks then take it unaligned too), records the
   * still-open inputs' records until their barriers as channel state, and lets the blocked inputs
   * flow. Savepoints always align. 0 takes every checkpoint that must align unaligned. Not with
   * `unaligned: true` (that never aligns). Default: none (always aligned).
   */
  readonly alignmentTimeout?: number;
  /** A checkpoint not completed after this many ms is aborted. Default 600 000. */
  readonly timeout?: number;
  /** Minimum ms between the end of one checkpoint and the trigger of the next. Default 0. */
  readonly minPause?: number;
  /** Checkpoints in flight at once. Default 1. */
  readonly maxConcurrent?: number;
  /** Consecutive checkpoint failures tolerated before the job fails. Default 0 (Flink's default). */
  readonly tolerableFailures?: number;
  /** Checkpoint directory (LMDB). Default: a temporary directory removed when the job ends. */
  readonly dir?: string;
  /** Completed checkpoints kept. Default 3. */
  readonly retain?: number;
  /**
   * Keyed state: write only the keys changed since the last confirmed checkpoint (a delta over a
   * chain of earlier chunks, which the checkpoint shares). Default false.
   */
  readonly incremental?: boolean;
  /** With `incremental`: a full snapshot at least every this many checkpoints (bounds the chain). Default 10. */
  readonly fullEvery?: number;
}

export interface ChannelOptions {
  /** Bytes of each ring (one per producer/consumer subtask pair). Default 1 MiB. */
  readonly ringBytes?: number;
  /** Records per batch frame. Default 256. */
  readonly batchRecords?: number;
  /** Bytes per batch frame. Default 64 KiB. */
  readonly batchBytes?: number;
  /**
   * Record encoding on the rings: `'auto'` (default) writes batches of records of one shape
   * (plain objects, nested plain objects, primitives) with the shape codec and everything else
   * with msgpack; `'msgpack'` sends every batch through msgpack (to compare the two, or as a
   * fallback).
   */
  readonly recordFormat?: 'auto' | 'msgpack';
  /**
   * Buffer debloating: each consumer measures its throughput and caps the bytes in flight on
   * each of its input rings so that a checkpoint barrier waits behind about `targetMs` of data
   * instead of behind full rings (Flink's buffer debloating). `true` uses the defaults
   * (`targetMs` 20, `periodMs` 100, `minBytes` 32 KiB, `samples` 5, `thresholdPercent` 25); an
   * object overrides some of them. Default false: the ring's capacity is the only limit.
   */
  readonly debloat?: boolean | Partial<BufferDebloatOptions>;
  /**
   * Wake-up batching, ms: while a consumer task is parked, a producer that keeps filling batches
   * rings it once this long (or a quarter ring) of full batches is waiting, instead of after every
   * batch; a producer whose input goes idle, that sends a barrier or watermark, or that blocks
   * still rings at once. Fewer wake-ups of a consumer much faster than its producer (a CPU-heavy
   * map before a keyBy), at the price of up to this much latency while the producer is saturated.
   * 0 rings after every batch. Default 20.
   */
  readonly wakeDelayMs?: number;
}

export interface JobOptions {
  /** Default parallelism of every operator. Default 1. */
  readonly parallelism?: number;
  /** Number of key groups; the upper bound for rescaling keyed state. Default 128. */
  readonly maxParallelism?: number;
  /** String arguments handed to the job's build function. */
  readonly args?: Readonly<Record<string, string>>;
  readonly checkpointing?: CheckpointingOptions;
  readonly stateBackend?: 'heap' | 'lmdb';
  readonly restartStrategy?: RestartStrategyOptions;
  /**
   * `'latest'`: the newest completed checkpoint in `checkpointing.dir` (needs `dir`; a directory
   * that does not exist yet or is empty is a first start, reported as a `fresh-start` event); or
   * a checkpoint directory path (a savepoint), which must hold a usable checkpoint. Needs
   * `checkpointing`.
   */
  readonly restoreFrom?: string;
  // ---- restore safety: what a restore may give up (both default false: refuse instead) ----
  /**
   * Restore even when the checkpoint holds state that no operator of this job takes (an operator
   * removed, or whose uid changed): that state is dropped, with a `warning` event. Default false:
   * such a restore fails with NonRestoredStateError (Flink's `allowNonRestoredState`).
   */
  readonly allowNonRestoredState?: boolean;
  /**
   * When the newest checkpoint(s) fail verification, restore the newest one that verifies anyway.
   * Consequence: output the sinks committed for the damaged checkpoints is committed again
   * (duplicates). Default false: such a restore fails with RestoreFallbackRefusedError (under
   * at-least-once the fallback is allowed, duplicates being within that guarantee).
   */
  readonly allowFallbackPastDamaged?: boolean;
  readonly channels?: ChannelOptions;
  /**
   * How often the client samples live task counters (`JobClient.metrics()`, the `metrics`
   * event), ms. Default 1000; 0 turns sampling off (counters then arrive when tasks finish).
   */
  readonly metricsInterval?: number;
  /**
   * Stuck-task watchdog: a task that stays in user code on one batch of records (or one source
   * poll) for this many ms — an infinite loop, a blocking call — fails the attempt with a
   * TaskStuckError naming the task and operator, and its thread is terminated. Without it only
   * the checkpoint timeout notices, and without naming the operator. Default 5000; 0 turns it off.
   * Watermarks, timers and end of input are not watched (their work can legitimately be long).
   */
  readonly stuckTaskTimeout?: number;
  /**
   * Nice levels every worker thread of the job lowers its own CPU priority by, below the thread
   * that started the job (at most to nice 19), so that under CPU contention the embedding
   * service's own threads (its request path) run first and the job gets what is left: the job
   * then falls behind first. Kept across restarts that reuse threads. Linux only (it keeps a
   * nice value per thread): on other platforms a non-zero value is an InvalidOptionError, since
   * there it would lower the whole process, the service with it. Default 0: unchanged.
   */
  readonly workerNice?: number;
  /**
   * Cancels the job when aborted: every task stops and `done` rejects with a
   * {@link JobAbortedError} (`name === 'AbortError'`, `cause` the signal's reason). An
   * already-aborted signal makes `startJob`/`runJob` reject at once, before anything starts.
   */
  readonly signal?: AbortSignal;
  /**
   * A pino-compatible logger (`{ debug, info, warn, error }`) for the main thread and the
   * workers (their records are forwarded to the main thread). Without one, the job's lifecycle
   * is not logged (it is in the events and in `done`), and warnings and errors from workers and
   * connectors (e.g. a failed cleanup) go to the console ({@link consoleLogger}).
   */
  readonly logger?: Logger;
  /** Serve a live web dashboard, its JSON and Prometheus `/metrics` from this process. Default off. */
  readonly dashboard?: DashboardOptions | boolean;
  /**
   * Failures to inject into operators' user functions (what `weir verify` runs): each fires once,
   * in its attempt, before the operator's function sees the given record. Default none.
   */
  readonly faultInjection?: readonly InjectedFault[];
  /**
   * Run this process as one instance of a job formed by several processes over NATS (issue 17;
   * src/cluster/cluster-job.ts). Needs exactly-once `checkpointing` with a directory every
   * instance shares (`cluster.checkpointDir` or `checkpointing.dir`, the same path everywhere).
   */
  readonly cluster?: ClusterJobOptions;
}

/**
 * Known keys per options object (see option-keys.ts): adding an option to a type without adding
 * it here does not compile.
 */
const JOB_OPTION_KEYS: KeyTable<JobOptions> = {
  parallelism: true,
  maxParallelism: true,
  args: true,
  checkpointing: true,
  stateBackend: true,
  restartStrategy: true,
  restoreFrom: true,
  allowNonRestoredState: true,
  allowFallbackPastDamaged: true,
  channels: true,
  metricsInterval: true,
  stuckTaskTimeout: true,
  workerNice: true,
  signal: true,
  logger: true,
  dashboard: true,
  cluster: true,
  faultInjection: true,
};

const CHECKPOINTING_OPTION_KEYS: KeyTable<CheckpointingOptions> = {
  interval: true,
  mode: true,
  unaligned: true,
  alignmentTimeout: true,
  timeout: true,
  minPause: true,
  maxConcurrent: true,
  tolerableFailures: true,
  dir: true,
  retain: true,
  incremental: true,
  fullEvery: true,
};

const CHANNEL_OPTION_KEYS: KeyTable<ChannelOptions> = {
  ringBytes: true,
  batchRecords: true,
  batchBytes: true,
  recordFormat: true,
  debloat: true,
  wakeDelayMs: true,
};

type RestartStrategyOf<T extends RestartStrategyOptions['type']> = Extract<
  RestartStrategyOptions,
  { type: T }
>;

const RESTART_STRATEGY_OPTION_KEYS: {
  readonly [T in RestartStrategyOptions['type']]: KeyTable<RestartStrategyOf<T>>;
} = {
  none: { type: true },
  'fixed-delay': { type: true, attempts: true, delay: true },
  'exponential-delay': {
    type: true,
    initial: true,
    max: true,
    multiplier: true,
    resetAfter: true,
    jitter: true,
    attempts: true,
  },
};

/** Options with defaults applied. */
export interface ResolvedJobOptions {
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly args: Readonly<Record<string, string>>;
  readonly checkpointing:
    | (Required<Omit<CheckpointingOptions, 'dir' | 'alignmentTimeout'>> & {
        readonly dir: string | undefined;
        /** Null: checkpoints always align. */
        readonly alignmentTimeout: number | null;
      })
    | null;
  readonly stateBackend: 'heap' | 'lmdb';
  readonly restartStrategy: RestartStrategyOptions;
  readonly restoreFrom: string | undefined;
  readonly allowNonRestoredState: boolean;
  readonly allowFallbackPastDamaged: boolean;
  readonly channels: Required<Omit<ChannelOptions, 'debloat'>> & {
    /** Null when debloating is off. */
    readonly debloat: BufferDebloatOptions | null;
  };
  readonly metricsInterval: number;
  readonly stuckTaskTimeout: number;
  /** 0: worker threads keep their creator's priority. */
  readonly workerNice: number;
  readonly signal: AbortSignal | undefined;
  /** The `logger` option; undefined when none was given (see {@link JobOptions.logger}). */
  readonly logger: Logger | undefined;
  readonly dashboard: ResolvedDashboardOptions | null;
  /** Null: a job of this process alone. `checkpointDir` is resolved (never undefined here). */
  readonly cluster: (ResolvedClusterJobOptions & { readonly checkpointDir: string }) | null;
  readonly faultInjection: readonly InjectedFault[];
}

function int(name: string, v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new InvalidOptionError(name, `must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
  }
  return v;
}

/** Default of `channels.wakeDelayMs` (measured: bench/README.md, "Fewer wake-ups of a parked consumer"). */
export const DEFAULT_WAKE_DELAY_MS = 20;

/** Default of `stuckTaskTimeout`: far above any batch of records that is not stuck. */
export const DEFAULT_STUCK_TASK_TIMEOUT_MS = 5000;

export function resolveJobOptions(o: JobOptions = {}): ResolvedJobOptions {
  if (typeof o !== 'object' || o === null) throw new InvalidOptionError('options', 'must be an object');
  checkKnownKeys(o, '', JOB_OPTION_KEYS);
  const parallelism =
    o.parallelism === undefined ? 1 : int('parallelism', o.parallelism, 1, UPPER_BOUND_MAX_PARALLELISM);
  const maxParallelism =
    o.maxParallelism === undefined
      ? Math.max(DEFAULT_MAX_PARALLELISM, parallelism)
      : int('maxParallelism', o.maxParallelism, 1, UPPER_BOUND_MAX_PARALLELISM);
  if (parallelism > maxParallelism) {
    throw new InvalidOptionError('parallelism', `${parallelism} exceeds maxParallelism ${maxParallelism}`);
  }
  const args: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.args ?? {})) {
    if (typeof v !== 'string') throw new InvalidOptionError(`args.${k}`, `must be a string, got ${typeof v}`);
    args[k] = v;
  }
  let checkpointing: ResolvedJobOptions['checkpointing'] = null;
  if (o.checkpointing !== undefined) {
    const c = o.checkpointing;
    if (typeof c !== 'object' || c === null) {
      throw new InvalidOptionError('checkpointing', `must be an object, got ${JSON.stringify(c)}`);
    }
    checkKnownKeys(c, 'checkpointing', CHECKPOINTING_OPTION_KEYS);
    const mode = c.mode ?? 'exactly-once';
    if (mode !== 'exactly-once' && mode !== 'at-least-once') {
      throw new InvalidOptionError(
        'checkpointing.mode',
        `must be 'exactly-once' or 'at-least-once', got ${JSON.stringify(mode)}`,
      );
    }
    if (c.unaligned !== undefined && typeof c.unaligned !== 'boolean') {
      throw new InvalidOptionError('checkpointing.unaligned', `must be a boolean, got ${typeof c.unaligned}`);
    }
    if (c.unaligned && mode !== 'exactly-once') {
      throw new InvalidOptionError(
        'checkpointing.unaligned',
        "unaligned checkpoints are an exactly-once variant; at-least-once never aligns (use mode: 'exactly-once')",
      );
    }
    if (c.alignmentTimeout !== undefined) {
      if (mode !== 'exactly-once') {
        throw new InvalidOptionError(
          'checkpointing.alignmentTimeout',
          "switches aligned exactly-once checkpoints to unaligned; at-least-once never aligns (use mode: 'exactly-once')",
        );
      }
      if (c.unaligned) {
        throw new InvalidOptionError(
          'checkpointing.alignmentTimeout',
          'unaligned: true takes every checkpoint unaligned from its first barrier, so there is no alignment to time out; set one of the two',
        );
      }
    }
    if (c.incremental !== undefined && typeof c.incremental !== 'boolean') {
      throw new InvalidOptionError(
        'checkpointing.incremental',
        `must be a boolean, got ${JSON.stringify(c.incremental)}`,
      );
    }
    if (c.dir !== undefined && (typeof c.dir !== 'string' || c.dir.length === 0)) {
      throw new InvalidOptionError('checkpointing.dir', 'must be a non-empty path');
    }
    checkpointing = {
      interval: int('checkpointing.interval', c.interval, 10),
      mode,
      unaligned: c.unaligned ?? false,
      alignmentTimeout:
        c.alignmentTimeout === undefined
          ? null
          : int('checkpointing.alignmentTimeout', c.alignmentTimeout, 0),
      timeout: c.timeout === undefined ? 600_000 : int('checkpointing.timeout', c.timeout, 1),
      minPause: c.minPause === undefined ? 0 : int('checkpointing.minPause', c.minPause, 0),
      maxConcurrent:
        c.maxConcurrent === undefined ? 1 : int('checkpointing.maxConcurrent', c.maxConcurrent, 1),
      tolerableFailures:
        c.tolerableFailures === undefined
          ? 0
          : int('checkpointing.tolerableFailures', c.tolerableFailures, 0),
      dir: c.dir,
      retain: c.retain === undefined ? 3 : int('checkpointing.retain', c.retain, 1),
      incremental: c.incremental ?? false,
      fullEvery:
        c.fullEvery === undefined ? DEFAULT_FULL_EVERY : int('checkpointing.fullEvery', c.fullEvery, 1),
    };
  }
  const stateBackend = o.stateBackend ?? 'heap';
  if (stateBackend !== 'heap' && stateBackend !== 'lmdb') {
    throw new InvalidOptionError(
      'stateBackend',
      `must be 'heap' or 'lmdb', got ${JSON.stringify(stateBackend)}`,
    );
  }
  const restartStrategy = o.restartStrategy ?? { type: 'none' };
  // Built once here only to check it up front (the client builds its own per run).
  createRestartStrategy(restartStrategy);
  const strategyKeys = RESTART_STRATEGY_OPTION_KEYS[restartStrategy.type];
  checkKnownKeys<RestartStrategyOptions>(restartStrategy, 'restartStrategy', strategyKeys);
  if (o.restoreFrom !== undefined && (typeof o.restoreFrom !== 'string' || o.restoreFrom.length === 0)) {
    throw new InvalidOptionError('restoreFrom', "must be 'latest' or a checkpoint directory path");
  }
  // A restore request that would be ignored is a mistake, not a fresh start.
  if (o.restoreFrom !== undefined && checkpointing === null) {
    throw new InvalidOptionError('restoreFrom', 'needs `checkpointing` (CLI: --checkpoint-dir DIR)');
  }
  if (
    o.restoreFrom === 'latest' &&
    checkpointing?.dir === undefined &&
    o.cluster?.checkpointDir === undefined
  ) {
    throw new InvalidOptionError(
      'restoreFrom',
      "'latest' needs checkpointing.dir (CLI --checkpoint-dir DIR): without it checkpoints go to a temporary directory",
    );
  }
  const allowNonRestoredState = bool('allowNonRestoredState', o.allowNonRestoredState);
  const allowFallbackPastDamaged = bool('allowFallbackPastDamaged', o.allowFallbackPastDamaged);
  const ch = o.channels ?? {};
  if (typeof ch !== 'object' || ch === null) {
    throw new InvalidOptionError('channels', `must be an object, got ${JSON.stringify(ch)}`);
  }
  checkKnownKeys(ch, 'channels', CHANNEL_OPTION_KEYS);
  const channels = {
    ringBytes: ch.ringBytes === undefined ? 1 << 20 : int('channels.ringBytes', ch.ringBytes, 4096, 1 << 30),
    batchRecords:
      ch.batchRecords === undefined ? 256 : int('channels.batchRecords', ch.batchRecords, 1, 1 << 20),
    batchBytes:
      ch.batchBytes === undefined ? 64 * 1024 : int('channels.batchBytes', ch.batchBytes, 64, 1 << 28),
    recordFormat: recordFormatOf(ch.recordFormat),
    debloat: debloatOf(ch.debloat),
    wakeDelayMs:
      ch.wakeDelayMs === undefined
        ? DEFAULT_WAKE_DELAY_MS
        : int('channels.wakeDelayMs', ch.wakeDelayMs, 0, 60_000),
  };
  return {
    parallelism,
    maxParallelism,
    args,
    checkpointing,
    stateBackend,
    restartStrategy,
    restoreFrom: o.restoreFrom,
    allowNonRestoredState,
    allowFallbackPastDamaged,
    channels,
    metricsInterval:
      o.metricsInterval === undefined ? 1000 : int('metricsInterval', o.metricsInterval, 0, 3_600_000),
    stuckTaskTimeout:
      o.stuckTaskTimeout === undefined
        ? DEFAULT_STUCK_TASK_TIMEOUT_MS
        : int('stuckTaskTimeout', o.stuckTaskTimeout, 0, 86_400_000),
    workerNice: workerNiceOf(o.workerNice, process.platform),
    signal: signalOf(o.signal),
    logger: loggerOf(o.logger),
    dashboard: resolveDashboardOptions(o.dashboard),
    faultInjection: faultsOf(o.faultInjection),
    cluster: clusterOf(o, checkpointing),
  };
}

/**
 * The `cluster` option against the rest: a cluster job checkpoints exactly-once into a directory
 * every instance shares; it restarts over the live instances when one dies, and after a task's own
 * failure as `restartStrategy` says (the coordinator decides). `restoreFrom` ('latest': the shared
 * directory; or a savepoint / checkpoint directory) is decided by the coordinator
 * (src/cluster/cluster-restore.ts).
 */
function clusterOf(
  o: JobOptions,
  checkpointing: ResolvedJobOptions['checkpointing'],
): ResolvedJobOptions['cluster'] {
  if (o.cluster === undefined) return null;
  const c = resolveClusterJobOptions(o.cluster);
  if (checkpointing === null || checkpointing.mode !== 'exactly-once')
    throw new InvalidOptionError(
      'cluster',
      "needs checkpointing: { mode: 'exactly-once', interval } (CLI: --checkpoint-interval MS): the instances agree on one checkpoint across the job",
    );
  const dir = c.checkpointDir ?? checkpointing.dir;
  if (dir === undefined)
    throw new InvalidOptionError(
      'cluster.checkpointDir',
      'is required (or checkpointing.dir; CLI --checkpoint-dir DIR): the same directory on every instance, which every instance can read and write',
    );
  if (
    c.checkpointDir !== undefined &&
    checkpointing.dir !== undefined &&
    c.checkpointDir !== checkpointing.dir
  )
    throw new InvalidOptionError(
      'cluster.checkpointDir',
      `differs from checkpointing.dir (${JSON.stringify(c.checkpointDir)} vs ${JSON.stringify(checkpointing.dir)}): give one`,
    );
  return { ...c, checkpointDir: dir };
}

function faultsOf(faults: unknown): readonly InjectedFault[] {
  if (faults === undefined) return [];
  if (!Array.isArray(faults)) throw new InvalidOptionError('faultInjection', 'must be an array of faults');
  return faults.map((f, i) => {
    const name = `faultInjection[${i}]`;
    if (typeof f !== 'object' || f === null) throw new InvalidOptionError(name, 'must be an object');
    checkKnownKeys(f, name, FAULT_KEYS);
    if (f.kind !== 'throw' && f.kind !== 'exit') {
      throw new InvalidOptionError(
        `${name}.kind`,
        `must be 'throw' or 'exit', got ${JSON.stringify(f.kind)}`,
      );
    }
    if (typeof f.operatorUid !== 'string' || f.operatorUid.length === 0) {
      throw new InvalidOptionError(`${name}.operatorUid`, 'must be an operator uid');
    }
    return {
      kind: f.kind,
      operatorUid: f.operatorUid,
      attempt: int(`${name}.attempt`, f.attempt, 0),
      subtaskIndex: int(`${name}.subtaskIndex`, f.subtaskIndex, 0),
      atRecord: int(`${name}.atRecord`, f.atRecord, 1),
    };
  });
}

const FAULT_KEYS: KeyTable<InjectedFault> = {
  kind: true,
  attempt: true,
  operatorUid: true,
  subtaskIndex: true,
  atRecord: true,
};

/**
 * The `workerNice` option: 0–19 levels (more would only be capped at 19), and non-zero only where
 * a thread can lower itself alone. Refused rather than skipped elsewhere: the embedding service
 * asked for an order of priority it would silently not get. `platform` is a parameter for tests.
 */
export function workerNiceOf(v: unknown, platform: NodeJS.Platform): number {
  if (v === undefined) return 0;
  const nice = int('workerNice', v, 0, 19);
  if (nice !== 0 && platform !== 'linux')
    throw new InvalidOptionError(
      'workerNice',
      `lowers each worker thread's own priority, which only Linux keeps per thread; on ${platform} it would lower the whole process, the service too (use 0 there)`,
    );
  return nice;
}

function bool(name: string, v: unknown): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean')
    throw new InvalidOptionError(name, `must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

function signalOf(signal: unknown): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  if (!(signal instanceof AbortSignal)) {
    throw new InvalidOptionError(
      'signal',
      "must be an AbortSignal (e.g. AbortSignal.timeout(ms), or an AbortController's signal)",
    );
  }
  return signal;
}

function loggerOf(logger: unknown): Logger | undefined {
  if (logger === undefined) return undefined;
  if (typeof logger !== 'object' || logger === null) {
    throw new InvalidOptionError('logger', 'must be a pino-compatible logger: { debug, info, warn, error }');
  }
  for (const level of LOG_LEVELS) {
    if (typeof (logger as Record<string, unknown>)[level] !== 'function') {
      throw new InvalidOptionError(
        'logger',
        `must be a pino-compatible logger; its ${level} is not a function`,
      );
    }
  }
  return logger as Logger;
}

function debloatOf(debloat: unknown): BufferDebloatOptions | null {
  if (debloat === undefined || debloat === false) return null;
  if (debloat === true) return DEFAULT_BUFFER_DEBLOAT;
  if (typeof debloat !== 'object' || debloat === null || Array.isArray(debloat)) {
    throw new InvalidOptionError(
      'channels.debloat',
      `must be a boolean or { targetMs, periodMs, minBytes, samples, thresholdPercent }, got ${JSON.stringify(debloat)}`,
    );
  }
  checkKnownKeys(debloat as Partial<BufferDebloatOptions>, 'channels.debloat', DEBLOAT_OPTION_KEYS);
  return bufferDebloatOptions(debloat as Partial<BufferDebloatOptions>);
}

const DEBLOAT_OPTION_KEYS: KeyTable<BufferDebloatOptions> = {
  targetMs: true,
  periodMs: true,
  minBytes: true,
  samples: true,
  thresholdPercent: true,
};

function recordFormatOf(format: unknown): 'auto' | 'msgpack' {
  if (format === undefined || format === 'auto') return 'auto';
  if (format === 'msgpack') return 'msgpack';
  throw new InvalidOptionError(
    'channels.recordFormat',
    `must be 'auto' or 'msgpack', got ${JSON.stringify(format)}`,
  );
}
