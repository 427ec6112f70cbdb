// One Nexmark query as a weir job for the benchmark: sources.nexmark → event-time timestamps and
// watermarks → the query (bench/nexmark/queries.mjs) → a discarding sink (nexmark-flink's
// blackhole sink). args: query (q0 …), events, windowMs (default 10 000, Flink's 10 s windows),
// slideMs (default 2 000, q5's slide).
import { defineJob, sinks, sources } from 'weir';
import { buildQuery } from './queries.mjs';

export default defineJob((env, args) => {
  const events = Number(args.events ?? 1_000_000);
  const input = env
    .fromSource(sources.nexmark({ events }), 'nexmark')
    .assignTimestampsAndWatermarks({ timestamp: (e) => e.dateTime, maxOutOfOrderness: 0 });
  buildQuery(args.query ?? 'q0', input, {
    windowMs: Number(args.windowMs ?? 10_000),
    slideMs: Number(args.slideMs ?? 2_000),
  }).sinkTo(sinks.discard());
});
