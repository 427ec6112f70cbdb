// The latency benchmark's job: a keyed two-input job at a fixed input rate, measuring end-to-end
// latency per record (source emit → sink receive) into HDR histograms in the sink.
//
//   sequence A (rate/s) → stamp ─┐
//                                ├─ connect → keyBy(key, key) → keyed co-process (count per key) → latency sink
//   sequence B (rate/s) → stamp ─┘
//
// Every record carries `t` = wall-clock ms (`performance.timeOrigin + performance.now()`, the
// same epoch in every worker thread) taken right after its source emitted it; the sink (chained
// to the co-process) records `now − t` in µs, per input. Records of the first `warmupMs` of
// each source are not recorded (JIT warm-up, deployment).
//
// The slow input (args.stallMs > 0): source B's task blocks for `stallMs` every `stallEvery` ms
// before a poll — a blocking call or a slow upstream. It sleeps in Atomics.wait, so it takes no
// CPU from the other tasks (a busy-wait would, on a 2-core machine, and slow input A down in
// both modes). Its records are stamped after the stall, so they do not count it; but a
// checkpoint trigger that arrives during a stall is handled after it, so B's barrier is late, and
// under exactly-once the co-process blocks input A until it arrives (alignment).
//
// args: rate (records/s per source, default 5000), seconds (default 10), keys (default 1000),
// stallMs (default 0), stallEvery (ms, default 200), warmupMs (default 1000).
import hdr from 'hdr-histogram-js';
import { defineJob, sources } from 'weir';
import { reportSink, wallNow } from './report-sink.mjs';

/** Wraps a source so its reader blocks its thread for `stallMs` once every `everyMs` before a poll. */
function stalling(source, stallMs, everyMs) {
  if (stallMs <= 0) return source;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  return {
    type: source.type,
    bounded: source.bounded,
    createReader(ctx) {
      const inner = source.createReader(ctx);
      let next = wallNow() + everyMs;
      return {
        poll(out, max) {
          const now = wallNow();
          if (now >= next) {
            // Nothing ever notifies `sleeper`: this sleeps the whole stall, control messages
            // included (they wait in the port until the task loop runs again).
            Atomics.wait(sleeper, 0, 0, stallMs);
            next = now + everyMs;
          }
          return inner.poll(out, max);
        },
        snapshotState: (checkpointId) => inner.snapshotState(checkpointId),
        metrics: inner.metrics ? () => inner.metrics() : undefined,
        close: () => inner.close?.(),
      };
    },
  };
}

function histogram() {
  return hdr.build({
    bitBucketSize: 64,
    autoResize: true,
    lowestDiscernibleValue: 1,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
}

export default defineJob((env, args) => {
  const rate = Number(args.rate ?? 5000);
  const seconds = Number(args.seconds ?? 10);
  const keys = Number(args.keys ?? 1000);
  const stallMs = Number(args.stallMs ?? 0);
  const stallEvery = Number(args.stallEvery ?? 200);
  const skip = Math.round((rate * Number(args.warmupMs ?? 1000)) / 1000);
  const n = Math.round(rate * seconds);

  const stamp = (input) => (i) => ({ input, i, key: i % keys, t: wallNow() });
  const a = env.fromSource(sources.sequence({ from: 0, to: n, ratePerSec: rate }), 'input A').map(stamp(0));
  const b = env
    .fromSource(
      stalling(sources.sequence({ from: 0, to: n, ratePerSec: rate }), stallMs, stallEvery),
      'input B',
    )
    .map(stamp(1));
  const count = (r, ctx, out) => {
    const c = ctx.state.value('count');
    c.update((c.value() ?? 0) + 1);
    out.collect(r);
  };
  a.connect(b)
    .keyBy(
      (r) => r.key,
      (r) => r.key,
    )
    .process({ processElement1: count, processElement2: count })
    .name('count per key')
    .sinkTo(
      reportSink('latency', (ctx) => {
        const perInput = [histogram(), histogram()];
        let received = 0;
        return {
          write(r) {
            received++;
            if (r.i < skip) return;
            const us = Math.round((wallNow() - r.t) * 1000);
            perInput[r.input].recordValue(Math.max(us, 0));
          },
          report: () => ({
            subtask: ctx.subtaskIndex,
            received,
            a: hdr.encodeIntoCompressedBase64(perInput[0]),
            b: hdr.encodeIntoCompressedBase64(perInput[1]),
          }),
        };
      }),
    );
});
