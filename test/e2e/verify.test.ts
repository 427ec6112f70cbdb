// `weir verify` as users run it (a child process of bin/weir.js, --json on stdout): a correct job
// passes (exit 0) with its injected failures fired; a job with Math.random() in a key is reported
// as non-deterministic (exit 3), naming the sink; a custom sink that writes before the checkpoint
// completes is caught with duplicates (exit 1), naming the sink. The schedule is seeded; the
// tests synchronise on the command's end only.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  VerifyNothingToCompareError,
  type VerifyReport,
  VerifyUnsupportedSinkError,
  verifyJob,
} from '../../dist/index.js';
import { weirToEnd } from './cli-process.js';
import { example, fixture } from './helpers.js';

/**
 * Runs `weir …`; a `--json` run that printed nothing on stdout (the process died before its
 * report: seen once on Node 24 in CI) is logged with its stderr and exit code, and run once more,
 * so the failure is on record without failing what this file checks (verify's verdicts). A second
 * empty run fails the test. Since verify prints a typed error (also as JSON) on every path it
 * controls, including an event loop that empties before the report (before: exit 0, no output),
 * an empty stdout now means the process was killed (signal in the logged exit) or node crashed.
 */
async function weir(args: string[]): Promise<Awaited<ReturnType<typeof weirToEnd>>> {
  const r = await weirToEnd(args);
  if (!args.includes('--json') || r.stdout.trim() !== '') return r;
  console.warn(`weir ${args.join(' ')}: no report on stdout (exit ${r.code}); stderr:\n${r.stderr}`);
  return weirToEnd(args);
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('weir verify', () => {
  it('passes a correct job under injected throw and exit failures, with an HTML report', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-verify-ok-'));
    const html = path.join(dir, 'report.html');
    const r = await weir([
      'verify',
      fixture('verify-correct.mjs'),
      '--arg',
      `out=${path.join(dir, 'out')}`,
      '--kinds',
      'throw,exit',
      '--failures',
      '2',
      '--seed',
      '3',
      '--json',
      '--html',
      html,
    ]);
    expect(r.stderr).not.toMatch(/could not verify/);
    const report = JSON.parse(r.stdout) as VerifyReport;
    expect(report.verdict).toBe('pass');
    expect(r.code).toBe(0);
    if (report.verdict === 'non-deterministic') throw new Error('unreachable');
    expect(report.failures).toHaveLength(2);
    // Every fault fires only once its attempt has a checkpoint to go back to.
    expect(report.failures.filter((f) => f.fired).length).toBeGreaterThanOrEqual(1);
    expect(report.restarts).toBeGreaterThanOrEqual(1);
    expect(
      report.timeline.some((e) => e.kind === 'failure' && /injected failure|exit/i.test(e.message)),
    ).toBe(true);
    const bySink = new Map(report.sinks.map((s) => [s.sink, s]));
    for (const name of ['collect:sums', `sink: file:${path.join(dir, 'out')}`]) {
      const s = bySink.get(name);
      expect(s?.status).toBe('ok');
      // The running sum emits one record per input: 3000 in every run, though the file sink's
      // directory holds the output of all three runs.
      expect(s?.difference).toMatchObject({ referenceRecords: 3000, actualRecords: 3000, lostCount: 0 });
    }
    expect(readFileSync(html, 'utf8')).toMatch(/Timeline[\s\S]*attempt 1 deployed/);
  }, 240_000);

  it('reports a job with Math.random() in a key as non-deterministic, naming the sink (exit 3)', async () => {
    const r = await weir(['verify', fixture('verify-random-key.mjs'), '--json']);
    const report = JSON.parse(r.stdout) as VerifyReport;
    expect(r.code).toBe(3);
    expect(report.verdict).toBe('non-deterministic');
    if (report.verdict !== 'non-deterministic') throw new Error('unreachable');
    expect(report.sinks.map((s) => s.sink)).toEqual(['collect:counts']);
    expect(report.sinks[0].status).toBe('differs');
    // The second failure-free run differs from the first: records of one run missing in the other.
    expect(
      report.sinks[0].difference!.lostCount + report.sinks[0].difference!.unexpectedCount,
    ).toBeGreaterThan(0);
    expect(report.likelyCauses.map((c) => c.cause)).toContain('random values');
    // One task chain at parallelism 1: input order cannot be the cause, so it is not offered.
    expect(report.likelyCauses.map((c) => c.cause)).not.toContain('input order');
  }, 240_000);

  it('catches a non-idempotent custom sink: duplicates after a failure, naming the sink (exit 1)', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-verify-eager-'));
    const r = await weir([
      'verify',
      fixture('verify-eager-sink.mjs'),
      '--arg',
      `out=${path.join(dir, 'eager.jsonl')}`,
      '--kinds',
      'throw,exit',
      '--failures',
      '2',
      '--json',
    ]);
    const report = JSON.parse(r.stdout) as VerifyReport;
    expect(report.verdict).toBe('fail');
    expect(r.code).toBe(1);
    expect(report.sinks).toHaveLength(1);
    const [sink] = report.sinks;
    expect(sink).toMatchObject({ sink: 'sink: eager-file', type: 'custom', status: 'differs' });
    expect(sink.difference!.duplicateCount).toBeGreaterThan(0);
    expect(sink.difference!.lostCount).toBe(0);
    expect(sink.difference!.duplicated[0].actual).toBeGreaterThan(sink.difference!.duplicated[0].expected);
  }, 240_000);

  it('refuses a sink it cannot read back, by name, before running anything', async () => {
    await expect(verifyJob(fixture('verify-unsupported-sink.mjs'))).rejects.toThrow(
      VerifyUnsupportedSinkError,
    );
    const r = await weir(['verify', fixture('verify-unsupported-sink.mjs')]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/sink "sink: posts" \(type my-http-sink\)/);
  });

  it('refuses a job with nothing to compare (only a discard sink) instead of passing it', async () => {
    await expect(verifyJob(example('keyed-sum.ts'), { args: { n: '100' } })).rejects.toThrow(
      VerifyNothingToCompareError,
    );
  });

  it.each([
    ['throw', 'VerifyReadBackError', /could not read back what sink "sink: bad-read-back" committed/],
    // Before: the event loop emptied while verify awaited, and node exited 0 with no output.
    ['hang', 'VerifyIncompleteError', /ended before its report/],
  ] as const)(
    'never ends without output: a readCommitted() that %ss gives a typed error, as JSON with --json (exit 4)',
    async (read, name, message) => {
      const r = await weirToEnd([
        'verify',
        fixture('verify-bad-read-back.mjs'),
        '--arg',
        `read=${read}`,
        '--json',
      ]);
      expect(r.code).toBe(4);
      const out = JSON.parse(r.stdout) as { verdict: string; error: { name: string; message: string } };
      expect(out.verdict).toBe('error');
      expect(out.error.name).toBe(name);
      expect(out.error.message).toMatch(message);
      expect(r.stderr).toMatch(message);
    },
    60_000,
  );

  it('rejects failure kinds it does not have with a usage error (exit 2)', async () => {
    const r = await weir(['verify', fixture('verify-correct.mjs'), '--kinds', 'throw,oom']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /unknown failure kind "oom"; available: throw, exit, savepoint, rescale, sigkill/,
    );
  });
});
