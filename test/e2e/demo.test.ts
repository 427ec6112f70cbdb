/**
 * `weir demo` end to end at a reduced size: the main thread appends clicks to the embedded log
 * while both modes run in real worker threads with a real worker crash after a completed
 * checkpoint; the exactly-once output read back from the committed part files must be exact
 * (running counts and window results, against the main thread's oracle), the at-least-once
 * output must lose nothing, and the HTML report must be written.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDemoWith } from '../../dist/demo/demo.js';
import { computeExpectation } from '../../dist/demo/demo-verify.js';
import { threadCount, threadCountSettles } from './helpers.js';

const outDir = mkdtempSync(join(tmpdir(), 'weir-demo-e2e-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('weir demo (reduced size)', () => {
  // Two full demo runs (~20 s on a quiet machine); at a load of 20 on 2 cores they took over 60 s.
  it('runs both modes with a crash each, checks them and writes the report', {
    timeout: 300_000,
  }, async () => {
    const before = threadCount();
    const stdout: string[] = [];
    const stderr: string[] = [];
    const outcome = await runDemoWith({
      records: 16_000,
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
    const windows = computeExpectation(16_000, 500).windowClicks.size;
    expect(windows).toBeGreaterThan(500);
    expect(eo.verdict).toMatchObject({
      ok: true,
      records: 16_000,
      missing: 0,
      duplicates: 0,
      countErrors: 0,
      windowRecords: windows,
      windowsLost: 0,
      windowDuplicates: 0,
      windowCountErrors: 0,
      windowsCorrupt: 0,
    });
    expect(alo.mode).toBe('at-least-once');
    expect(alo.verdict).toMatchObject({
      ok: true,
      missing: 0,
      corrupt: 0,
      windowsLost: 0,
      windowsCorrupt: 0,
    });
    for (const m of outcome.runs) {
      // one crash, after a checkpoint had completed: recovery restored from it
      expect(m.restarts, m.mode).toBe(1);
      expect(m.recovery, m.mode).not.toBeNull();
      expect(typeof m.recovery?.restoredFrom, m.mode).toBe('number');
      expect(m.recovery!.recoveryMs, m.mode).toBeGreaterThan(0);
      expect(m.checkpointsCompleted, m.mode).toBeGreaterThan(1);
      expect(m.latency.count, m.mode).toBe(m.verdict.records);
      expect(m.throughput, m.mode).toBeGreaterThan(0);
      expect(m.visibleLatency?.count, m.mode).toBe(m.verdict.records);
      expect(m.appendStartTime, m.mode).not.toBeNull();
    }

    expect(outcome.reportPath).toBe(join(outDir, 'report.html'));
    const html = readFileSync(outcome.reportPath, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html.match(/<svg /g)?.length).toBeGreaterThanOrEqual(4);
    expect(html).toContain('worker crash');
    // the live dashboard's checkpoint chart, kept in the report: one per mode
    expect(html).toContain('exactly-once: checkpoint duration and alignment (ms)');
    expect(html).toContain('at-least-once: checkpoint duration and alignment (ms)');
    expect(html).not.toMatch(/<script|<link /);
    expect(existsSync(join(outDir, 'summary.json'))).toBe(true);

    const printed = stdout.join('');
    expect(printed).toMatch(
      /correctness\s+exact: 16,000 clicks, each once, counts exact; [\d,]+ windows exact\s+nothing lost;/,
    );
    expect(printed).toMatch(/appends a click stream of 16,000 clicks .* to a topic of the embedded log/);
    expect(printed).toContain(`report: ${outcome.reportPath}`);
    const progress = stderr.join('');
    expect(progress).toMatch(/\[exactly-once\] worker crashed/);
    expect(progress).toMatch(/\[exactly-once\] live dashboard: http:\/\/127\.0\.0\.1:\d+\//);
    expect(progress).toMatch(/\[at-least-once\] 100% 16,000\/16,000 clicks read \(16,000 appended\)/);
    expect(progress).toMatch(/\[at-least-once\] attempt 1 deployed, restored from checkpoint \d+/);
    expect(progress).not.toMatch(/\r/);
    expect(await threadCountSettles(before)).toBe(before);
  });
});
