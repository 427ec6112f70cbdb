// The cluster takeover benchmark's job (bench/cluster/takeover.mjs): a paced source → keyBy →
// keyed count → a sink that reports, on a restored attempt, when it processed its first record.
//
// Source: each subtask emits `rate / parallelism` records/s (keys i % keys), its position being
// operator state, so a restore resumes where the checkpoint was. On attempt 0 it never ends (the
// benchmark kills an instance meanwhile); on a later attempt it emits `afterRestore` more records
// and ends, so the job finishes soon after the takeover.
// Sink: on attempt > 0, at its first record, writes `${dir}/first-<attempt>-<subtask>` holding
// wallNow() (comparable across processes on one machine).
//
// args: dir (required), keys (default 100), rate (default 2000), afterRestore (default 500).
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { defineJob } from 'weir';
import { reportSink, wallNow } from './report-sink.mjs';

const MORE = { state: 'more' };
const END = { state: 'end' };

function paced({ rate, afterRestore }) {
  return {
    type: 'paced',
    bounded: true,
    createReader(ctx) {
      let next = ctx.restoredState?.[0]?.next ?? ctx.subtaskIndex;
      const perMs = rate / ctx.parallelism / 1000;
      let budget = ctx.attempt > 0 ? afterRestore : Number.POSITIVE_INFINITY;
      const startedAt = performance.now();
      let emitted = 0;
      return {
        poll(out, max) {
          if (budget <= 0) return END;
          const allowed = Math.floor((performance.now() - startedAt) * perMs) + 1 - emitted;
          if (allowed <= 0) return { state: 'idle', ms: 1 };
          const n = Math.min(max, allowed, budget);
          for (let k = 0; k < n; k++) {
            out.collect(next);
            next += ctx.parallelism;
          }
          emitted += n;
          budget -= n;
          return MORE;
        },
        snapshotState: () => [{ next }],
      };
    },
  };
}

export default defineJob((env, args) => {
  const dir = args.dir;
  if (!dir) throw new Error('takeover job: args.dir is required');
  const keys = Number(args.keys ?? 100);
  env
    .fromSource(
      paced({ rate: Number(args.rate ?? 2000), afterRestore: Number(args.afterRestore ?? 500) }),
      'paced',
    )
    .keyBy((i) => i % keys)
    .process((i, ctx, out) => {
      const count = ctx.state.value('count');
      count.update((count.value() ?? 0) + 1);
      out.collect(i);
    })
    .name('count per key')
    .sinkTo(
      reportSink('takeover', (ctx) => {
        let first = true;
        return {
          write() {
            if (!first) return;
            first = false;
            if (ctx.attempt > 0) {
              // Written then renamed: the benchmark polls for the name and must never read it empty.
              const name = `first-${ctx.attempt}-${ctx.subtaskIndex}`;
              writeFileSync(path.join(dir, `.${name}.tmp`), String(wallNow()));
              renameSync(path.join(dir, `.${name}.tmp`), path.join(dir, name));
            }
          },
          report: () => ({ subtask: ctx.subtaskIndex, attempt: ctx.attempt }),
        };
      }),
    );
});
