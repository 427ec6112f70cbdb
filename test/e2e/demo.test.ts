/**
 * `weir demo` end to end at a reduced size: both modes run in real worker threads with a real
 * worker crash after a completed checkpoint; the exactly-once output must be exact, the
 * at-least-once output must lose nothing, and the HTML report must be written.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDemoWith } from '../../dist/cli/demo.js';
import { threadCount, threadCountSettles } from './helpers.js';

const outDir = mkdtempSync(join(tmpdir(), 'weir-demo-e2e-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('weir demo (reduced size)', () => {
  it('runs both modes with a crash each, checks them and writes the report', async () => {
    const before = threadCount();
    const stdout: string[] = [];
    const stderr: string[] = [];
    const outcome = await runDemoWith({
      records: 12_000,
      rate: 8_000,
      users: 500,
      checkpointIntervalMs: 100,
      outDir,
      stdout: { write: (c: string) => stdout.push(c) },
      stderr: { isTTY: false, write: (c: string) => stderr.push(c) },
    });

    expect(outcome.exitCode).toBe(0);
    const [eo, alo] = outcome.runs;
    expect(eo.mode).toBe('exactly-once');
    expect(eo.verdict).toMatchObject({
      ok: true,
      records: 12_000,
      missing: 0,
      duplicates: 0,
      countErrors: 0,
    });
    expect(alo.mode).toBe('at-least-once');
    expect(alo.verdict).toMatchObject({ ok: true, missing: 0, corrupt: 0 });
    for (const m of outcome.runs) {
      // one crash, after a checkpoint had completed: recovery restored from it
      expect(m.restarts, m.mode).toBe(1);
      expect(m.recovery, m.mode).not.toBeNull();
      expect(typeof m.recovery?.restoredFrom, m.mode).toBe('number');
      expect(m.recovery!.recoveryMs, m.mode).toBeGreaterThan(0);
      expect(m.checkpointsCompleted, m.mode).toBeGreaterThan(1);
      expect(m.latency.count, m.mode).toBe(m.verdict.records);
      expect(m.throughput, m.mode).toBeGreaterThan(0);
    }

    expect(outcome.reportPath).toBe(join(outDir, 'report.html'));
    const html = readFileSync(outcome.reportPath, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html.match(/<svg /g)?.length).toBeGreaterThanOrEqual(4);
    expect(html).toContain('worker crash');
    expect(html).not.toMatch(/<script|<link /);
    expect(existsSync(join(outDir, 'summary.json'))).toBe(true);

    const printed = stdout.join('');
    expect(printed).toMatch(/correctness\s+exact: 12,000 clicks, each once, counts exact\s+nothing lost;/);
    expect(printed).toContain(`report: ${outcome.reportPath}`);
    const progress = stderr.join('');
    expect(progress).toMatch(/\[exactly-once\] worker crashed/);
    expect(progress).toMatch(/\[at-least-once\] attempt 1 deployed, restored from checkpoint \d+/);
    expect(progress).not.toMatch(/\r/);
    expect(await threadCountSettles(before)).toBe(before);
  });
});
