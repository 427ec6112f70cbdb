// Profiles sources.redisStream alone: fills a fresh stream with N records { key, value } (as
// bench/connectors/run.ts does), runs bench/jobs/connector-job.mjs (redis → discard, p=1, EO 1 s)
// once and prints records/s from the first to the n-th record. Run under `node --cpu-prof
// --cpu-prof-dir DIR` to get one profile per thread (the source task's worker thread included).
//   npm run build && node --cpu-prof --cpu-prof-dir /tmp/prof bench/connectors/redis-source-profile.mjs [N]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { runJob } from '../../dist/index.js';

const N = Number(process.argv[2] ?? 1_000_000);
const url = 'redis://127.0.0.1:6379';
const stream = `weir_bench_redis_profile_${process.pid}`;
const redis = new Redis(url);
for (let i = 0; i < N; i += 1024) {
  const p = redis.pipeline();
  for (let k = i; k < Math.min(N, i + 1024); k++)
    p.xadd(stream, '*', 'data', JSON.stringify({ key: k % 1000, value: k }));
  await p.exec();
}
const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-redis-profile-'));
const stamp = path.join(dir, 'stamp');
try {
  await runJob(fileURLToPath(new URL('../jobs/connector-job.mjs', import.meta.url)), {
    parallelism: 1,
    checkpointing: { interval: 1000, mode: 'exactly-once' },
    args: { n: String(N), stamp, source: 'redis', sink: 'discard', url, stream },
  });
  const ms = Number(readFileSync(`${stamp}.last`, 'utf8')) - Number(readFileSync(`${stamp}.first`, 'utf8'));
  console.log(`${N} records in ${ms.toFixed(0)} ms: ${(((N / ms) * 1000) / 1000).toFixed(0)} k records/s`);
} finally {
  await redis.del(stream);
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
}
