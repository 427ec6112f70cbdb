/** The job `weir demo` runs: a keyed running sum, collected. */
import { defineJob } from '../api/define-job.js';
import { collect } from '../connectors/collect-sink.js';
import { sequence } from '../connectors/sequence-source.js';

export default defineJob((env, args) => {
  env
    .fromSource(sequence({ from: 0, to: Number(args.n ?? 1_000_000) }), 'numbers')
    .map((n: number) => ({ key: n % 100, value: n }))
    .keyBy((r) => r.key)
    .process((r, ctx, out) => {
      const sum = ctx.state.value<number>('sum');
      sum.update((sum.value() ?? 0) + r.value);
      out.collect({ key: ctx.key, sum: sum.value() });
    })
    .name('running sum')
    .sinkTo(collect('sums'));
});
