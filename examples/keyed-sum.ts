// Keyed running sum (DESIGN.md §6): `weir run examples/keyed-sum.ts --parallelism 2 --arg n=1000000`
import { defineJob, sinks, sources } from 'weir';

export default defineJob((env, args) => {
  env
    .fromSource(sources.sequence({ from: 0, to: Number(args.n ?? 1_000_000) }), 'numbers')
    .map((n: number) => ({ key: n % 100, value: n }))
    .keyBy((r) => r.key)
    .process((r, ctx, out) => {
      const sum = ctx.state.value<number>('sum'); // keyed ValueState
      sum.update((sum.value() ?? 0) + r.value);
      out.collect({ key: ctx.key, sum: sum.value() });
    })
    .sinkTo(args.sink === 'collect' ? sinks.collect('sums') : sinks.discard());
});
