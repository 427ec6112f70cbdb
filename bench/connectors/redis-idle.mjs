// Idle cost and wake-up latency of an unbounded sources.redisStream, for one or more weir builds
// in one interleaved run:
//   node bench/connectors/redis-idle.mjs [--rounds 3] [--seconds 10] DIST [DIST...]
// DIST: a weir build's dist/index.js (e.g. this tree's and a checkout of main's). Each round runs
// the job of bench/jobs/redis-idle-job.mjs once per build (in a child process, so that builds do
// not share a process): 2 s to settle, then `--seconds` with the stream empty (process CPU from
// process.cpuUsage: all threads, the coordinator included), then 100 entries 20 ms apart whose
// add-to-map latency the job records. Needs Redis on 6379.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { rounds: { type: 'string' }, seconds: { type: 'string' }, child: { type: 'boolean' } },
  allowPositionals: true,
});
const JOB = fileURLToPath(new URL('../jobs/redis-idle-job.mjs', import.meta.url));
const URL_ = 'redis://127.0.0.1:6379';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (values.child) {
  // One measurement: argv DIST STREAM OUT SECONDS; prints one JSON line.
  const [dist, stream, out, seconds] = positionals;
  process.env.WEIR_DIST = dist;
  const { startJob } = await import(dist);
  const { Redis } = await import('ioredis');
  const redis = new Redis(URL_);
  await redis.xadd(stream, '*', 'data', JSON.stringify({ t: Date.now() }));
  const job = await startJob(JOB, { parallelism: 1, args: { url: URL_, stream, out } });
  const done = job.done.catch(() => {});
  await sleep(2000);
  const thread = spawn('/work/shared/tools/thread-cpu', [String(process.pid), seconds]);
  let threads = '';
  thread.stdout.on('data', (d) => {
    threads += d;
  });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(Number(seconds) * 1000);
  const c1 = process.cpuUsage(c0);
  const wall = (performance.now() - t0) / 1000;
  await new Promise((r) => thread.on('close', r));
  for (let i = 0; i < 100; i++) {
    await redis.xadd(stream, '*', 'data', JSON.stringify({ t: performance.timeOrigin + performance.now() }));
    await sleep(20);
  }
  for (let i = 0; i < 200 && readFileSync(out, 'utf8').split('\n').length < 102; i++) await sleep(50);
  await job.cancel();
  await done;
  await redis.del(stream);
  redis.disconnect();
  const lat = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map(Number)
    .sort((a, b) => a - b);
  const busiest = Math.max(
    ...threads
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('all'))
      .map((l) => Number.parseFloat(l.split(/\s+/)[1])),
  );
  process.stderr.write(threads);
  console.log(
    JSON.stringify({
      cpuMsPerS: (c1.user + c1.system) / 1000 / wall,
      busiestThreadMsPerS: (busiest * 1000) / Number(seconds),
      latencyP50: lat[Math.floor(lat.length / 2)],
      latencyMax: lat[lat.length - 1],
      n: lat.length,
    }),
  );
  process.exit(0);
}

const rounds = Number(values.rounds ?? 3);
const seconds = values.seconds ?? '10';
const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-redis-idle-'));
const results = new Map(positionals.map((d) => [d, []]));
console.log(
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${new Date().toISOString()}`,
);
for (let r = 0; r < rounds; r++) {
  for (const dist of positionals) {
    const stream = `weir_bench_idle_${process.pid}_${r}_${results.get(dist).length}_${path.basename(path.dirname(path.dirname(dist)))}`;
    const out = path.join(dir, `${stream}.txt`);
    const line = execFileSync(
      process.execPath,
      [fileURLToPath(import.meta.url), '--child', dist, stream, out, seconds],
      {
        encoding: 'utf8',
      },
    );
    const m = JSON.parse(line.trim().split('\n').pop());
    results.get(dist).push(m);
    console.log(`round ${r} ${dist}: ${JSON.stringify(m)}`);
  }
}
const med = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [dist, ms] of results) {
  console.log(
    `${dist}: process CPU ${med(ms.map((m) => m.cpuMsPerS)).toFixed(1)} ms/s, busiest thread ${med(ms.map((m) => m.busiestThreadMsPerS)).toFixed(1)} ms/s, latency p50 ${med(ms.map((m) => m.latencyP50)).toFixed(2)} ms, max ${med(ms.map((m) => m.latencyMax)).toFixed(2)} ms (medians of ${ms.length})`,
  );
}
console.log(
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${new Date().toISOString()}`,
);
rmSync(dir, { recursive: true, force: true });
