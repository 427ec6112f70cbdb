// The demo's append path measured apart (issue 13): the demo's click feed (dist/demo/demo-feed.js,
// 10 ms ticks, one append per partition per tick, each awaited before the next tick) appending
// alone to a fresh log, or the demo's whole exactly-once run (the job reading the log while the
// feed appends, the injected crash and restore). Prints per-click append latency (call → durable,
// or → written with `os`), the main thread's event-loop delay over the run and, for `job`, the
// job's throughput. Compare A/B by passing another checkout's directory (its dist/ built).
//
//   npm run build
//   node bench/log/demo-append-path.mjs [repo=.] [alone|job] [records=250000] [rate=25000] [fsync|os]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const [repoArg = '.', what = 'alone', recordsArg = '250000', rateArg = '25000', durability = 'fsync'] =
  process.argv.slice(2);
const repo = resolve(repoArg);
const records = Number(recordsArg);
const rate = Number(rateArg);
if (what !== 'alone' && what !== 'job') throw new RangeError(`expected alone or job, got ${what}`);
if (durability !== 'fsync' && durability !== 'os')
  throw new RangeError(`expected fsync or os, got ${durability}`);
const dist = (p) => import(join(repo, 'dist', p));
const round = (x) => Math.round(x * 100) / 100;

const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
const started = performance.now();
let append;
let throughput;
if (what === 'alone') {
  const { openLog } = await dist('log/log.js');
  const { feedClicks } = await dist('demo/demo-feed.js');
  const dir = mkdtempSync(join(tmpdir(), 'weir-demo-append-'));
  const log = openLog(join(dir, 'log'), { durability });
  try {
    const feed = feedClicks(log.topic('clicks', { partitions: 2 }), {
      n: records,
      users: 5000,
      rate,
      partitions: 2,
    });
    await feed.done;
    append = feed.appendLatency.summary();
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  const { runDemoMode } = await dist('demo/demo-run.js');
  const quiet = { write: () => true, isTTY: false };
  const config = {
    records,
    rate,
    users: 5000,
    parallelism: 2,
    checkpointIntervalMs: 500,
    crashAt: 0.5,
    durability,
  };
  const o = await runDemoMode('exactly-once', config, quiet);
  append = o.appendLatency;
  const last = o.sinkTelemetry.at(-1)?.t ?? o.endedAt;
  throughput = Math.round((records / (last - o.appendStartedAt)) * 1000);
}
loop.disable();
console.log(
  JSON.stringify({
    at: new Date().toISOString(),
    repo,
    what,
    durability,
    records,
    rate,
    wallS: round((performance.now() - started) / 1000),
    appendMs: append && { p50: round(append.p50), p99: round(append.p99), max: round(append.max) },
    throughput,
    eventLoopDelayMs: {
      p50: round(loop.percentile(50) / 1e6),
      p99: round(loop.percentile(99) / 1e6),
      max: round(loop.max / 1e6),
    },
  }),
);
process.exit(0);
