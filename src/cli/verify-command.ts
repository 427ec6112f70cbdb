/**
 * `weir verify <job> [flags]`: runs `verifyJob` on a job module and prints the summary table
 * (or the report as JSON with `--json`); `--html PATH` also writes the HTML report.
 *
 * Exit codes: 0 the job's committed output under failures equals its failure-free output
 * (exactly-once; at-least-once: nothing lost); 1 it does not; 2 usage error; 3 the job is
 * non-deterministic (two failure-free runs differ: fix that first); 4 verify could not run the
 * job (a sink it cannot read back, the job failed, a bad job module, verify itself failed or
 * ended without a result): a typed error on stderr and, with `--json`, `{ verdict: 'error' }` on
 * stdout. No path ends without output.
 */

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { VerifyIncompleteError, WeirError } from '../errors.js';
import { FAILURE_KINDS, type FailureKind } from '../verify/failure-schedule.js';
import { type VerifyOptions, verifyJob } from '../verify/verify-job.js';
import { formatVerifySummary, verifyExitCode, verifyReportHtml } from '../verify/verify-report.js';
import { errorJson } from './error-json.js';
import { UsageError } from './usage-error.js';

export const VERIFY_HELP = [
  'usage: weir verify <job> [--failures N] [--seed S] [--kinds throw,exit,sigkill,savepoint,rescale]',
  '                         [--mode exactly-once|at-least-once] [--parallelism P]',
  '                         [--checkpoint-interval MS] [--key FIELD] [--arg key=value]... [--json]',
  '                         [--html PATH]',
  '',
  'Checks that YOUR job keeps its guarantee under failures, without changing its code:',
  '  1. runs it twice without failures; if the two committed outputs differ, the job is',
  '     non-deterministic: the differing records and likely causes are reported (exit 3);',
  '  2. runs it once under a seeded schedule of N failures, one per attempt, and compares what',
  '     every sink committed with the failure-free output, as multisets of records: lost,',
  '     duplicated, changed. At-least-once fails only on lost records (duplicates are counted).',
  '',
  'Failure kinds (--kinds, default all):',
  "  throw   an exception before a chosen operator's function sees a chosen record",
  '  exit    the worker thread of that operator exits (process.exit) at that record',
  '  savepoint  stop with a savepoint 1-3 checkpoints into the attempt, resume from it in a new run',
  '  rescale    the same, resuming at another parallelism (one up, or one down when above 1)',
  '  sigkill    SIGKILL the process running the job 1-3 checkpoints into the attempt, then a new',
  '             process restores the latest checkpoint (--restore latest); with a sigkill in the',
  '             schedule every run of the job is a child process of verify',
  '',
  "--key FIELD: the output records are keyed by FIELD (a path: key, user.id); each key's",
  'sinks.collect records must then also come in the reference order (exactly-once), and the',
  'report names the first key and position that differ.',
  '',
  'Sinks compared: sinks.collect, sinks.file, sinks.log, sinks.postgres (append mode),',
  'sinks.jetstream (string subject), sinks.redisStream, and sinks.custom with readCommitted();',
  'sinks.stdout and sinks.discard are listed as not compared; any other sink is refused.',
  'Outputs are read before and after each run, so earlier output in the same directory,',
  'table or stream is left alone and does not count.',
  '',
  'Defaults: --failures 3 --seed 1 --mode exactly-once --parallelism 1 --checkpoint-interval 100.',
  'Exit codes: 0 pass, 1 output differs under failures, 2 usage error, 3 non-deterministic job,',
  '4 could not verify (a sink it cannot read, no sink to compare, the job failed, verify itself',
  'failed); with --json, that error is also printed on stdout as {"verdict": "error", "error": {...}}.',
].join('\n');

export async function verifyCommand(args: readonly string[]): Promise<number> {
  let job: string;
  let options: VerifyOptions;
  let json: boolean;
  let html: string | undefined;
  try {
    ({ job, options, json, html } = parseVerifyArgs(args));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`weir verify: ${e.message}\n\n${VERIFY_HELP}`);
    return 2;
  }
  // Every way this command ends prints something: a report, or a typed error (with --json also
  // as JSON on stdout, so a caller parsing stdout always gets a document). `finished` guards the
  // one way that prints nothing by itself: the event loop emptying while verify still awaits (a
  // promise that never settles); node then exits with code 0 and no output at all.
  let finished = false;
  const onExit = (): void => {
    if (finished) return;
    reportError(new VerifyIncompleteError(job), json);
    process.exitCode = 4;
  };
  // Before bin/weir.js's own guard, which then sees the exit code set and stays silent.
  process.prependListener('exit', onExit);
  try {
    let report: Awaited<ReturnType<typeof verifyJob>>;
    try {
      report = await verifyJob(job, options);
    } catch (e) {
      reportError(e, json, job);
      return 4;
    }
    if (json) console.log(JSON.stringify(report, null, 2));
    else console.log(formatVerifySummary(report));
    if (html !== undefined) {
      writeFileSync(html, verifyReportHtml(report));
      console.error(`report written to ${html}`);
    }
    return verifyExitCode(report);
  } finally {
    finished = true;
    process.off('exit', onExit);
  }
}

/**
 * Why verify could not run, on stderr (a weir error by its message, anything else with its stack:
 * that is a bug to report) and, with --json, as `{ "verdict": "error", "error": … }` on stdout.
 * Synchronous writes only: it also runs in the process's 'exit' event.
 */
function reportError(e: unknown, json: boolean, job?: string): void {
  const text = e instanceof WeirError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
  process.stderr.write(`${job === undefined ? '' : `weir verify: could not verify ${job}: `}${text}\n`);
  const cause = (e as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof Error && !(e instanceof WeirError && e.message.includes(cause.message))) {
    process.stderr.write(`caused by: ${cause.stack ?? cause.message}\n`);
  }
  if (json) process.stdout.write(`${JSON.stringify({ verdict: 'error', error: errorJson(e) }, null, 2)}\n`);
}

const int = (flag: string, v: string | undefined, min: number): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min)
    throw new UsageError(`--${flag} must be an integer >= ${min}, got ${v}`);
  return n;
};

export function parseVerifyArgs(args: readonly string[]): {
  job: string;
  options: VerifyOptions;
  json: boolean;
  html: string | undefined;
} {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError('needs exactly one job module');
  const kinds = values.kinds?.split(',').map((k) => k.trim());
  for (const k of kinds ?? []) {
    if (!(FAILURE_KINDS as readonly string[]).includes(k)) {
      throw new UsageError(
        `unknown failure kind ${JSON.stringify(k)}; available: ${FAILURE_KINDS.join(', ')} (sigkill is not implemented yet)`,
      );
    }
  }
  const mode = values.mode;
  if (mode !== undefined && mode !== 'exactly-once' && mode !== 'at-least-once') {
    throw new UsageError(`--mode must be exactly-once or at-least-once, got ${mode}`);
  }
  if (values.key === '') throw new UsageError('--key needs a field path, such as key or user.id');
  const jobArgs: Record<string, string> = {};
  for (const kv of values.arg ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--arg must be key=value, got ${JSON.stringify(kv)}`);
    jobArgs[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return {
    job: positionals[0],
    options: {
      failures: int('failures', values.failures, 0),
      seed: int('seed', values.seed, 0),
      kinds: kinds as FailureKind[] | undefined,
      mode,
      parallelism: int('parallelism', values.parallelism, 1),
      checkpointInterval: int('checkpoint-interval', values['checkpoint-interval'], 10),
      args: jobArgs,
      ...(values.key === undefined ? {} : { key: values.key }),
    },
    json: values.json ?? false,
    html: values.html,
  };
}

function parse(args: readonly string[]) {
  return parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      failures: { type: 'string' },
      seed: { type: 'string' },
      kinds: { type: 'string' },
      mode: { type: 'string' },
      parallelism: { type: 'string' },
      'checkpoint-interval': { type: 'string' },
      key: { type: 'string' },
      arg: { type: 'string', multiple: true },
      json: { type: 'boolean' },
      html: { type: 'string' },
    },
  });
}
