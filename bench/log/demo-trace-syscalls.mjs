// Lines up the log's slowest write transactions (from demo-append-trace.mjs) with the syscalls of
// every thread of the demo's process (issue 13): which thread ran the log's transaction, when its
// first write to the log's data file started after lmdb-js queued the work on libuv's pool, how
// long its writes and fsyncs took, when the main thread got the result back, and what the other
// threads (the job's checkpoint storage, file sinks) had in flight meanwhile.
//
//   mkdir -p /tmp/t && strace -f --seccomp-bpf -ttt -T -y -s 0 -o /tmp/t/st.txt \
//     -e trace=pwrite64,pwritev,writev,write,fdatasync,fsync,msync,ftruncate,fallocate \
//     node bench/log/demo-append-trace.mjs . /tmp/t/trace.json
//   node bench/log/demo-trace-syscalls.mjs /tmp/t/st.txt /tmp/t/trace.json.slow.json
import { readFileSync } from 'node:fs';

const groupBy = (xs, key) => {
  const out = {};
  for (const x of xs) (out[key(x)] ??= []).push(x);
  return out;
};

const [stFile, slowFile] = process.argv.slice(2);
const { slow: ticks } = JSON.parse(readFileSync(slowFile, 'utf8'));
const slow = ticks.filter((t) => t.slow);

// strace -f -ttt -T -y: "TID SECONDS NAME(FD<PATH>, ...) = R <DUR>", split calls as
// "... <unfinished ...>" then "TID SECONDS <... NAME resumed> ...) = R <DUR>".
const calls = [];
const open = new Map();
for (const line of readFileSync(stFile, 'utf8').split('\n')) {
  let m = line.match(/^(\d+) +(\d+\.\d+) (\w+)\((\d+)<([^>]*)>.*<unfinished \.\.\.>$/);
  if (m) {
    open.set(`${m[1]}:${m[3]}`, { tid: +m[1], t0: +m[2] * 1000, name: m[3], path: m[5] });
    continue;
  }
  m = line.match(/^(\d+) +(\d+\.\d+) <\.\.\. (\w+) resumed>.*<(\d+\.\d+)>$/);
  if (m) {
    const c = open.get(`${m[1]}:${m[3]}`);
    open.delete(`${m[1]}:${m[3]}`);
    if (c) calls.push({ ...c, dur: +m[4] * 1000 });
    continue;
  }
  m = line.match(/^(\d+) +(\d+\.\d+) (\w+)\((\d+)<([^>]*)>.*<(\d+\.\d+)>$/);
  if (m) calls.push({ tid: +m[1], t0: +m[2] * 1000, name: m[3], path: m[5], dur: +m[6] * 1000 });
}
const kind = (p) =>
  p.includes('/log/data.mdb')
    ? 'log'
    : p.includes('checkpoints') && p.endsWith('.mdb')
      ? 'ckpt'
      : p.endsWith('.mdb')
        ? 'mdb'
        : p.includes('/counts') || p.includes('/windows')
          ? 'sink'
          : 'other';
for (const c of calls) c.kind = kind(c.path);
const dataCalls = calls.filter((c) => c.kind !== 'other');
console.log(
  `${calls.length} syscalls parsed; by kind: ${Object.entries(groupBy(dataCalls, (c) => c.kind))
    .map(([k, v]) => `${k} ${v.length}`)
    .join(', ')}`,
);

const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
for (const s of slow) {
  if (!s.epoch) continue;
  const [e0, e1] = s.epoch;
  const log = dataCalls.filter((c) => c.kind === 'log' && c.t0 >= e0 && c.t0 <= e1);
  const first = log[0];
  const lastEnd = log.length ? Math.max(...log.map((c) => c.t0 + c.dur)) : Number.NaN;
  const syncs = log.filter((c) => c.name === 'fdatasync' || c.name === 'fsync');
  const writes = log.filter((c) => c.name !== 'fdatasync' && c.name !== 'fsync');
  // other threads' data-file work overlapping the wait before the log's first write
  const before = first ? first.t0 : e1;
  const others = dataCalls.filter((c) => c.kind !== 'log' && c.t0 < before && c.t0 + c.dur > e0);
  const ck = Object.entries(groupBy(others, (c) => `${c.kind} ${c.name}`))
    .map(([k, v]) => `${k} ×${v.length} ${f(v.reduce((a, c) => a + c.dur, 0))} ms`)
    .join('; ');
  console.log(
    `mode ${s.mode} +${s.t.toFixed(0)} ms, tick ${f(s.lat)} ms, lmdb ${f(s.lmdb)}, native write ${f(e1 - e0)}: ` +
      `to first log syscall ${first ? f(first.t0 - e0) : '-'} (tid ${first?.tid ?? '-'}), log writes ${writes.length} ${f(writes.reduce((a, c) => a + c.dur, 0))} ms, ` +
      `syncs ${syncs.length} ${f(syncs.reduce((a, c) => a + c.dur, 0))} ms, last log syscall end → main ${f(e1 - lastEnd)}; ` +
      `other threads before it: ${ck || '-'}`,
  );
}

// Every traced transaction: the wait from lmdb-js queueing the work on libuv's pool to the log's
// first write. When it is long, what did the pool thread that ran it do just before: a checkpoint
// storage transaction ending right before (the log's work queued behind it), or nothing (waiting
// for a core, or LMDB's own work inside the transaction before its first write)?
const byTid = groupBy(dataCalls, (c) => c.tid);
const waits = [];
for (const t of ticks) {
  if (!t.epoch) continue;
  const [e0, e1] = t.epoch;
  const first = dataCalls.find((c) => c.kind === 'log' && c.t0 >= e0 && c.t0 <= e1);
  if (!first) continue;
  const mine = byTid[first.tid];
  const i = mine.indexOf(first);
  const prev = mine
    .slice(0, i)
    .reverse()
    .find((c) => c.t0 + c.dur > e0);
  const log = dataCalls.filter((c) => c.kind === 'log' && c.t0 >= e0 && c.t0 <= e1);
  const lastEnd = Math.max(...log.map((c) => c.t0 + c.dur));
  waits.push({
    e0,
    io: log.reduce((a, c) => a + c.dur, 0),
    after: e1 - lastEnd,
    wait: first.t0 - e0,
    native: e1 - e0,
    prev: prev?.kind ?? 'none',
    gap: prev ? first.t0 - (prev.t0 + prev.dur) : Number.NaN,
    mode: t.mode,
  });
}
for (const mode of [0, 1]) {
  const w = waits.filter((x) => x.mode === mode);
  const long = w.filter((x) => x.wait > 5);
  const sum = (xs) => xs.reduce((a, x) => a + x.wait, 0);
  console.log(
    `mode ${mode}: ${w.length} transactions, native write total ${f(w.reduce((a, x) => a + x.native, 0))} ms, wait before the first log write total ${f(sum(w))} ms; ` +
      `log syscalls ${f(w.reduce((a, x) => a + x.io, 0))} ms, last one's end → main thread ${f(w.reduce((a, x) => a + x.after, 0))} ms; ` +
      `${long.length} waited > 5 ms (${f(sum(long))} ms; gap after the same thread's previous syscall median ${f(long.map((x) => x.gap).sort((a, b) => a - b)[long.length >> 1])} ms): ` +
      Object.entries(groupBy(long, (x) => x.prev))
        .map(([k, v]) => `after ${k} on the same thread ×${v.length} (${f(sum(v))} ms)`)
        .join(', '),
  );
}

// Checkpoint storage bursts: the job's chunk writes and the coordinator's commit, each an fsynced
// LMDB transaction on libuv's pool (clustered: ckpt syscalls less than 3 ms apart). Transactions
// the log queued inside a burst against those queued outside, in the same run (so the machine's
// load is the same for both): a longer wait inside means the log's work queued behind them.
const ck = dataCalls.filter((c) => c.kind === 'ckpt').sort((a, b) => a.t0 - b.t0);
const bursts = [];
for (const c of ck) {
  const b = bursts.at(-1);
  if (b && c.t0 - b[1] < 3) b[1] = Math.max(b[1], c.t0 + c.dur);
  else bursts.push([c.t0, c.t0 + c.dur]);
}
for (const w of waits) w.inBurst = bursts.some(([s, e]) => w.e0 >= s && w.e0 <= e);
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];
console.log(
  `checkpoint bursts: ${bursts.length}, ${f(bursts.reduce((a, [s, e]) => a + e - s, 0))} ms in all, median ${f(med(bursts.map(([s, e]) => e - s)))} ms, longest ${f(Math.max(...bursts.map(([s, e]) => e - s)))} ms`,
);
for (const mode of [0, 1]) {
  for (const inside of [true, false]) {
    const w = waits.filter((x) => x.mode === mode && !!x.inBurst === inside);
    if (w.length === 0) continue;
    console.log(
      `  mode ${mode}, queued ${inside ? 'inside' : 'outside'} a checkpoint burst: ${w.length} txns, wait to first log write median ${f(med(w.map((x) => x.wait)))} p90 ${f(p90(w.map((x) => x.wait)))} max ${f(Math.max(...w.map((x) => x.wait)))} ms; native write median ${f(med(w.map((x) => x.native)))} max ${f(Math.max(...w.map((x) => x.native)))} ms`,
    );
  }
}
