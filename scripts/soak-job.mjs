// The soak job: a keyed running sum and count over a rate-limited sequence, written to a collect
// sink ('sums') and, with args.out, to a transactional file sink in that directory. The source
// and the map run at parallelism 1, so that every running-sum subtask reads one channel and the
// output is deterministic at any job parallelism (several source subtasks would interleave
// differently in every run, and verify would rightly call the running sums non-deterministic).
// args.stateless=1 writes the records themselves instead of running sums: under at-least-once a
// replayed record may be counted twice in state, so only a stateless job can pass verify then.
//
// `weir verify` (scripts/soak.mjs) injects its own failures into it (throw, exit, savepoint,
// rescale, sigkill). What verify cannot inject is a failure while a snapshot is taken: with
// args.failures (JSON list of { attempt, subtask, at }), subtask `subtask` of the collect sink
// throws in its pre-commit in attempt `attempt` once it has written `at` (fraction) of its share
// of the input. soak.mjs runs that schedule itself, without verify, and checks the output.
import { defineJob, sinks, sources } from 'weir';

export default defineJob((env, args) => {
  const n = Number(args.n ?? 6000);
  const keys = Number(args.keys ?? 10);
  const failures = JSON.parse(args.failures ?? '[]');
  const sink = sinks.collect('sums');
  const pick = (ctx) =>
    failures.find((f) => f.attempt === ctx.attempt && f.subtask % ctx.parallelism === ctx.subtaskIndex);
  const snapshotFailing = {
    type: 'soak-sink',
    name: sink.name,
    createWriter(ctx) {
      const w = sink.createWriter(ctx);
      const f = pick(ctx);
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
  const records = env
    .fromSource(sources.sequence({ from: 0, to: n, ratePerSec: Number(args.rate ?? 5000) }), 'numbers')
    .setParallelism(1)
    .map((x) => ({ key: x % keys, value: x }))
    .name('to record')
    .setParallelism(1);
  const sums = args.stateless === '1' ? records.map((r) => ({ ...r })).name('copy') : records
    .keyBy((r) => r.key)
    .process((r, ctx, out) => {
      const sum = ctx.state.value('sum');
      const count = ctx.state.value('count');
      sum.update((sum.value() ?? 0) + r.value);
      count.update((count.value() ?? 0) + 1);
      out.collect({ key: ctx.key, sum: sum.value(), count: count.value() });
    })
    .name('running sum')
    .uid('running-sum');
  sums.sinkTo(failures.length > 0 ? snapshotFailing : sink);
  if (args.out) sums.sinkTo(sinks.file({ dir: args.out, format: 'jsonl' }));
});
