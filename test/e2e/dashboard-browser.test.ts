/**
 * The dashboard page in a real browser (Debian's Chromium driven by playwright-core): it loads
 * without console errors, draws the plan, its checkpoint table grows while the job runs, and a
 * forced failure shows its stack. Every wait is on page content (Playwright's auto-waiting
 * locators, generous timeouts), so a loaded machine only makes it slower.
 *
 * Needs /usr/bin/chromium (`.ci/run` installs it via scripts/ci-chromium.sh). Leaves a screenshot
 * in test-artifacts/dashboard.png.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJob } from '../../dist/index.js';
import { expectExactRunningSums, fixture, type RunningSum } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const WAIT = { timeout: 90_000 };

describe('dashboard page in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/ci-chromium.sh`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: 90_000,
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('shows the plan, a growing checkpoint table and a failure with its stack', {
    timeout: 300_000,
  }, async () => {
    const client = await startJob(fixture('checkpointed-sum.mjs'), {
      parallelism: 2,
      metricsInterval: 200,
      checkpointing: { interval: 200 },
      restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
      // fails once, after its source took 3 snapshots; then runs until cancelled
      args: { n: '100000000', rate: '3000', failure: 'throw', at: '0.00001', snapshots: '3' },
      dashboard: true,
    });
    const errors: string[] = [];
    const page = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
    try {
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(client.dashboardUrl!, WAIT);
      expect(await page.title()).toBe('weir · checkpointed-sum');

      // the plan: two tasks (source chain and keyed chain), one hash edge
      const nodes = page.locator('[data-testid=task-node]');
      await nodes.nth(1).waitFor(WAIT);
      expect(await nodes.count()).toBe(2);
      await page.locator('[data-testid=plan] text', { hasText: 'hash · 4 ch' }).waitFor(WAIT);
      expect(await page.locator('[data-testid=operator-row]').count()).toBe(4);
      // a click on an operator shows its subtasks, and they stay open across updates
      await page.locator('[data-testid=operator-row]', { hasText: 'running sum' }).click(WAIT);
      await page.locator('[data-testid=subtask-row]', { hasText: 'subtask 1' }).waitFor(WAIT);
      expect(await page.locator('[data-testid=subtask-row]').count()).toBe(2);

      // the task table: busy / backpressured / idle shares measured in the workers, per task and
      // (on click) per subtask; the plan's nodes show the same
      expect(await page.locator('[data-testid=task-row]').count()).toBe(2);
      await page
        .locator('[data-testid=task-load]', { hasText: /^busy \d+% · backpressured \d+% · idle \d+%$/ })
        .first()
        .waitFor(WAIT);
      await page.locator('[data-testid=task-row]', { hasText: 'running sum' }).click(WAIT);
      await page.locator('[data-testid=task-subtask-row]', { hasText: /subtask 1.*\d+%/ }).waitFor(WAIT);
      expect(await page.locator('[data-testid=task-subtask-row]').count()).toBe(2);
      // the keyed task reads its input rings: their fill is a percentage, not a dash
      const keyedRow = page.locator('[data-testid=task-row]', { hasText: 'running sum' });
      expect(await keyedRow.locator('td').nth(6).textContent()).toMatch(/^\d+%$/);

      // the checkpoint table grows while the job runs (newest first; it keeps the last 100, so
      // growth is checked by id, not by row count)
      const rows = page.locator('[data-testid=checkpoint-row]');
      const newestId = async () => Number(await rows.first().locator('td').first().textContent());
      // a completed checkpoint with at least this id is shown (some ids may fail, e.g. at the restart)
      const waitForCheckpoint = (id: number) =>
        page.waitForFunction(
          `Number(document.querySelector('[data-testid=checkpoint-row] td')?.textContent) >= ${id}`,
          undefined,
          WAIT,
        );
      await rows.first().waitFor(WAIT);
      const seen = await rows.count();
      const first = await newestId();
      await waitForCheckpoint(first + 2);
      // ids in between may have failed (shown as failed rows): at least one more completed row
      expect(await rows.count()).toBeGreaterThanOrEqual(Math.min(100, seen + 1));

      // the injected failure, with the worker's stack naming the job module
      const restart = page.locator('[data-testid=restart]', { hasText: 'injected failure' });
      await restart.waitFor(WAIT);
      await restart.locator('pre', { hasText: 'checkpointed-sum.mjs' }).waitFor(WAIT);
      // after the restart, the job runs again and checkpoints go on
      await page.locator('#attempt', { hasText: 'attempt 1' }).waitFor(WAIT);
      await page.locator('#status', { hasText: 'running' }).waitFor(WAIT);
      await waitForCheckpoint((await newestId()) + 1);
      await page.locator('[data-testid=checkpoint-chart] rect').first().waitFor(WAIT);
      // a click on a completed checkpoint shows each subtask's alignment, sync, async parts and size
      await rows.first().click(WAIT);
      const detail = page.locator('[data-testid=checkpoint-subtask-row]');
      await detail.nth(3).waitFor(WAIT);
      expect((await detail.locator('td:nth-child(2)').allTextContents()).sort()).toEqual([
        'subtask 0/0',
        'subtask 0/1',
        'subtask 1/0',
        'subtask 1/1',
      ]);
      expect(await detail.first().locator('td').nth(5).textContent()).toMatch(/ ms$/);

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}dashboard.png`, fullPage: true });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      await client.cancel();
    }
  });

  it('marks a checkpoint whose alignment timed out as unaligned, and the subtask that switched', {
    timeout: 300_000,
  }, async () => {
    // The stalled-input job of alignment-timeout.test.ts: it holds its tail (and so stays up, with
    // the page showing it) until the test writes `fail` after a switched checkpoint completed.
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-dashboard-unaligned-'));
    const page = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
    try {
      const client = await startJob(fixture('alignment-timeout.mjs'), {
        parallelism: 1,
        metricsInterval: 200,
        checkpointing: { interval: 50, alignmentTimeout: 30 },
        restartStrategy: { type: 'fixed-delay', attempts: 1, delay: 0 },
        stuckTaskTimeout: 0,
        args: { n: '4000', keys: '10', dir, stallAt: '200' },
        dashboard: true,
      });
      let switchedId: number | undefined;
      const switched = new Promise<number>((resolve) => {
        client.on('checkpoint', (stats: { checkpointId: number; switchedToUnaligned: boolean }) => {
          // The right source stalls only once its last snapshot completed (see the fixture): without
          // this file it waited for it forever whenever a trigger reached it before its stall (the
          // test then hung to its timeout, 1 in ~4 runs under load).
          writeFileSync(path.join(dir, 'completed'), String(stats.checkpointId));
          if (stats.switchedToUnaligned && switchedId === undefined) {
            switchedId = stats.checkpointId;
            resolve(stats.checkpointId);
          }
        });
      });
      await page.goto(client.dashboardUrl!, WAIT);
      const id = await switched;
      const row = page.locator('[data-testid=checkpoint-row]', { hasText: 'completed · unaligned' }).first();
      await row.waitFor(WAIT);
      expect(Number(await row.locator('td').first().textContent())).toBeGreaterThanOrEqual(id);
      await row.click(WAIT);
      await page
        .locator('[data-testid=checkpoint-subtask-row]', { hasText: '· unaligned' })
        .first()
        .waitFor(WAIT);
      writeFileSync(path.join(dir, 'fail'), ''); // lets the job end (after one restart)
      const result = await client.done;
      expectExactRunningSums(result.sinks.sums as RunningSum[], 4000, 10);
    } finally {
      await page.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
