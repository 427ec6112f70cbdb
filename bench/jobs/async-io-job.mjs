// The async I/O benchmark job: sequence(0..n) → map or mapAsync (args.op) → discard sink.
//   op=map          — the synchronous baseline: x => x + 1
//   op=async        — mapAsync(async x => x + 1): the operator's own cost (no I/O)
//   op=async-sleep  — mapAsync with a setTimeout of args.latency ms per record: the
//                     throughput a capacity allows against a slow service (~capacity / latency)
// args: n, op, capacity (default 100), ordered ('true' | 'false', default 'true'), latency (ms).
import { defineJob, sinks, sources } from 'weir';

export default defineJob((env, args) => {
  const n = Number(args.n ?? 200_000);
  const op = args.op ?? 'async';
  const latency = Number(args.latency ?? 1);
  const options = {
    capacity: Number(args.capacity ?? 100),
    ordered: (args.ordered ?? 'true') === 'true',
    timeoutMs: args.timeout === 'inf' ? Infinity : 30_000,
  };
  const numbers = env.fromSource(sources.sequence({ from: 0, to: n }), 'numbers');
  const mapped =
    op === 'map'
      ? numbers.map((x) => x + 1)
      : op === 'async'
        ? numbers.mapAsync(async (x) => x + 1, options)
        : numbers.mapAsync(
            (x) => new Promise((resolve) => setTimeout(() => resolve(x + 1), latency)),
            options,
          );
  mapped.sinkTo(sinks.discard());
});
