/** The `weir` command: argument parsing and dispatch to subcommands. */

import { readFileSync } from 'node:fs';
import {
  type CompletedCheckpointStats,
  type JobClient,
  type JobMetrics,
  type JobResult,
  startJob,
} from '../coordinator/job-client.js';
import { JobCancelledError, JobModuleError, WeirError } from '../errors.js';
import { describePlan } from '../graph/describe-plan.js';
import { didYouMean } from '../util/did-you-mean.js';
import { errorJson } from './error-json.js';
import { printRestoreEvents } from './restore-events.js';
import { parseRunArgs, type RunArgs, runHelp, wantsHelp } from './run-args.js';
import { formatRunTimes } from './run-summary.js';
import { UsageError } from './usage-error.js';

export { parseRunArgs } from './run-args.js';

/** A `weir` command: its name, its line in the usage, its `--help` text and what runs it. */
interface Command {
  readonly name: string;
  readonly usage: string;
  readonly help: () => string | Promise<string>;
  readonly run: (args: readonly string[]) => Promise<number>;
}

const COMMANDS: readonly Command[] = [
  {
    name: 'run',
    usage: 'weir run <job> [flags]         run a job module to its end (weir run --help: the flags)',
    help: runHelp,
    run: (args) => runCommand(args),
  },
  {
    name: 'checkpoints',
    usage: 'weir checkpoints DIR [--json]  list and verify the checkpoints in DIR',
    help: () =>
      [
        'usage: weir checkpoints DIR [--json]',
        '',
        'Lists the checkpoints in DIR (a --checkpoint-dir or a savepoint) and verifies every',
        "chunk's checksum. Exit codes: 0 all good, 1 damage found, 2 usage error.",
      ].join('\n'),
    run: async (args) => (await import('./checkpoints-command.js')).checkpointsCommand(args),
  },
  {
    name: 'cluster',
    usage:
      'weir cluster status|savepoint DIR --cluster URL --cluster-name NAME [--json]\n' +
      '                                 members and coordinator of a scale-out cluster (in progress);\n' +
      '                                 stop its job with a savepoint in DIR',
    help: async () => (await import('./cluster-command.js')).CLUSTER_HELP,
    run: async (args) => (await import('./cluster-command.js')).clusterCommand(args),
  },
  {
    name: 'verify',
    usage:
      'weir verify <job> [flags]      check exactly-once of a job under injected failures\n' +
      '                                 (weir verify --help: the flags, failure kinds, exit codes)',
    help: async () => (await import('./verify-command.js')).VERIFY_HELP,
    run: async (args) => (await import('./verify-command.js')).verifyCommand(args),
  },
  {
    name: 'bench',
    usage:
      'weir bench [--suite NAME[,NAME]] [--quick] [--json PATH] [--html PATH] [suite flags]\n' +
      '                                 the benchmark suites of a source checkout (npm run bench)',
    // The command's own usage (flags and suites), loaded only when asked for.
    help: async () => (await import('./bench-command.js')).BENCH_USAGE,
    run: async (args) => (await import('./bench-command.js')).benchCommand(args),
  },
  {
    name: 'demo',
    usage: 'weir demo                      the end-to-end demo (what `npm start` runs)',
    help: () =>
      [
        'usage: weir demo',
        '',
        'Runs the end-to-end demo: exactly-once vs at-least-once, with a crash in each run (see the',
        'README). WEIR_DEMO_RECORDS, WEIR_DEMO_RATE and WEIR_DEMO_OUT change it.',
      ].join('\n'),
    run: () => demoCommand(),
  },
];

/** Exit codes of every command; the README lists the same. */
const EXIT_CODES =
  'exit codes: 0 success, 1 the job (or command) failed, 2 usage error, 130 SIGINT, 143 SIGTERM;\n' +
  'weir verify also: 1 output differs under failures, 3 non-deterministic job, 4 could not verify';

function usage(): string {
  return [
    'usage:',
    ...COMMANDS.map((c) => `  ${c.usage}`),
    "  weir help [COMMAND]            this help, or a command's (also: weir COMMAND --help)",
    '  weir --version                 the installed weir version',
    '',
    EXIT_CODES,
  ].join('\n');
}

/** weir's version, from the package.json above dist/ (read when asked: not on any hot path). */
export function weirVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  switch (name) {
    case undefined:
    case '--help':
    case '-h':
      console.log(usage());
      return 0;
    case '--version':
    case '-V':
    case 'version':
      console.log(weirVersion());
      return 0;
    case 'help': {
      if (rest[0] === undefined) {
        console.log(usage());
        return 0;
      }
      const command = findCommand(rest[0]);
      if (typeof command === 'string') {
        console.error(command);
        return 2;
      }
      console.log(await command.help());
      return 0;
    }
  }
  const command = findCommand(name);
  if (typeof command === 'string') {
    console.error(`${command}\n${usage()}`);
    return 2;
  }
  if (wantsHelp(rest)) {
    console.log(await command.help());
    return 0;
  }
  return command.run(rest);
}

/** The command named `name`, or the usage-error message for an unknown one. */
function findCommand(name: string): Command | string {
  const command = COMMANDS.find((c) => c.name === name);
  if (command) return command;
  const names = [...COMMANDS.map((c) => c.name), 'help'];
  return `weir: unknown command ${JSON.stringify(name)}${didYouMean(name, names)}`;
}

async function runCommand(args: readonly string[]): Promise<number> {
  let parsed: RunArgs;
  try {
    parsed = parseRunArgs(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`weir run: ${e.message}\n(weir run --help lists the flags)`);
    return 2;
  }
  const started = performance.now();
  let metricsEndpoint: { url: string; close(): Promise<void> } | null = null;
  let stoppedBy: NodeJS.Signals | null = null;
  const stop = installStopHandlers(parsed.savepointOnStop, (signal) => {
    stoppedBy = signal;
  });
  try {
    const client = await startJob(parsed.job, parsed.options);
    const loadMs = performance.now() - started;
    stop.attach(client);
    if (client.dashboardUrl) console.error(`weir run: dashboard at ${client.dashboardUrl}`);
    if (parsed.metricsPort !== undefined) {
      const { serveMetrics } = await import('./metrics-port.js');
      metricsEndpoint = await serveMetrics(client, parsed.metricsPort, client.options.dashboard?.host);
      console.error(`weir run: Prometheus metrics at ${metricsEndpoint.url}`);
    }
    if (parsed.plan && !parsed.json) console.log(describePlan(client.plan));
    // Progress goes to stderr, so it does not disturb --json on stdout.
    printRestoreEvents(client, parsed.verbose);
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
    if (result.status === 'stopped' && result.savepoint && stoppedBy === null) {
      // A cluster instance stopped by a stop-with-savepoint asked on another instance.
      const message =
        `stopped with savepoint ${result.savepoint.checkpointId} in ${result.savepoint.path} (asked on another instance of the cluster); ` +
        `resume with --restore ${result.savepoint.path}`;
      if (parsed.json)
        console.log(JSON.stringify({ status: 'stopped', savepoint: result.savepoint, message }));
      else console.error(`weir run: ${message}`);
      return 0;
    }
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
    else printSummary(result, performance.now() - started, loadMs);
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
      // A JobModuleError's message already says what its cause says, located (file:line:column).
      const cause = (e as { cause?: unknown }).cause;
      if (cause instanceof Error && !(e instanceof JobModuleError))
        console.error(`caused by: ${cause.message}`);
    }
    return 1;
  } finally {
    stop.dispose();
    await metricsEndpoint?.close();
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

function jsonSummary(r: JobResult): unknown {
  const sinks: Record<string, number> = {};
  for (const [name, records] of Object.entries(r.sinks)) sinks[name] = records.length;
  return {
    status: r.status,
    durationMs: Math.round(r.metrics.durationMs),
    startupMs: r.metrics.startupMs === undefined ? undefined : Math.round(r.metrics.startupMs),
    restarts: r.restarts,
    checkpoints: r.checkpoints,
    operators: r.metrics.operators,
    sinkRecords: sinks,
  };
}

function printSummary(r: JobResult, wallMs: number, loadMs: number): void {
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
  console.log(
    `\n${formatRunTimes({
      wallMs,
      loadMs,
      jobMs: r.metrics.durationMs,
      deployToRunningMs: r.metrics.startupMs,
      sourceRecords: sourceOut,
    })}; restarts ${r.restarts}, checkpoints ${r.checkpoints.length}`,
  );
  for (const [name, records] of Object.entries(r.sinks))
    console.log(`sink ${name}: ${records.length} records`);
}

async function demoCommand(): Promise<number> {
  const { runDemo } = await import('../demo/demo.js');
  return runDemo();
}
