// The job of bench/connectors/run.ts: one connector under weir, the other end as cheap as possible.
//   args.source: 'sequence' (records { key: i % 1000, value: i }, i < args.n), 'jetstream'
//                (sources.jetstream, bounded, args.stream) or 'redis' (sources.redisStream, bounded)
//   args.sink:   'discard', 'jetstream' (to args.subject), 'redis' (to args.stream) or 'postgres'
//                (insert into args.table, columns key, value)
// Parallelism 1. A map right after the source writes the wall-clock time (ms since the epoch,
// comparable across threads) of the first record to `<args.stamp>.first` and of the n-th to
// `<args.stamp>.last`, so the runner can time the connector apart from the job's start-up.
import { writeFileSync } from 'node:fs';
import { defineJob, sinks, sources } from 'weir';

const now = () => String(performance.timeOrigin + performance.now());

export default defineJob((env, args) => {
  const n = Number(args.n);
  let seen = 0;
  const stamped = (stream) =>
    stream.map((r) => {
      seen++;
      if (seen === 1) writeFileSync(`${args.stamp}.first`, now());
      if (seen === n) writeFileSync(`${args.stamp}.last`, now());
      return r;
    });
  const input = stamped(
    args.source === 'jetstream'
      ? env.fromSource(sources.jetstream({ servers: args.servers, stream: args.stream, bounded: true }), 'in')
      : args.source === 'redis'
        ? env.fromSource(sources.redisStream({ url: args.url, stream: args.stream, bounded: true }), 'in')
        : env
            .fromSource(sources.sequence({ from: 0, to: n }), 'in')
            .map((i) => ({ key: i % 1000, value: i })),
  );
  if (args.sink === 'discard') input.sinkTo(sinks.discard());
  else if (args.sink === 'jetstream')
    input.sinkTo(sinks.jetstream({ servers: args.servers, subject: args.subject }));
  else if (args.sink === 'redis') input.sinkTo(sinks.redisStream({ url: args.url, stream: args.stream }));
  else if (args.sink === 'postgres')
    input.sinkTo(
      sinks.postgres({ connection: args.connection, table: args.table, columns: ['key', 'value'] }),
    );
  else throw new Error(`unknown sink ${args.sink}`);
});
