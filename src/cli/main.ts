/** The `weir` command: argument parsing and dispatch to subcommands. */

import { parseArgs } from 'node:util';
import {
  type CompletedCheckpointStats,
  type JobClient,
  type JobMetrics,
  type JobResult,
  startJob,
} from '../coordinator/job-client.js';
import type { JobOptions } from '../coordinator/job-options.js';
import { JobCancelledError, WeirError } from '../errors.js';
import { describePlan } from '../graph/describe-plan.js';

const USAGE = `usage:
  weir run <job> [--parallelism N] [--max-parallelism N] [--arg key=value]...
                 [--checkpoint-interval MS] [--mode exactly-once|at-least-once]
                 [--checkpoint-dir DIR] [--restore latest|PATH] [--restart-attempts N]
                 [--state-backend heap|lmdb] [--plan] [--json] [--verbose]
                 [--unaligned] [--incremental] [--savepoint-on-stop DIR]
                 SIGTERM/SIGINT stop the job (in-flight checkpoint aborted, exit 143/130);
                 rerun with the same --checkpoint-dir and --restore latest to resume;
                 with --savepoint-on-stop DIR they first take a savepoint into DIR
                 (resume with --restore DIR)
  weir checkpoints DIR [--json]   list and verify the checkpoints in DIR
  weir bench [--suite NAME[,NAME]] [--quick] [--json PATH] [--html PATH]
                       the benchmark suites of a source checkout (what \`npm run bench\` runs)
  weir demo            the end-to-end demo (what \`npm start\` runs)
  weir help`;

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'run':
      return runCommand(rest);
    case 'checkpoints':
      return (await import('./checkpoints-command.js')).checkpointsCommand(rest);
    case 'demo':
      return demoCommand();
    case 'bench':
      return (await import('./bench-command.js')).benchCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    default:
      console.error(`weir: unknown command ${JSON.stringify(command)}\n${USAGE}`);
      return 2;
  }
}

/** Parses `weir run` flags into job options; throws a usage error naming the flag. */
export function parseRunArgs(args: readonly string[]): {
  job: string;
  options: JobOptions;
  json: boolean;
  plan: boolean;
  verbose: boolean;
  savepointOnStop: string | undefined;
} {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      parallelism: { type: 'string', short: 'p' },
      'max-parallelism': { type: 'string' },
      arg: { type: 'string', multiple: true },
      'checkpoint-interval': { type: 'string' },
      mode: { type: 'string' },
      'checkpoint-dir': { type: 'string' },
      restore: { type: 'string' },
      'restart-attempts': { type: 'string' },
      'state-backend': { type: 'string' },
      unaligned: { type: 'boolean' },
      incremental: { type: 'boolean' },
      'savepoint-on-stop': { type: 'string' },
      json: { type: 'boolean' },
      plan: { type: 'boolean' },
      verbose: { type: 'boolean', short: 'v' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('weir run needs exactly one job module');
  const num = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new UsageError(`--${flag} must be a number, got ${JSON.stringify(v)}`);
    return n;
  };
  const jobArgs: Record<string, string> = {};
  for (const kv of values.arg ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--arg must be key=value, got ${JSON.stringify(kv)}`);
    jobArgs[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const interval = num('checkpoint-interval', values['checkpoint-interval']);
  const attempts = num('restart-attempts', values['restart-attempts']);
  const wantsCheckpoints =
    interval !== undefined ||
    values.mode !== undefined ||
    values['checkpoint-dir'] !== undefined ||
    values.unaligned ||
    values.incremental ||
    values['savepoint-on-stop'] !== undefined;
  const options: JobOptions = {
    parallelism: num('parallelism', values.parallelism),
    maxParallelism: num('max-parallelism', values['max-parallelism']),
    args: jobArgs,
    stateBackend: values['state-backend'] as JobOptions['stateBackend'],
    restoreFrom: values.restore,
    checkpointing: wantsCheckpoints
      ? {
          interval: interval ?? 1000,
          mode: values.mode as 'exactly-once' | 'at-least-once' | undefined,
          dir: values['checkpoint-dir'],
          unaligned: values.unaligned,
          incremental: values.incremental,
        }
      : undefined,
    restartStrategy: attempts !== undefined ? { type: 'fixed-delay', attempts, delay: 0 } : undefined,
  };
  return {
    job: positionals[0],
    options,
    json: values.json ?? false,
    plan: values.plan ?? false,
    verbose: values.verbose ?? false,
    savepointOnStop: values['savepoint-on-stop'],
  };
}

class UsageError extends Error {}

async function runCommand(args: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parseRunArgs>;
  try {
    parsed = parseRunArgs(args);
  } catch (e) {
    console.error(`weir run: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const started = Date.now();
  let stoppedBy: NodeJS.Signals | null = null;
  const stop = installStopHandlers(parsed.savepointOnStop, (signal) => {
    stoppedBy = signal;
  });
  try {
    const client = await startJob(parsed.job, parsed.options);
    stop.attach(client);
    if (parsed.plan && !parsed.json) console.log(describePlan(client.plan));
    // Progress goes to stderr, so it does not disturb --json on stdout.
    client.on('deployed', (e: { attempt: number; restoredFrom?: number }) => {
      if (e.restoredFrom !== undefined)
        console.error(`weir run: attempt ${e.attempt} restored from checkpoint ${e.restoredFrom}`);
    });
    if (parsed.verbose) {
      let last = { at: performance.now(), records: 0 };
      client.on('metrics', (m: JobMetrics) => {
        const records = m.operators
          .filter((o) => client.plan.vertices[o.vertexId].operators[0].spec.kind === 'source')
          .filter((o) => client.plan.vertices[o.vertexId].operators[0].name === o.name)
          .reduce((a, o) => a + o.recordsOut, 0);
        const now = performance.now();
        const rate = ((records - last.records) * 1000) / Math.max(1, now - last.at);
        last = { at: now, records };
        console.error(
          `weir run: ${records.toLocaleString('en-US')} source records, ${Math.max(0, Math.round(rate)).toLocaleString('en-US')} records/s`,
        );
      });
      client.on('checkpoint', (c: CompletedCheckpointStats) => {
        console.error(
          `weir run: checkpoint ${c.checkpointId} completed in ${Math.round(c.durationMs)} ms, ${c.bytes} bytes`,
        );
      });
    }
    client.on('restarting', (e: { attempt: number; cause: Error }) => {
      console.error(`weir run: restarting (attempt ${e.attempt}): ${e.cause.message.split('\n')[0]}`);
    });
    const result = await client.done;
    if (result.status === 'stopped' && result.savepoint) {
      const signal = (stoppedBy as NodeJS.Signals | null) ?? 'SIGTERM';
      const message =
        `stopped by ${signal} with savepoint ${result.savepoint.checkpointId} in ${result.savepoint.path}; ` +
        `resume with --restore ${result.savepoint.path}`;
      if (parsed.json)
        console.log(JSON.stringify({ status: 'stopped', signal, savepoint: result.savepoint, message }));
      else console.error(`weir run: ${message}`);
      return signal === 'SIGINT' ? 130 : 143;
    }
    if (parsed.json) console.log(JSON.stringify(jsonSummary(result)));
    else printSummary(result, Date.now() - started);
    return 0;
  } catch (e) {
    if (stoppedBy !== null && e instanceof JobCancelledError) {
      const dir = parsed.options.checkpointing?.dir;
      const message =
        `stopped by ${stoppedBy}; in-flight checkpoints were aborted and the checkpoint storage closed` +
        (dir ? `; resume with --checkpoint-dir ${dir} --restore latest` : '');
      if (parsed.json) console.log(JSON.stringify({ status: 'stopped', signal: stoppedBy, message }));
      else console.error(`weir run: ${message}`);
      return stoppedBy === 'SIGINT' ? 130 : 143;
    }
    if (parsed.json) {
      console.log(JSON.stringify({ status: 'failed', error: errorJson(e) }));
    } else {
      console.error(`weir run: ${e instanceof WeirError ? e.message : ((e as Error)?.stack ?? e)}`);
      const cause = (e as { cause?: unknown }).cause;
      if (cause instanceof Error) console.error(`caused by: ${cause.message}`);
    }
    return 1;
  } finally {
    stop.dispose();
  }
}

/**
 * SIGTERM/SIGINT stop a running job gracefully: the job is cancelled (every task stops, an
 * in-flight checkpoint is aborted, so its half-written chunks are never referenced and are
 * removed at the next open), the checkpoint storage is closed, and the command exits non-zero
 * (143 / 130) with a message. A second signal exits at once.
 */
function installStopHandlers(
  savepointDir: string | undefined,
  onStop: (signal: NodeJS.Signals) => void,
): {
  attach(client: JobClient): void;
  dispose(): void;
} {
  let client: JobClient | null = null;
  let signalled: NodeJS.Signals | null = null;
  const stopClient = (c: JobClient): void => {
    if (!savepointDir) {
      void c.cancel();
      return;
    }
    c.stopWithSavepoint(savepointDir).catch((e: unknown) => {
      console.error(`weir run: the savepoint failed (${(e as Error).message}); cancelling instead`);
      return c.cancel();
    });
  };
  const handler = (signal: NodeJS.Signals) => {
    if (signalled !== null) {
      console.error(`weir run: second ${signal}, exiting now`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    signalled = signal;
    onStop(signal);
    console.error(
      `weir run: ${signal} received, ${savepointDir ? `taking a savepoint into ${savepointDir} and ` : ''}stopping the job…`,
    );
    if (client) stopClient(client);
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return {
    attach(c) {
      client = c;
      // A signal that arrived while the job was being started.
      if (signalled !== null) stopClient(c);
    },
    dispose() {
      process.off('SIGTERM', handler);
      process.off('SIGINT', handler);
    },
  };
}

function errorJson(e: unknown): unknown {
  if (!(e instanceof Error)) return { message: String(e) };
  return {
    name: e.name,
    code: (e as { code?: string }).code,
    message: e.message,
    cause: e.cause === undefined ? undefined : errorJson(e.cause),
  };
}

function jsonSummary(r: JobResult): unknown {
  const sinks: Record<string, number> = {};
  for (const [name, records] of Object.entries(r.sinks)) sinks[name] = records.length;
  return {
    status: r.status,
    durationMs: Math.round(r.metrics.durationMs),
    restarts: r.restarts,
    checkpoints: r.checkpoints,
    operators: r.metrics.operators,
    sinkRecords: sinks,
  };
}

function printSummary(r: JobResult, wallMs: number): void {
  const rows = r.metrics.operators.map((o) => [
    o.name,
    String(o.parallelism),
    String(o.recordsIn),
    String(o.recordsOut),
  ]);
  const head = ['operator', 'parallelism', 'records in', 'records out'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(head));
  for (const row of rows) console.log(line(row));
  const sourceOut = r.metrics.operators
    .filter((o) =>
      r.plan.vertices.some(
        (v) =>
          v.vertexId === o.vertexId &&
          v.operators[0].name === o.name &&
          v.operators[0].spec.kind === 'source',
      ),
    )
    .reduce((a, o) => a + o.recordsOut, 0);
  const secs = r.metrics.durationMs / 1000;
  console.log(
    `\nfinished in ${(wallMs / 1000).toFixed(2)} s (job ${secs.toFixed(2)} s); ` +
      `${sourceOut} source records, ${Math.round(sourceOut / secs).toLocaleString('en-US')} records/s; ` +
      `restarts ${r.restarts}, checkpoints ${r.checkpoints.length}`,
  );
  for (const [name, records] of Object.entries(r.sinks))
    console.log(`sink ${name}: ${records.length} records`);
}

async function demoCommand(): Promise<number> {
  const { runDemo } = await import('./demo.js');
  return runDemo();
}
