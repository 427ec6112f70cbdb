/**
 * The lmdb keyed backend's barrier pause (`snapshot()`) with realistic pending writes, against a
 * build given by its dist directory, so two builds alternate in separate processes (issue 14):
 * one backend owning 64 key groups (a task's share at parallelism 2), `keys` string keys, then
 * `barriers` barriers, each after 2 000–2 127 read-modify-writes of random keys (several
 * write-backs, 0–127 writes pending at the barrier); the two previous snapshots stay live, as
 * checkpoints' asynchronous parts hold them. Prints one JSON line: pause median / p90 / max /
 * mean (ms), the updates' cost per record, and three full encodings of a snapshot taken with
 * ~100 pending writes.
 *
 *   node bench/state/lmdb-barrier.mjs <dist dir> [keys = 1000000] [barriers = 150]
 *   for i in 1 2 3; do node bench/state/lmdb-barrier.mjs /work/wt/base/dist; node bench/state/lmdb-barrier.mjs dist; done
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [root = 'dist', keysArg = '1000000', barriersArg = '150'] = process.argv.slice(2);
const { LmdbKeyedStateBackend } = await import(
  pathToFileURL(resolve(root, 'state/lmdb/lmdb-keyed-state-backend.js')).href
);
const keys = Number(keysArg);
const barriers = Number(barriersArg);
const b = new LmdbKeyedStateBackend({
  maxParallelism: 64,
  keyGroupRange: { start: 0, end: 63 },
  incremental: true,
});
const s = b.value('sum');
const t0 = performance.now();
for (let k = 0; k < keys; k++) {
  b.setCurrentKey(`k${k}`);
  s.update(k);
}
const buildMs = performance.now() - t0;
const pauses = [];
const live = [];
let updates = 0;
let updateMs = 0;
let x = 12345;
for (let i = 1; i <= barriers; i++) {
  const n = 2000 + ((i * 37) % 128);
  const u0 = performance.now();
  for (let j = 0; j < n; j++) {
    x = (x * 1103515245 + 12345) >>> 0; // a fixed LCG: the same keys in every build
    b.setCurrentKey(`k${x % keys}`);
    s.update((s.value() ?? 0) + 1);
  }
  updateMs += performance.now() - u0;
  updates += n;
  const p0 = performance.now();
  const snap = b.snapshot(i);
  pauses.push(performance.now() - p0);
  live.push(snap);
  if (live.length > 2) live.shift().release();
}
for (const l of live) l.release();
const encodeMs = [];
for (let r = 0; r < 3; r++) {
  for (let j = 0; j < 100; j++) {
    b.setCurrentKey(`k${(j * 7919 + r) % keys}`);
    s.update(j);
  }
  const snap = b.snapshot(barriers + 1 + r);
  const e0 = performance.now();
  await snap.encode('full', { release: true });
  encodeMs.push(Math.round(performance.now() - e0));
}
await b.close();
pauses.sort((a, c) => a - c);
const q = (p) => pauses[Math.min(pauses.length - 1, Math.floor(p * pauses.length))];
const ms = (v) => Number(v.toFixed(3));
console.log(
  JSON.stringify({
    dist: root,
    keys,
    barriers,
    buildMs: Math.round(buildMs),
    updateNsPerRecord: Math.round((updateMs * 1e6) / updates),
    pauseMedianMs: ms(q(0.5)),
    pauseP90Ms: ms(q(0.9)),
    pauseMaxMs: ms(pauses.at(-1)),
    pauseMeanMs: ms(pauses.reduce((a, c) => a + c, 0) / pauses.length),
    fullEncodeMs: encodeMs,
  }),
);
