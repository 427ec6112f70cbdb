// The recovery benchmark's job: fill `keys` keys of keyed state, checkpoint it, crash a worker,
// and time how long the restored attempt takes to process records again.
//
//   fill-then-trickle source → keyBy → keyed process (count per key) → crash-and-report sink
//
// Source: each subtask emits its share of 0..keys at full speed (the fill: one record per key),
// then its share of `tail` further records at `rate` records/s in total (keys (i − keys) % keys,
// all existing). Its positions are operator state, so a restore resumes where the checkpoint was.
// On a restored attempt (ctx.attempt > 0) each subtask emits at most `afterRestore` more
// records and ends: the benchmark only needs the first ones, not the rest of the tail.
//
// Crash (attempt 0, sink subtask 0): once this subtask has seen tail records from every source
// subtask (so the fill has passed it), the next barrier arms the crash; when that checkpoint is
// complete, the next record writes `wallNow()` to `crashFile` and the worker calls
// process.exit(1). The restored attempt's sinks report when they processed their first record
// and how many records found their key's state already there (restored state is really used).
//
// args: keys, tail (records, default 60 000), rate (default 2000), afterRestore (default 200),
// crashFile (required).
import { writeFileSync } from 'node:fs';
import { defineJob } from 'weir';
import { reportSink, wallNow } from './report-sink.mjs';

const MORE = { state: 'more' };
const END = { state: 'end' };

function share(from, to, subtask, parallelism) {
  const n = to - from;
  return {
    start: from + Math.floor((subtask * n) / parallelism),
    end: from + Math.floor(((subtask + 1) * n) / parallelism),
  };
}

function fillThenTrickle({ keys, tail, rate, afterRestore }) {
  return {
    type: 'fill-then-trickle',
    bounded: true,
    createReader(ctx) {
      const splits = ctx.restoredState
        ? ctx.restoredState.map((s) => ({ ...s }))
        : [
            { ...share(0, keys, ctx.subtaskIndex, ctx.parallelism), trickle: false },
            { ...share(keys, keys + tail, ctx.subtaskIndex, ctx.parallelism), trickle: true },
          ].map((s) => ({ ...s, next: s.start }));
      const ratePerMs = rate / ctx.parallelism / 1000;
      let budgetLeft = ctx.attempt > 0 ? afterRestore : Number.POSITIVE_INFINITY;
      let trickleStart = 0;
      let trickled = 0;
      return {
        poll(out, max) {
          const split = splits.find((s) => s.next < s.end);
          if (split === undefined || budgetLeft <= 0) return END;
          let n = Math.min(max, split.end - split.next, budgetLeft);
          if (split.trickle) {
            const now = performance.now();
            if (trickled === 0) trickleStart = now;
            const allowed = Math.floor((now - trickleStart) * ratePerMs) + 1 - trickled;
            if (allowed <= 0) return { state: 'idle', ms: 1 };
            n = Math.min(n, allowed);
            trickled += n;
          }
          for (let k = 0; k < n; k++) {
            const i = split.next;
            split.next = i + 1;
            out.collect({
              key: i < keys ? i : (i - keys) % keys,
              tail: split.trickle,
              from: ctx.subtaskIndex,
            });
          }
          budgetLeft -= n;
          return MORE;
        },
        snapshotState: () => splits.map((s) => ({ ...s })),
      };
    },
  };
}

export default defineJob((env, args) => {
  const keys = Number(args.keys);
  const crashFile = args.crashFile;
  if (!(keys > 0) || !crashFile) throw new Error('recovery job: args keys and crashFile are required');
  env
    .fromSource(
      fillThenTrickle({
        keys,
        tail: Number(args.tail ?? 60_000),
        rate: Number(args.rate ?? 2000),
        afterRestore: Number(args.afterRestore ?? 200),
      }),
      'fill then trickle',
    )
    .keyBy((r) => r.key)
    .process((r, ctx, out) => {
      const count = ctx.state.value('count');
      const before = count.value();
      count.update((before ?? 0) + 1);
      out.collect({ tail: r.tail, from: r.from, hadState: before !== undefined });
    })
    .name('count per key')
    .sinkTo(
      reportSink('recovery', (ctx) => {
        const crashes = ctx.attempt === 0 && ctx.subtaskIndex === 0;
        // The source runs at the job's parallelism too: tail records from that many source
        // subtasks mean every source has finished its fill.
        const tailFrom = new Set();
        let armedAt = null; // checkpoint id whose barrier passed after the fill
        let crashNow = false;
        let firstAt = 0;
        let records = 0;
        let hadState = 0;
        return {
          write(r) {
            if (records++ === 0) firstAt = wallNow();
            if (r.hadState) hadState++;
            if (!crashes) return;
            if (r.tail) tailFrom.add(r.from);
            if (crashNow) {
              writeFileSync(crashFile, String(wallNow()));
              process.exit(1);
            }
          },
          onPreCommit(checkpointId) {
            if (crashes && armedAt === null && tailFrom.size > 0 && tailFrom.size >= ctx.parallelism) {
              armedAt = checkpointId;
            }
          },
          onCheckpointComplete(checkpointId) {
            if (armedAt !== null && checkpointId >= armedAt) crashNow = true;
          },
          report: () => ({ subtask: ctx.subtaskIndex, attempt: ctx.attempt, firstAt, records, hadState }),
        };
      }),
    );
});
