/**
 * Incremental snapshots of the heap backend, in-process: for builds given by their root (each
 * `<root>/dist`), interleaved round by round, with `KEYS` (default 1 M) string keys of a number
 * value state in 128 key groups:
 * - write: ns per `setCurrentKey` + `update` of a key first touched in the epoch (the record
 *   path's change tracking), incremental on;
 * - heap: bytes of V8 heap per changed entry held by the tracking after the writes (gc'd);
 * - delta / full: ms to encode the snapshot as a delta and as a full one, when a fraction `f` of
 *   the keys changed since the last confirmed checkpoint (one pending epoch), and their ratio:
 *   where delta/full crosses 1 a full snapshot is the cheaper one to write.
 *
 *   node --expose-gc bench/state/delta-vs-full.mjs ROOT [ROOT ...]   (env KEYS, ROUNDS)
 *
 * Not part of `npm test`; figures in bench/README.md ("Checkpoint overhead").
 */

const roots = process.argv.slice(2);
if (roots.length === 0)
  throw new Error('usage: node --expose-gc bench/state/delta-vs-full.mjs ROOT [ROOT ...]');
if (typeof gc !== 'function') throw new Error('run with --expose-gc');
const KEYS = Number(process.env.KEYS ?? 1_000_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const FRACTIONS = [0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.8, 1];

const keys = Array.from({ length: KEYS }, (_, i) => `key-${i}`);
// A fixed permutation: fraction f touches its first f·KEYS keys, in scattered order.
const perm = Array.from({ length: KEYS }, (_, i) => i);
let seed = 12345;
for (let i = KEYS - 1; i > 0; i--) {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  const j = seed % (i + 1);
  [perm[i], perm[j]] = [perm[j], perm[i]];
}

const mods = await Promise.all(roots.map((r) => import(`${r}/dist/state/heap/heap-keyed-state-backend.js`)));
// The producer's partitioner passes each record's key group: so does this loop (no hashing).
const { assignToKeyGroup } = await import(`${roots[0]}/dist/state/key-groups.js`);
const groups = keys.map((k) => assignToKeyGroup(k, 128));

function runOnce(Backend) {
  const b = new Backend({ maxParallelism: 128, keyGroupRange: { start: 0, end: 127 }, incremental: true });
  const v = b.value('v');
  for (let i = 0; i < KEYS; i++) {
    b.setCurrentKey(keys[i], groups[i]);
    v.update(1);
  }
  let cp = 1;
  const out = [];
  return (async () => {
    let s = b.snapshot(cp);
    await s.encode('full', { release: true });
    b.notifyCheckpointComplete(cp);
    for (const f of FRACTIONS) {
      const n = Math.round(f * KEYS);
      gc();
      const heap0 = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        b.setCurrentKey(keys[perm[i]], groups[perm[i]]);
        v.update(cp + 1);
      }
      const writeMs = performance.now() - t0;
      gc();
      const heap1 = process.memoryUsage().heapUsed;
      cp++;
      s = b.snapshot(cp);
      const t1 = performance.now();
      const d = await s.encode('delta');
      const t2 = performance.now();
      const full = await s.encode('full');
      const t3 = performance.now();
      s.release();
      b.notifyCheckpointComplete(cp);
      if (d.metadata.kind !== 'delta' || d.metadata.entries !== n) throw new Error(`bad delta at f=${f}`);
      if (full.metadata.entries !== KEYS) throw new Error(`bad full at f=${f}`);
      out.push({
        f,
        writeNs: (writeMs * 1e6) / n,
        heapPerEntry: (heap1 - heap0) / n,
        deltaMs: t2 - t1,
        fullMs: t3 - t2,
      });
    }
    await b.close();
    return out;
  })();
}

const results = roots.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  for (let i = 0; i < roots.length; i++) results[i].push(await runOnce(mods[i].HeapKeyedStateBackend));
}
const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
};
console.log(`keys ${KEYS}, rounds ${ROUNDS} (interleaved), medians over rounds`);
console.log('root | f | write ns/key | heap B/changed entry | delta ms | full ms | delta/full (min-max)');
for (let i = 0; i < roots.length; i++) {
  FRACTIONS.forEach((f, j) => {
    const rows = results[i].map((o) => o[j]);
    const ratios = rows.map((x) => x.deltaMs / x.fullMs);
    console.log(
      [
        roots[i],
        f,
        med(rows.map((x) => x.writeNs)).toFixed(0),
        med(rows.map((x) => x.heapPerEntry)).toFixed(0),
        med(rows.map((x) => x.deltaMs)).toFixed(0),
        med(rows.map((x) => x.fullMs)).toFixed(0),
        `${med(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`,
      ].join(' | '),
    );
  });
}
