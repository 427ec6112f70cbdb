// The soak job: a keyed running sum and count over a rate-limited sequence, with a schedule of
// injected failures (args.failures: JSON list of { attempt, subtask, kind, at }): in attempt
// `attempt`, subtask `subtask` of the map fails once it has seen `at` (fraction) of its share of
// the input — `throw` in user code, `exit` (process.exit in the worker), or `snapshot` (a throw in
// the sink's pre-commit, i.e. while a snapshot is being taken).
import { defineJob, sinks, sources } from 'weir';

export default defineJob((env, args) => {
  const n = Number(args.n ?? 6000);
  const keys = Number(args.keys ?? 10);
  const failures = JSON.parse(args.failures ?? '[]');
  const sink = sinks.collect('sums');
  let seen = 0;
  const pick = (ctx, kind) =>
    failures.find((f) => f.attempt === ctx.attempt && f.subtask % ctx.parallelism === ctx.subtaskIndex && f.kind === kind);
  const snapshotFailing = {
    type: 'soak-sink',
    name: sink.name,
    createWriter(ctx) {
      const w = sink.createWriter(ctx);
      const f = pick(ctx, 'snapshot');
      let written = 0;
      return {
        ...w,
        write(v) {
          written++;
          w.write(v);
        },
        preCommit(id) {
          if (f && written >= (f.at * n) / ctx.parallelism) throw new Error(`injected snapshot failure at checkpoint ${id}`);
          return w.preCommit(id);
        },
        notifyCheckpointComplete: (id) => w.notifyCheckpointComplete?.(id),
        finish: () => w.finish?.(),
      };
    },
  };
  env
    .fromSource(sources.sequence({ from: 0, to: n, ratePerSec: Number(args.rate ?? 5000) }), 'numbers')
    .map((x, ctx) => {
      seen++;
      for (const kind of ['throw', 'exit']) {
        const f = pick(ctx, kind);
        if (f && seen === Math.max(1, Math.floor((f.at * n) / ctx.parallelism))) {
          if (kind === 'exit') process.exit(1);
          throw new Error(`injected failure at ${x}`);
        }
      }
      return { key: x % keys, value: x };
    })
    .name('maybe fail')
    .keyBy((r) => r.key)
    .process((r, ctx, out) => {
      const sum = ctx.state.value('sum');
      const count = ctx.state.value('count');
      sum.update((sum.value() ?? 0) + r.value);
      count.update((count.value() ?? 0) + 1);
      out.collect({ key: ctx.key, sum: sum.value(), count: count.value() });
    })
    .name('running sum')
    .sinkTo(snapshotFailing);
});
