/**
 * A/B helper for the embedded log: the log bench's closed loop (`run.ts`) with a fixed number of
 * records instead of a fixed time, so two builds compared in interleaved runs do the same work;
 * prints the rate and this process's CPU time per record (every thread, lmdb-js's write thread
 * included), the figure that depends least on what else the machine runs.
 *
 * Run: TOTAL=<records> node --import tsx bench/log/fixed-count.ts <path to src/log/index.ts of the
 * build under test> <appenders> <fsync|os> <records per append>
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [entry, appendersArg = '64', durability = 'fsync', batchArg = '1'] = process.argv.slice(2);
const { openLog } = (await import(entry)) as typeof import('../../src/log/index.js');
const TOTAL = Number(process.env.TOTAL ?? 20_000);
const APPENDERS = Number(appendersArg);
const BATCH = Number(batchArg);
const event = (a: number, seq: number) => ({
  user: `u${a}`,
  page: `/product/${seq % 1000}`,
  action: 'click',
  seq,
  ts: 1_760_000_000_000 + seq,
});
const base = mkdtempSync(join(tmpdir(), 'weir-bench-log-fixed-'));
const log = openLog(join(base, 'log'), { durability: durability as 'fsync' | 'os' });
const topic = log.topic('clicks', { partitions: 4 });
let records = 0;
const start = performance.now();
const cpu = process.cpuUsage();
await Promise.all(
  Array.from({ length: APPENDERS }, async (_, a) => {
    for (let seq = 0; records < TOTAL; seq++) {
      const batch =
        BATCH === 1 ? [event(a, seq)] : Array.from({ length: BATCH }, (_, i) => event(a, seq * BATCH + i));
      await topic.append(batch, { key: a });
      records += BATCH;
    }
  }),
);
const seconds = (performance.now() - start) / 1000;
const used = process.cpuUsage(cpu);
console.log(
  `${(records / seconds / 1000).toFixed(1)} k records/s, cpu ${((used.user + used.system) / records).toFixed(2)} us/record`,
);
await log.close();
rmSync(base, { recursive: true, force: true });
