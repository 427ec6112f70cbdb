// Where the demo's append latency goes (issue 13): copies a checkout's dist/ to a temporary
// directory, adds timestamps to that copy only (the feed's ticks, each group of the log's group
// commit, GC of the main isolate, the job's checkpoints and restarts), runs the whole demo there
// (both modes) and prints, per mode, each tick's append latency split into: building the tick's
// clicks, the synchronous append calls (encoding), waiting in the group-commit queue (linger and
// any group in flight), planning, the LMDB write transaction (from the puts to their promise on
// the main thread: lmdb-js's event-turn start, its write thread, the fsync, the callback), and the
// resolution back to the feed; then the slowest 3 % of ticks with the GC and checkpoints around
// them. Nothing in src/ is instrumented; a copy of a build whose code moved fails loudly here.
//
//   npm run build
//   node bench/log/demo-append-trace.mjs [repo=.] [trace.json]   (WEIR_DEMO_* variables apply)
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const repo = resolve(process.argv[2] ?? '.');
const copy = mkdtempSync(join(tmpdir(), 'weir-demo-trace-'));
const traceFile = resolve(process.argv[3] ?? join(copy, 'trace.json'));
for (const p of ['dist', 'bin', 'package.json']) cpSync(join(repo, p), join(copy, p), { recursive: true });
symlinkSync(join(repo, 'node_modules'), join(copy, 'node_modules'));

function patch(file, pairs) {
  const path = join(copy, 'dist', file);
  let s = readFileSync(path, 'utf8');
  for (const [from, to] of pairs) {
    if (!s.includes(from)) throw new Error(`${file}: ${JSON.stringify(from)} not found (the code moved)`);
    s = s.replace(from, to);
  }
  writeFileSync(path, s);
}
const T = 'globalThis.__d13';
patch('demo/demo-feed.js', [
  [
    'export function feedClicks(topic, o) {',
    `import { PerformanceObserver } from 'node:perf_hooks';
import { writeFileSync as __w } from 'node:fs';
import { isMainThread as __mt } from 'node:worker_threads';
if (__mt && !${T}) {
  ${T} = { ticks: [], groups: [], gc: [], events: [], feeds: [], writes: [], origin: performance.timeOrigin };
  new PerformanceObserver((l) => { for (const e of l.getEntries()) ${T}.gc.push([e.startTime, e.duration, e.detail?.kind]); }).observe({ entryTypes: ['gc'] });
  process.on('exit', () => __w(${JSON.stringify(traceFile)}, JSON.stringify(${T})));
}
export function feedClicks(topic, o) {`,
  ],
  ['const run = async () => {', `const run = async () => { ${T}.feeds.push(performance.now());`],
  [
    'const now = wallClockMs();',
    `const now = wallClockMs(); const tk = { t0: performance.now(), calls: [] }; ${T}.ticks.push(tk);`,
  ],
  [
    'await Promise.all(batches.map(',
    'tk.built = performance.now(); tk.n = due - next; const __p = (batches.map(',
  ],
  [
    'const calledAt = wallClockMs();',
    'const calledAt = wallClockMs(); const __c = [performance.now(), batch.length]; tk.calls.push(__c);',
  ],
  [
    'const ms = wallClockMs() - calledAt;',
    'const ms = wallClockMs() - calledAt; __c.push(performance.now());',
  ],
  [
    '}));\n                next = due;',
    '})); tk.called = performance.now(); await Promise.all(__p); tk.done = performance.now();\n                next = due;',
  ],
]);
patch('log/group-commit.js', [
  [
    'this.#queue.push({ records, plan, resolve: resolve, reject, wire });',
    'this.#queue.push({ records, plan, resolve: resolve, reject, wire, tSub: performance.now() });',
  ],
  [
    'const group = this.#take();',
    `const group = this.#take(); const __g = { take: performance.now(), subs: group.map((o) => o.tSub), a: [] }; ${T}?.groups.push(__g); group.__g = __g;`,
  ],
  [
    'this.#o.renewSnapshot();\n            const view = new PlanView();',
    'const __a = { p0: performance.now() }; group.__g?.a.push(__a); this.#o.renewSnapshot();\n            const view = new PlanView();',
  ],
  [
    'if (view.ops.length === 0 || (await applyConditionally(view))) {',
    '__a.p1 = performance.now(); const __ok = view.ops.length === 0 || (await applyConditionally(view)); __a.applied = performance.now(); if (__ok) {',
  ],
]);
// lmdb-js's native write of each transaction, seen from the main thread: when its event turn
// called env.startWriting (queueing the N-API async work on libuv's pool) and when the work's
// completion callback ran here. (The log is opened after demo-feed.js is loaded, so __d13 exists.)
patch('log/log-core.js', [
  [
    'const core = new LogCore(dir, root, settings);',
    `const core = new LogCore(dir, root, settings);
            if (${T} && !root.env.__d13) {
              const env = root.env; env.__d13 = true; const sw = env.startWriting;
              Object.defineProperty(env, 'startWriting', { value(a, cb) { const w = [performance.now()]; ${T}.writes.push(w);
                return sw.call(this, a, (s) => { w.push(performance.now(), s); return cb(s); }); } });
            }`,
  ],
]);
patch('demo/demo-run.js', [
  ['deployments.push({', `${T}?.events.push(['deployed', performance.now()]); deployments.push({`],
  ['failures.push({', `${T}?.events.push(['restarting', performance.now()]); failures.push({`],
  [
    'checkpoints.push({ at: wallClockMs(), stats });',
    `${T}?.events.push(['checkpoint', performance.now()]); checkpoints.push({ at: wallClockMs(), stats });`,
  ],
]);

const run = spawnSync(process.execPath, [join(copy, 'bin', 'weir.js'), 'demo'], {
  cwd: copy,
  stdio: ['ignore', 'pipe', process.env.TRACE_STDERR ? 'inherit' : 'ignore'],
  env: { ...process.env, WEIR_DEMO_OUT: process.env.WEIR_DEMO_OUT ?? join(copy, 'out') },
  encoding: 'utf8',
});
for (const line of run.stdout.split('\n'))
  if (/^(append latency|main-thread event-loop|throughput|correctness)/.test(line))
    console.log(line.replace(/ {2,}/g, ' | '));
if (run.status !== 0) console.log(`demo exit code ${run.status}`);

const tr = JSON.parse(readFileSync(traceFile, 'utf8'));
const modeOf = (t) => (tr.feeds.length > 1 && t >= tr.feeds[1] ? 1 : 0);
const pct = (xs, p) =>
  [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const keys = ['build', 'calls', 'queue', 'plan', 'lmdb', 'resolve', 'turn', 'write', 'back'];
const slowOut = [];
for (const mode of [0, 1]) {
  const rows = [];
  for (const tk of tr.ticks.filter((t) => t.done !== undefined && modeOf(t.t0) === mode)) {
    const g = tr.groups.find((x) => x.subs.some((s) => s >= tk.built && s <= tk.called));
    const a = g?.a.at(-1);
    if (!a?.applied) continue;
    // per click: each partition's append, from its own call (what the demo's table counts)
    const lats = tk.calls.map(([t, n, end]) => [end - t, n]);
    // the LMDB phase split: puts + wait for lmdb-js's event turn (setImmediate), the native write
    // (libuv pool queue, transaction, commit, back on the main thread), the promises' resolution
    const w = tr.writes.find((x) => x[0] >= a.p1 && x[0] <= a.applied && x.length >= 3);
    rows.push({
      t: tk.t0,
      n: tk.n,
      lat: Math.max(...lats.map((l) => l[0])),
      lats,
      build: tk.built - tk.t0,
      calls: tk.called - tk.built,
      queue: g.take - tk.called,
      plan: a.p1 - a.p0,
      lmdb: a.applied - a.p1,
      resolve: tk.done - a.applied,
      attempts: g.a.length,
      turn: w ? w[0] - a.p1 : Number.NaN,
      write: w ? w.at(-2) - w[0] : Number.NaN,
      back: w ? a.applied - w.at(-2) : Number.NaN,
      epoch: w ? [tr.origin + w[0], tr.origin + w.at(-2)] : undefined,
    });
  }
  const clicks = rows.flatMap((r) => r.lats.flatMap(([ms, n]) => Array(n).fill(ms)));
  const feed0 = tr.feeds[mode];
  console.log(
    `\n${['exactly-once', 'at-least-once'][mode]}: ${rows.length} ticks, ${clicks.length} clicks; per click append p50 ${pct(clicks, 50).toFixed(1)} p99 ${pct(clicks, 99).toFixed(1)} ms`,
  );
  const line = (set, label) =>
    console.log(
      `  ${label}, ${set.length} ticks, median / max ms: ${keys
        .map(
          (k) =>
            `${k} ${pct(
              set.map((r) => r[k]),
              50,
            ).toFixed(2)} / ${Math.max(...set.map((r) => r[k])).toFixed(1)}`,
        )
        .join(', ')}`,
    );
  line(rows, 'all');
  const cut = pct(
    rows.map((r) => r.lat),
    97,
  );
  const slow = rows.filter((r) => r.lat >= cut);
  slowOut.push(
    ...rows.map((r) => ({
      mode,
      slow: r.lat >= cut,
      t: r.t - feed0,
      lat: r.lat,
      lmdb: r.lmdb,
      write: r.write,
      epoch: r.epoch,
    })),
  );
  const allWrites = rows.filter((r) => r.epoch).map((r) => r.epoch);
  if (mode === 1)
    writeFileSync(`${traceFile}.slow.json`, JSON.stringify({ slow: slowOut, origin: tr.origin }));
  if (allWrites.length === 0) console.log('  (no native write timestamps)');
  line(slow, 'slowest 3 %');
  const ev = tr.events.filter((e) => modeOf(e[1]) === mode);
  console.log(
    `  restarts (ms from the feed's start): ${ev
      .filter((e) => e[0] !== 'checkpoint')
      .map((e) => `${e[0]} ${(e[1] - feed0).toFixed(0)}`)
      .join(', ')}`,
  );
  for (const r of slow) {
    const gcs = tr.gc.filter((x) => x[0] + x[1] >= r.t && x[0] <= r.t + r.lat);
    const cps = ev
      .filter((e) => e[0] === 'checkpoint' && Math.abs(e[1] - r.t) < 300)
      .map((e) => (e[1] - r.t).toFixed(0));
    console.log(
      `   +${(r.t - feed0).toFixed(0)} ms, ${r.n} clicks, ${r.lat.toFixed(1)} ms: ${keys.map((k) => `${k} ${r[k].toFixed(1)}`).join(', ')}; GC in it ${gcs.map((x) => `${x[1].toFixed(0)}`).join('+') || '-'} ms; checkpoint within 300 ms ${cps.join(',') || '-'}`,
    );
  }
  const gcm = tr.gc.filter((x) => modeOf(x[0]) === mode);
  console.log(
    `  main-isolate GC: ${gcm.length} pauses, ${gcm.reduce((s, x) => s + x[1], 0).toFixed(0)} ms in all, longest ${Math.max(...gcm.map((x) => x[1])).toFixed(1)} ms`,
  );
}
rmSync(copy, { recursive: true, force: true });
