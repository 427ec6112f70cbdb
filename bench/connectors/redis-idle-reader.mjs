// Idle cost of one sources.redisStream reader alone, no job: polled as a source task polls it
// (on 'idle', wait `ms` or until `wake` resolves), on a stream that holds one entry and gets no more.
//   node bench/connectors/redis-idle-reader.mjs DIST [SECONDS=5]
// DIST: a weir build's dist/index.js. Prints process CPU ms per s (this process is only the reader,
// its Redis connection and the bench's own client) and polls per s. Needs Redis on 6379.
const [dist, secs] = [process.argv[2], Number(process.argv[3] ?? 5)];
const { sources } = await import(dist);
const { Redis } = await import('ioredis');
const r = new Redis('redis://127.0.0.1:6379');
const stream = `weir_bench_reader_idle_${process.pid}`;
await r.xadd(stream, '*', 'data', '1');
const reader = sources
  .redisStream({ url: 'redis://127.0.0.1:6379', stream })
  .createReader({ subtaskIndex: 0, parallelism: 1, attempt: 0, restoredState: undefined });
let polls = 0;
let stop = false;
let got = 0;
void (async () => {
  while (!stop) {
    polls++;
    const p = reader.poll({ collect: () => got++ }, 1000);
    if (p.state === 'idle')
      await new Promise((res) => {
        const t = setTimeout(res, p.ms);
        p.wake?.then(() => {
          clearTimeout(t);
          res();
        });
      });
  }
})();
await new Promise((res) => setTimeout(res, 1000));
const c0 = process.cpuUsage();
const p0 = polls;
const t0 = performance.now();
await new Promise((res) => setTimeout(res, secs * 1000));
const c = process.cpuUsage(c0);
const s = (performance.now() - t0) / 1000;
stop = true;
reader.close();
await r.del(stream);
r.disconnect();
console.log(
  JSON.stringify({
    dist,
    got,
    cpuMsPerS: +((c.user + c.system) / 1000 / s).toFixed(2),
    pollsPerS: +((polls - p0) / s).toFixed(1),
  }),
);
process.exit(0);
