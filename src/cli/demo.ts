/**
 * `weir demo` (what `npm start` runs). Until the demo issue lands, it runs a small keyed job on
 * the embedded defaults and says plainly what works so far.
 */

import { runJob } from '../coordinator/job-client.js';

export async function runDemo(): Promise<number> {
  console.log(
    'weir demo: keyed running sum over 1,000,000 numbers, parallelism 2 (worker threads + ring channels)',
  );
  const job = new URL('./demo-job.js', import.meta.url);
  const result = await runJob(job, { parallelism: 2, args: { n: '1000000' } });
  const sums = result.sinks.sums as { key: number; sum: number }[];
  const finals = new Map<number, number>();
  for (const s of sums) finals.set(s.key, Math.max(finals.get(s.key) ?? 0, s.sum));
  let expected = 0;
  let actual = 0;
  for (let n = 0; n < 1_000_000; n++) expected += n;
  for (const v of finals.values()) actual += v;
  const secs = result.metrics.durationMs / 1000;
  console.log(`finished in ${secs.toFixed(2)} s: ${sums.length} updates for ${finals.size} keys`);
  console.log(
    `sum of final per-key sums ${actual} (expected ${expected}): ${actual === expected ? 'exact' : 'WRONG'}`,
  );
  console.log(
    'status: see README "Status" for what works today (checkpoints, recovery and the full demo are in progress)',
  );
  return actual === expected ? 0 : 1;
}
