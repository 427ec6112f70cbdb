/**
 * The README's embedded-log pattern, end to end: a service appends page views to the embedded log
 * from the main thread while an unbounded weir job counts them per page into the file sink; the
 * service stops the job with a savepoint, starts it again from the savepoint, appends more — and
 * the committed output holds every view exactly once, with counts continuing across the restart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type JobClient, openLog, startJob } from '../../dist/index.js';
import { committedJsonl, example } from './helpers.js';

interface Out {
  page: string;
  views: number;
  user: string;
}

const committed = (dir: string): Out[] => committedJsonl<Out>(dir);

/**
 * Polls `check` until it holds. No deadline of its own: committing takes as long as the machine's
 * load makes it, and a job that never commits fails the test at vitest's timeout, which names the
 * test (a shorter deadline here failed under load although the job was only slow).
 */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 100));
}

let data: string;
afterEach(() => rmSync(data, { recursive: true, force: true }));

describe('embedded log pattern (examples/embedded-log)', () => {
  it('service appends, job counts exactly once, stop with savepoint and resume', async () => {
    data = mkdtempSync(path.join(tmpdir(), 'weir-embedded-'));
    const log = openLog(path.join(data, 'log'));
    const views = log.topic('page-views', { partitions: 4 });
    const pages = ['/', '/pricing', '/docs', '/blog', '/about'];
    let appended = 0;
    const appendViews = async (n: number) => {
      for (let i = 0; i < n; i += 50) {
        const batch = Array.from({ length: Math.min(50, n - i) }, (_, j) => {
          const k = appended + i + j;
          return { page: pages[k % pages.length], user: `u${k % 7}`, at: k };
        });
        for (const v of batch) await views.append([v], { key: v.page }); // one request, one append
        await new Promise((r) => setTimeout(r, 5));
      }
      appended += n;
    };
    const start = (restoreFrom?: string): Promise<JobClient> =>
      startJob(example('embedded-log/page-views-job.ts'), {
        parallelism: 2,
        args: { data },
        checkpointing: { interval: 200, dir: path.join(data, 'checkpoints') },
        ...(restoreFrom ? { restoreFrom } : {}),
      });
    const out = path.join(data, 'page-views');
    try {
      const first = await start();
      await appendViews(1000);
      await until(() => committed(out).length >= 1000);
      const savepoint = await first.stopWithSavepoint(path.join(data, 'savepoint'));
      expect((await first.done).status).toBe('stopped');

      const second = await start(savepoint.path);
      await appendViews(500);
      await until(() => committed(out).length >= 1500);
      await second.cancel();

      const records = committed(out);
      expect(records).toHaveLength(1500);
      for (const [i, page] of pages.entries()) {
        const counts = records
          .filter((r) => r.page === page)
          .map((r) => r.views)
          .sort((a, b) => a - b);
        const expected = Array.from({ length: 1500 }, (_, k) => k).filter(
          (k) => k % pages.length === i,
        ).length;
        expect(counts).toEqual(Array.from({ length: expected }, (_, k) => k + 1));
      }
    } finally {
      await log.close();
    }
  });
});
