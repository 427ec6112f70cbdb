/**
 * Allocation per appended record on the appending thread (issue 13: GC was a fifth of the demo's
 * main-thread time): V8's sampling heap profiler, counting objects already collected too, over
 * closed-loop `topic.append`s of 8 appenders (`durability: 'os'`), keyed by appender, with click-like
 * records; prints the JS heap bytes allocated per record (this driver's own loop included) and the
 * top allocating functions. Deterministic enough for A/B (runs of one build agree within 1 %).
 *
 * Run: node bench/log/append-allocation.mjs <dist dir of the build> [records per append = 1]
 */

import { mkdtempSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const { openLog } = await import(resolve(process.argv[2], 'log/index.js'));
const n = Number(process.argv[3] ?? 1);
const log = openLog(join(mkdtempSync(join(tmpdir(), 'a13-')), 'log'), { durability: 'os' });
const topic = log.topic('clicks', { partitions: 4 });
const click = (seq) => ({
  user: `u${seq % 5000}`,
  page: `/product/${seq % 1000}`,
  action: 'click',
  seq,
  ts: 1_760_000_000_000 + seq,
});
const recs = Array.from({ length: n }, (_, i) => click(i));
await topic.append(recs);
const s = new Session();
s.connect();
await s.post('HeapProfiler.startSampling', {
  samplingInterval: 512,
  includeObjectsCollectedByMinorGC: true,
  includeObjectsCollectedByMajorGC: true,
});
const records = n === 1 ? 20000 : 200000;
let left = records;
await Promise.all(
  Array.from({ length: 8 }, async (_, a) => {
    while (left > 0) {
      left -= n;
      await topic.append(recs, { key: a });
    }
  }),
);
const { profile } = await s.post('HeapProfiler.stopSampling');
/** Bytes allocated per function (self), over the whole sampled call tree. */
const bySite = new Map();
const walk = (node) => {
  const cf = node.callFrame;
  const site = `${cf.functionName} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber}`;
  bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
  for (const child of node.children) walk(child);
};
walk(profile.head);
let total = 0;
for (const bytes of bySite.values()) total += bytes;
console.log('total MB', (total / 1e6).toFixed(1), 'per record', (total / records).toFixed(0));
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
  console.log((bytes / 1e6).toFixed(2).padStart(8), site);
}
await log.close();
