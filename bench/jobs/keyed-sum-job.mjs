// The pipeline benchmark's job as a weir job module (same per-record work as the baselines).
import { defineJob, sinks, sources } from 'weir';

export default defineJob((env, args) => {
  env
    .fromSource(sources.sequence({ from: 0, to: Number(args.n ?? 2_000_000) }), 'sequence')
    .map((i) => ({ key: `k${i % 10000}`, value: i * 2 }))
    .filter((r) => r.value % 3 !== 0)
    .keyBy((r) => r.key)
    .process((r, ctx, out) => {
      const sum = ctx.state.value('sum');
      const next = (sum.value() ?? 0) + r.value;
      sum.update(next);
      out.collect({ key: r.key, sum: next });
    })
    .name('running sum')
    .sinkTo(sinks.discard());
});
