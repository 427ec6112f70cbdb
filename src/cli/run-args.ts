/**
 * `weir run`'s flags: one table ({@link RUN_FLAGS}) from which the parser, the unknown-flag check
 * ("did you mean") and `weir run --help` are all built. A new flag is one row here plus, if it
 * maps to a job option, one line in {@link parseRunArgs}.
 */

import { parseArgs } from 'node:util';
import type { JobOptions } from '../coordinator/job-options.js';
import { didYouMean } from '../util/did-you-mean.js';
import { UsageError } from './usage-error.js';

/** One `weir run` flag. */
export interface RunFlag {
  readonly name: string;
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** Placeholder for the value in the help (string flags), e.g. `N`. */
  readonly value?: string;
  readonly help: string;
}

export const RUN_FLAGS: readonly RunFlag[] = [
  { name: 'parallelism', type: 'string', short: 'p', value: 'N', help: 'subtasks per operator (default 1)' },
  {
    name: 'max-parallelism',
    type: 'string',
    value: 'N',
    help: 'key groups; the most a restore can rescale to (128)',
  },
  { name: 'arg', type: 'string', multiple: true, value: 'key=value', help: 'a job argument (repeatable)' },
  {
    name: 'checkpoint-interval',
    type: 'string',
    value: 'MS',
    help: 'checkpoint every MS ms (turns checkpoints on)',
  },
  {
    name: 'mode',
    type: 'string',
    value: 'exactly-once|at-least-once',
    help: 'checkpoint mode (exactly-once)',
  },
  {
    name: 'checkpoint-dir',
    type: 'string',
    value: 'DIR',
    help: 'where checkpoints are kept (a temporary dir)',
  },
  {
    name: 'restore',
    type: 'string',
    value: 'latest|PATH',
    help: 'resume from the latest checkpoint or a savepoint',
  },
  { name: 'restart-attempts', type: 'string', value: 'N', help: 'restart a failed job up to N times (none)' },
  { name: 'state-backend', type: 'string', value: 'heap|lmdb', help: 'where keyed state lives (heap)' },
  {
    name: 'worker-nice',
    type: 'string',
    value: 'N',
    help: 'run the job threads N nice levels below the main thread (0; Linux)',
  },
  { name: 'unaligned', type: 'boolean', help: 'unaligned exactly-once checkpoints' },
  {
    name: 'alignment-timeout',
    type: 'string',
    value: 'MS',
    help: 'take a checkpoint unaligned at a task whose alignment lasts MS',
  },
  { name: 'incremental', type: 'boolean', help: 'incremental checkpoints' },
  {
    name: 'savepoint-on-stop',
    type: 'string',
    value: 'DIR',
    help: 'on SIGTERM/SIGINT take a savepoint into DIR',
  },
  {
    name: 'allow-non-restored-state',
    type: 'boolean',
    help: 'restore even if state of removed operators must be dropped',
  },
  {
    name: 'allow-fallback-past-damaged',
    type: 'boolean',
    help: 'restore an older checkpoint past damaged ones (duplicates)',
  },
  {
    name: 'dashboard',
    type: 'string',
    value: '[PORT]',
    help: 'serve a live web dashboard (default port: a free one; URL printed)',
  },
  { name: 'dashboard-host', type: 'string', value: 'HOST', help: 'interface for the dashboard (127.0.0.1)' },
  { name: 'metrics-port', type: 'string', value: 'PORT', help: 'serve Prometheus text at /metrics' },
  {
    name: 'cluster',
    type: 'string',
    value: 'URL[,URL]',
    help: 'run as one instance of a job over NATS (needs --cluster-name, --checkpoint-dir)',
  },
  { name: 'cluster-name', type: 'string', value: 'NAME', help: 'the cluster this instance joins' },
  {
    name: 'instances',
    type: 'string',
    value: 'N',
    help: 'instances to wait for before deploying (default 1)',
  },
  { name: 'plan', type: 'boolean', help: 'print the execution plan first' },
  { name: 'json', type: 'boolean', help: 'print the result as one JSON line on stdout' },
  { name: 'verbose', type: 'boolean', short: 'v', help: 'progress and checkpoints on stderr' },
  { name: 'help', type: 'boolean', short: 'h', help: 'this help' },
];

/** What `weir run` was asked to do. */
export interface RunArgs {
  readonly job: string;
  readonly options: JobOptions;
  readonly json: boolean;
  readonly plan: boolean;
  readonly verbose: boolean;
  readonly savepointOnStop: string | undefined;
  /** `--metrics-port`: serve Prometheus text at `/metrics` on this port. */
  readonly metricsPort: number | undefined;
}

/** `weir run --help`, built from {@link RUN_FLAGS}. */
export function runHelp(): string {
  const left = RUN_FLAGS.map(
    (f) => `${f.short ? `-${f.short}, ` : '    '}--${f.name}${f.value ? ` ${f.value}` : ''}`,
  );
  const width = Math.max(...left.map((l) => l.length));
  return [
    'usage: weir run <job> [flags]',
    '',
    'Runs a job module (.js, .mjs, or .ts: see the README for which Node loads .ts by itself)',
    'to its end, then prints a summary. Flags:',
    ...RUN_FLAGS.map((f, i) => `  ${left[i].padEnd(width)}  ${f.help}`),
    '',
    'SIGTERM/SIGINT stop the job (in-flight checkpoint aborted; exit 143/130); rerun with the same',
    '--checkpoint-dir and --restore latest to resume, or with --savepoint-on-stop DIR and --restore DIR.',
    'The dashboard is read-only unless WEIR_DASHBOARD_TOKEN is set: then cancel and stop-with-savepoint',
    'work for requests carrying Authorization: Bearer <token>.',
    'Exit codes: 0 finished, 1 the job failed, 2 usage error, 130 SIGINT, 143 SIGTERM.',
  ].join('\n');
}

/** Whether `args` ask for `weir run --help` (checked before anything else is validated). */
export function wantsHelp(args: readonly string[]): boolean {
  return args.some((a) => a === '--help' || a === '-h');
}

const parseOptions = Object.fromEntries(
  RUN_FLAGS.map((f) => [
    f.name,
    { type: f.type, ...(f.short ? { short: f.short } : {}), ...(f.multiple ? { multiple: true } : {}) },
  ]),
) as Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

/**
 * Rejects flags not in {@link RUN_FLAGS}, suggesting the closest one. `node:util` `parseArgs`
 * would reject them too, but without a suggestion.
 */
function checkKnownFlags(args: readonly string[]): void {
  const { tokens } = parseArgs({ args: [...args], allowPositionals: true, strict: false, tokens: true });
  const longs = RUN_FLAGS.map((f) => f.name);
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    const known = t.rawName.startsWith('--')
      ? longs.includes(t.name)
      : RUN_FLAGS.some((f) => f.short === t.name);
    if (!known)
      throw new UsageError(`unknown flag ${t.rawName}${didYouMean(t.name, longs, (c) => `--${c}`)}`);
  }
}

/** Parses `weir run` flags into job options; throws a {@link UsageError} naming the flag. */
export function parseRunArgs(rawArgs: readonly string[]): RunArgs {
  checkKnownFlags(rawArgs);
  const args = dashboardFlagWithValue(rawArgs);
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof parseOptions }>
  >;
  try {
    parsed = parseArgs({ args: [...args], allowPositionals: true, options: parseOptions });
  } catch (e) {
    // A string flag without its value, a boolean flag given one: parseArgs says which.
    throw new UsageError((e as Error).message);
  }
  const values = parsed.values as Record<string, string | string[] | boolean | undefined>;
  const str = (name: string) => values[name] as string | undefined;
  const bool = (name: string) => values[name] as boolean | undefined;
  const { positionals } = parsed;
  if (positionals.length !== 1)
    throw new UsageError(
      positionals.length === 0
        ? 'a job module is needed: weir run <job> [flags]'
        : `one job module expected, got ${positionals.length}: ${positionals.join(' ')}`,
    );
  const num = (flag: string): number | undefined => {
    const v = str(flag);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n))
      throw new UsageError(`--${flag} must be a number, got ${JSON.stringify(v)}`);
    return n;
  };
  const oneOf = <T extends string>(flag: string, allowed: readonly T[]): T | undefined => {
    const v = str(flag);
    if (v === undefined || (allowed as readonly string[]).includes(v)) return v as T | undefined;
    throw new UsageError(
      `--${flag} must be ${allowed.join(' or ')}, got ${JSON.stringify(v)}${didYouMean(v, allowed)}`,
    );
  };
  const jobArgs: Record<string, string> = {};
  for (const kv of (values.arg as string[] | undefined) ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--arg must be key=value, got ${JSON.stringify(kv)}`);
    jobArgs[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const interval = num('checkpoint-interval');
  const attempts = num('restart-attempts');
  const mode = oneOf('mode', ['exactly-once', 'at-least-once'] as const);
  const wantsCheckpoints =
    interval !== undefined ||
    mode !== undefined ||
    str('checkpoint-dir') !== undefined ||
    bool('unaligned') ||
    str('alignment-timeout') !== undefined ||
    bool('incremental') ||
    str('savepoint-on-stop') !== undefined ||
    str('restore') !== undefined;
  const cluster = str('cluster');
  if (cluster === undefined && (str('cluster-name') !== undefined || str('instances') !== undefined))
    throw new UsageError(
      `--${str('cluster-name') !== undefined ? 'cluster-name' : 'instances'} needs --cluster URL`,
    );
  if (cluster !== undefined && str('cluster-name') === undefined)
    throw new UsageError('--cluster needs --cluster-name NAME');
  const options: JobOptions = {
    parallelism: num('parallelism'),
    maxParallelism: num('max-parallelism'),
    args: jobArgs,
    stateBackend: oneOf('state-backend', ['heap', 'lmdb'] as const),
    workerNice: num('worker-nice'),
    restoreFrom: str('restore'),
    allowNonRestoredState: bool('allow-non-restored-state'),
    allowFallbackPastDamaged: bool('allow-fallback-past-damaged'),
    checkpointing: wantsCheckpoints
      ? {
          interval: interval ?? 1000,
          mode,
          dir: str('checkpoint-dir'),
          unaligned: bool('unaligned'),
          alignmentTimeout: num('alignment-timeout'),
          incremental: bool('incremental'),
        }
      : undefined,
    cluster:
      cluster !== undefined
        ? { servers: cluster.split(','), name: str('cluster-name')!, instances: num('instances') }
        : undefined,
    restartStrategy: attempts !== undefined ? { type: 'fixed-delay', attempts, delay: 0 } : undefined,
    dashboard:
      str('dashboard') !== undefined
        ? {
            port: num('dashboard'),
            host: str('dashboard-host'),
            // From the environment, so the secret is not in `ps` output.
            token: process.env.WEIR_DASHBOARD_TOKEN || undefined,
          }
        : undefined,
  };
  if (str('dashboard-host') !== undefined && str('dashboard') === undefined)
    throw new UsageError('--dashboard-host needs --dashboard');
  return {
    job: positionals[0],
    options,
    json: bool('json') ?? false,
    plan: bool('plan') ?? false,
    verbose: bool('verbose') ?? false,
    savepointOnStop: str('savepoint-on-stop'),
    metricsPort: num('metrics-port'),
  };
}

/** `--dashboard` takes an optional port: without one (next is a flag, or nothing) it means port 0. */
function dashboardFlagWithValue(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== '--dashboard') {
      out.push(args[i]);
      continue;
    }
    const next = args[i + 1];
    if (next !== undefined && /^\d+$/.test(next)) {
      out.push(`--dashboard=${next}`);
      i++;
    } else out.push('--dashboard=0');
  }
  return out;
}
