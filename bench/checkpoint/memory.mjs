// Where a checkpoint's memory goes, for one or more builds of weir, builds and cases interleaved
// round by round (issue 14: "state memory ≤ 2× the raw state size during a checkpoint").
//
//   node --expose-gc bench/checkpoint/memory.mjs [--keys 1000000] [--n 6000000] [--rounds 2]
//     [--cases "none,EO 1s,lmdb none,lmdb EO 1s"] ROOT...
//
// The keyed-sum job of bench/checkpoint/run.ts (parallelism 2, cheap workload, `keys` distinct
// keys) on each ROOT's dist/ (a built weir checkout, e.g. /work/wt/base and this one). Per run:
//
// - the process's RSS split as Linux accounts it (/proc/self/status, sampled every 25 ms on the
//   main thread): RssAnon (malloc, V8 heaps, Buffers: memory pressure), RssFile (pages of
//   mapped files: the state and checkpoint LMDB environments; clean pages the kernel can drop
//   and read again, so not pressure unless dirty) and RssShmem (the channels' shared rings).
//   Columns are the peak during the run less the value just before the job started; and, read
//   every 500 ms from /proc/self/smaps, the peak resident and dirty bytes of the `*.mdb` mappings
//   (the state and checkpoint LMDB files);
// - per keyed thread (the running sum chained to the sink, which samples every 16 384 records),
//   the peak of V8's used heap and of `external` + `arrayBuffers` (Buffers and typed arrays
//   outside the V8 heap: serialized chunks held before they are written), max over subtasks.
//
// Raw state size = Σ key UTF-8 bytes + 8 bytes per key (a float64 sum), as in run.ts.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
let rounds = 2;
let n = 6_000_000;
let keys = 1_000_000;
let caseNames = ['none', 'EO 1s', 'lmdb none', 'lmdb EO 1s'];
const roots = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--rounds') rounds = Number(argv[++i]);
  else if (argv[i] === '--n') n = Number(argv[++i]);
  else if (argv[i] === '--keys') keys = Number(argv[++i]);
  else if (argv[i] === '--cases') caseNames = argv[++i].split(',').map((s) => s.trim());
  else roots.push(path.resolve(argv[i]));
}
if (roots.length === 0) roots.push(path.resolve(import.meta.dirname, '../..'));

const CASES = {
  none: { backend: 'heap', interval: null },
  'EO 1s': { backend: 'heap', interval: 1000 },
  'EO 1s incremental': { backend: 'heap', interval: 1000, incremental: true },
  'number none': { backend: 'heap', interval: null, number: true },
  'number EO 1s': { backend: 'heap', interval: 1000, number: true },
  'lmdb none': { backend: 'lmdb', interval: null },
  'lmdb EO 1s': { backend: 'lmdb', interval: 1000 },
  'lmdb EO 1s incremental': { backend: 'lmdb', interval: 1000, incremental: true },
};
for (const c of caseNames) if (!CASES[c]) throw new RangeError(`unknown case '${c}'`);

/**
 * The job, per root: imports that root's weir and report sink (a job module runs in workers). The
 * pipeline is bench/jobs/keyed-sum-job.mjs's cheap workload, written out here so that every root
 * runs the same job code with the same off-heap sampling: an older root's keyed-sum-job.mjs has
 * only `heapSample` (V8 heap), not `external + arrayBuffers`.
 */
const JOB = (root) => `
import { sources } from ${JSON.stringify(pathToFileURL(path.join(root, 'dist/index.js')).href)};
import { defineJob } from ${JSON.stringify(pathToFileURL(path.join(root, 'dist/index.js')).href)};
import { reportSink } from ${JSON.stringify(pathToFileURL(path.join(root, 'bench/jobs/report-sink.mjs')).href)};
function reporter(ctx) {
  const finals = new Map();
  let emitted = 0;
  let heap = 0;
  let off = 0;
  const sample = () => {
    const m = process.memoryUsage();
    if (m.heapUsed > heap) heap = m.heapUsed;
    if (m.external + m.arrayBuffers > off) off = m.external + m.arrayBuffers;
  };
  return {
    write(r) {
      emitted++;
      finals.set(r.key, r.sum);
      if ((emitted & 0x3fff) === 0) sample();
    },
    report() {
      sample();
      let total = 0;
      for (const s of finals.values()) total += s;
      return { subtask: ctx.subtaskIndex, keys: finals.size, emitted, total, heap, off };
    },
  };
}
export default defineJob((env, args) => {
  const n = Number(args.n);
  const keys = Number(args.keys);
  env
    .fromSource(sources.sequence({ from: 0, to: n }), 'sequence')
    .map((i) => ({ key: 'k' + (i % keys), value: i * 2 }))
    .filter((r) => r.value % 3 !== 0)
    .keyBy((r) => r.key)
    .process((r, ctx, out) => {
      // args.stateType 'number': declared { type: 'number' } (heap: number slots).
      const sum = ctx.state.value('sum', args.stateType === 'number' ? { type: 'number' } : undefined);
      const next = (sum.value() ?? 0) + r.value;
      sum.update(next);
      out.collect({ key: r.key, sum: next });
    })
    .name('running sum')
    .sinkTo(reportSink('digest', reporter));
});
`;

const work = mkdtempSync(path.join(os.tmpdir(), 'weir-memory-'));
const builds = [];
for (const [i, root] of roots.entries()) {
  const dir = path.join(work, `job${i}`);
  mkdirSync(dir);
  const job = path.join(dir, 'job.mjs');
  writeFileSync(job, JOB(root));
  builds.push({
    root,
    job: pathToFileURL(job),
    weir: await import(pathToFileURL(path.join(root, 'dist/index.js')).href),
  });
}

function status() {
  const text = readFileSync('/proc/self/status', 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { rss: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile'), shmem: kib('RssShmem') };
}

/** LMDB files mapped in this process (/proc/self/smaps): resident and dirty bytes of `*.mdb` mappings. */
function mdbMappings() {
  let rss = 0;
  let dirty = 0;
  let inMdb = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inMdb = line.endsWith('.mdb');
    else if (inMdb) {
      const m = /^(Rss|Private_Dirty|Shared_Dirty):\s+(\d+) kB/.exec(line);
      if (m?.[1] === 'Rss') rss += Number(m[2]) * 1024;
      else if (m) dirty += Number(m[2]) * 1024;
    }
  }
  return { rss, dirty };
}

let expectedTotal = 0;
for (let i = 0; i < n; i++) if ((i * 2) % 3 !== 0) expectedTotal += i * 2;

async function runCase(build, name) {
  const c = CASES[name];
  const dir = c.interval ? mkdtempSync(path.join(work, 'ck-')) : undefined;
  globalThis.gc?.();
  const before = status();
  const peak = { ...before };
  let mdbRss = 0;
  let mdbDirty = 0;
  let ticks = 0;
  const sampler = setInterval(() => {
    const s = status();
    for (const k of Object.keys(peak)) if (s[k] > peak[k]) peak[k] = s[k];
    if (ticks++ % 20 === 0) {
      const m = mdbMappings();
      mdbRss = Math.max(mdbRss, m.rss);
      mdbDirty = Math.max(mdbDirty, m.dirty);
    }
  }, 25);
  try {
    const t0 = performance.now();
    const client = await build.weir.startJob(build.job, {
      parallelism: 2,
      stateBackend: c.backend,
      stuckTaskTimeout: 60_000,
      args: { n: String(n), keys: String(keys), ...(c.number ? { stateType: 'number' } : {}) },
      ...(c.interval
        ? {
            checkpointing: {
              interval: c.interval,
              mode: 'exactly-once',
              dir,
              ...(c.incremental ? { incremental: true } : {}),
            },
          }
        : {}),
    });
    const result = await client.done;
    const ms = performance.now() - t0;
    const reports = result.sinks.digest ?? [];
    const total = reports.reduce((a, r) => a + r.total, 0);
    if (total !== expectedTotal) throw new Error(`${name}: total ${total}, expected ${expectedTotal}`);
    const cps = result.checkpoints;
    return {
      recordsPerSec: (n / ms) * 1000,
      checkpoints: cps.length,
      bytesPerCheckpoint: cps.length ? cps.reduce((a, cp) => a + (cp.bytes ?? 0), 0) / cps.length : 0,
      rss: peak.rss - before.rss,
      anon: peak.anon - before.anon,
      file: peak.file - before.file,
      shmem: peak.shmem - before.shmem,
      mdbRss,
      mdbDirty,
      taskHeap: Math.max(...reports.map((r) => r.heap)),
      taskOff: Math.max(...reports.map((r) => r.off)),
    };
  } finally {
    clearInterval(sampler);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

let raw = 0;
for (let k = 0; k < keys; k++) raw += Buffer.byteLength(`k${k}`) + 8;
const mib = (b) => (b / 2 ** 20).toFixed(0);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
process.stdout.write(
  `memory per checkpoint case: keyed-sum, p=2, keys ${keys}, n ${n}, ${rounds} rounds, raw state ${mib(raw)} MiB, ${new Date().toISOString()}, load ${load()}\n` +
    'round | build | case | records/s | ckpts | MiB/ckpt | ΔRSS | ΔRssAnon | ΔRssFile | ΔRssShmem | *.mdb resident | *.mdb dirty | task heap | task external+arrayBuffers (MiB)\n',
);
const all = [];
for (let round = 1; round <= rounds; round++) {
  // Alternate which build goes first, round by round.
  const order = round % 2 === 1 ? builds : [...builds].reverse();
  for (const name of caseNames) {
    for (const build of order) {
      const s = await runCase(build, name);
      all.push({ round, build: path.basename(build.root), name, ...s });
      process.stdout.write(
        `${round} | ${path.basename(build.root)} | ${name} | ${Math.round(s.recordsPerSec)} | ${s.checkpoints} | ${mib(s.bytesPerCheckpoint)} | ${mib(s.rss)} | ${mib(s.anon)} | ${mib(s.file)} | ${mib(s.shmem)} | ${mib(s.mdbRss)} | ${mib(s.mdbDirty)} | ${mib(s.taskHeap)} | ${mib(s.taskOff)}\n`,
      );
    }
  }
}
process.stdout.write(`done ${new Date().toISOString()}, load ${load()}\n`);
if (process.env.MEMORY_JSON)
  writeFileSync(process.env.MEMORY_JSON, JSON.stringify({ keys, n, raw, rows: all }, null, 2));
rmSync(work, { recursive: true, force: true });
