// Job-side helpers shared by the weir benchmark jobs. Job modules run in worker threads, which
// cannot load .ts, so this is plain JavaScript importing 'weir' (the package's own dist/).
import { sinks } from 'weir';

/**
 * Wall-clock milliseconds comparable across worker threads: each thread's
 * `performance.timeOrigin` is its own start time, so `timeOrigin + now()` is the common epoch.
 */
export function wallNow() {
  return performance.timeOrigin + performance.now();
}

/**
 * A sink that folds every record into a per-subtask reporter and, at end of input, hands the
 * reporter's one summary record to the job client through `sinks.collect(name)`: the benchmark
 * gets `JobResult.sinks[name]` = one report per sink subtask, without collecting every record.
 *
 * The collect writer underneath keeps its semantics: under exactly-once the report is part of the
 * final checkpoint's transaction (delivered once it completes), otherwise it is delivered at
 * finish. The reporter's own fields are not checkpointed, so a report covers the records the
 * last attempt wrote; jobs that restart must not rely on it for totals.
 *
 * `createReporter(ctx)` returns `{ write(value), report() }`, optionally with hooks
 * `onPreCommit(checkpointId)` (the barrier passed this sink) and `onCheckpointComplete(checkpointId)`;
 * `ctx` is the SinkContext.
 */
export function reportSink(name, createReporter) {
  const collect = sinks.collect(name);
  return {
    type: 'bench-report',
    name,
    createWriter(ctx) {
      const inner = collect.createWriter(ctx);
      const reporter = createReporter(ctx);
      return {
        write: (value) => reporter.write(value),
        preCommit(checkpointId) {
          reporter.onPreCommit?.(checkpointId);
          return inner.preCommit?.(checkpointId) ?? [];
        },
        notifyCheckpointComplete(checkpointId) {
          inner.notifyCheckpointComplete?.(checkpointId);
          reporter.onCheckpointComplete?.(checkpointId);
        },
        notifyCheckpointAborted: (checkpointId) => inner.notifyCheckpointAborted?.(checkpointId),
        finish() {
          // Before the final checkpoint (StreamTask finishes operators first), so the
          // transactional writer seals the report into it.
          inner.write(reporter.report());
          inner.finish?.();
        },
        close: () => inner.close?.(),
      };
    },
  };
}
