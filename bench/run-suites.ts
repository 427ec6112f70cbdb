/**
 * What `weir bench` (`npm run bench`) runs: each selected suite in its own process
 * (`node --expose-gc --import tsx <script> [--quick] --json <tmp>`, stdout and stderr passed
 * through, so each suite prints its own tables), then one combined JSON — the machine, the
 * command, every suite's JSON — and optionally the same as an HTML page.
 *
 *   node --import tsx bench/run-suites.ts [--suite NAME[,NAME]] [--quick] [--json PATH] [--html PATH]
 *
 * A suite that fails is recorded as failed and the others still run; the exit code is then 1.
 * One process per suite: a suite's threads, heap and JIT state never affect the next one.
 */

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { CombinedResults, SuiteRun } from './harness/combined-results.js';
import { renderHtml } from './harness/html.js';
import { formatMachineInfo, machineInfo, printTable, resultsPath, writeJson } from './harness/index.js';
import { SUITE_FLAGS, SUITES, type SuiteEntry, selectSuites, suiteFlagArgs } from './suites.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

const USAGE = `usage: weir bench [--suite NAME[,NAME]] [--quick] [--json PATH] [--html PATH]
       suite flags: ${SUITE_FLAGS.map((f) => `--${f} V`).join(' ')} (see bench/README.md)
suites:
${SUITES.map((s) => `  ${s.name.padEnd(11)} ${s.what}`).join('\n')}`;

function parse(): {
  suites: SuiteEntry[];
  quick: boolean;
  json: string;
  html: string | undefined;
  flagArgs: Map<string, string[]>;
} {
  const { values } = parseArgs({
    strict: true,
    allowPositionals: false,
    options: {
      suite: { type: 'string', multiple: true },
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      html: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
      ...Object.fromEntries(SUITE_FLAGS.map((f) => [f, { type: 'string' as const }])),
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const names = (values.suite ?? []).flatMap((list) => list.split(',').map((n) => n.trim()));
  const quick = values.quick === true;
  const suites = selectSuites(names);
  const flagValues = values as Record<string, unknown>;
  const given = Object.fromEntries(SUITE_FLAGS.map((f) => [f, flagValues[f] as string | undefined]));
  return {
    suites,
    flagArgs: suiteFlagArgs(suites, given),
    quick,
    json: values.json ?? resultsPath(quick ? 'bench-quick.json' : 'bench.json'),
    html: values.html,
  };
}

/** Runs one suite to its end; never rejects (a failure is a `failed` SuiteRun). */
async function runSuite(
  suite: SuiteEntry,
  quick: boolean,
  tmp: string,
  flagArgs: readonly string[],
): Promise<SuiteRun> {
  const json = path.join(tmp, `${suite.name}.json`);
  const args = [
    '--expose-gc',
    '--import',
    'tsx',
    suite.script,
    ...(suite.args ?? []),
    ...flagArgs,
    ...(quick ? ['--quick'] : []),
    '--json',
    json,
  ];
  const command = `node ${args.join(' ').replace(json, `<tmp>/${suite.name}.json`)}`;
  const started = performance.now();
  process.stdout.write(`\n━━ ${suite.name} ━━ ${suite.what}\n$ ${command}\n\n`);
  const { exitCode, why } = await new Promise<{ exitCode: number | null; why: string }>((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
    child.on('error', (error) => resolve({ exitCode: null, why: `could not start: ${error.message}` }));
    child.on('exit', (code, signal) =>
      resolve({ exitCode: code, why: code === null ? `killed by ${signal}` : `exit code ${code}` }),
    );
  });
  const durationMs = performance.now() - started;
  if (exitCode !== 0) {
    process.stderr.write(`suite ${suite.name} failed: ${why}\n`);
    return { name: suite.name, command, status: 'failed', exitCode, durationMs, error: why };
  }
  if (!existsSync(json)) {
    return { name: suite.name, command, status: 'failed', exitCode, durationMs, error: 'no JSON written' };
  }
  const result = JSON.parse(readFileSync(json, 'utf8')) as SuiteRun['result'];
  return { name: suite.name, command, status: 'ok', exitCode, durationMs, result };
}

let options: ReturnType<typeof parse>;
try {
  options = parse();
} catch (e) {
  process.stderr.write(`weir bench: ${(e as Error).message}\n${USAGE}\n`);
  process.exit(2);
}

const machine = machineInfo();
const invokedAs =
  process.env.WEIR_BENCH_COMMAND ??
  `node --import tsx bench/run-suites.ts ${process.argv.slice(2).join(' ')}`.trim();
process.stdout.write(
  `weir bench: ${options.suites.map((s) => s.name).join(', ')}${options.quick ? ' (--quick: figures not for quoting)' : ''}\n` +
    `machine: ${formatMachineInfo(machine)}\n`,
);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'weir-bench-results-'));
const runs: SuiteRun[] = [];
try {
  for (const suite of options.suites)
    runs.push(await runSuite(suite, options.quick, tmp, options.flagArgs.get(suite.name) ?? []));
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const combined: CombinedResults = {
  benchmark: 'weir bench',
  command: invokedAs,
  quick: options.quick,
  machine,
  suites: runs,
};
writeJson(options.json, combined);
if (options.html) {
  mkdirSync(path.dirname(path.resolve(options.html)), { recursive: true });
  writeFileSync(options.html, renderHtml(combined));
}

process.stdout.write('\n━━ summary ━━\n');
printTable(runs.map((r) => ({ suite: r.name, status: r.status, seconds: (r.durationMs / 1000).toFixed(1) })));
process.stdout.write(`\nwrote ${path.resolve(options.json)}\n`);
if (options.html) process.stdout.write(`wrote ${path.resolve(options.html)}\n`);
process.exitCode = runs.every((r) => r.status === 'ok') ? 0 : 1;
