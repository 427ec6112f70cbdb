// The job of bench/connectors/redis-idle.mjs: an unbounded sources.redisStream on args.stream,
// each record ({ t: wall-clock ms when it was added }) appended as "latency ms" to args.out.
// `WEIR_DIST` (inherited by the worker threads) picks the weir build to load, so one run can
// compare two builds.
import { appendFileSync } from 'node:fs';

const { defineJob, sinks, sources } = await import(process.env.WEIR_DIST ?? 'weir');

export default defineJob((env, args) => {
  env
    .fromSource(sources.redisStream({ url: args.url, stream: args.stream }), 'in')
    .map((r) => {
      appendFileSync(args.out, `${performance.timeOrigin + performance.now() - r.t}\n`);
      return r;
    })
    .sinkTo(sinks.discard());
});
