// The keyed-sum job of the pipeline and checkpoint benchmarks, as a weir job module: the same
// per-record work as the pipeline baselines (bench/pipeline/pipeline-spec.ts), then a sink that
// reports per subtask the digest of the final sums (bench/pipeline/sum-digest.ts) and when its
// first record arrived and its input ended.
//
//   sequence(0..n) → map(i => ({ key: 'k' + (i % keys), value: i * 2 })) → filter(value % 3 !== 0)
//     → keyBy(key) → running sum in keyed ValueState (emit { key, sum }) → digest sink
//
// args: n (records, default 2 000 000), keys (distinct keys, default 10 000), workload ('cheap',
// default, or 'cpu-heavy': the map builds a JSON line, parses it and keys it by a SHA-1; or one of
// the diagnostic workloads that take cpu-heavy apart for the keyed task: 'hexkeys', the cheap map
// with cpu-heavy's keys (12 hex characters, the same records as cpu-heavy); 'spin', the cheap
// records behind a source slowed by ~2-3 µs of arithmetic per record, so the keyed task parks
// between bursts as behind cpu-heavy; 'hexspin', both), rate
// (records per second over all source subtasks, default unlimited: bench/pipeline/idle-cpu.mjs),
// heapSample ('1': each sink subtask samples its thread's V8 used heap every 65 536 records and
// reports the peak as `heapPeak`, bytes; the keyed state lives in the same thread, since the
// running sum and the sink are chained: bench/checkpoint/run.ts).
import { createHash } from 'node:crypto';
import { getHeapStatistics } from 'node:v8';
import { defineJob, sources } from 'weir';
import { reportSink, wallNow } from './report-sink.mjs';

/**
 * 32-bit FNV-1a, a second implementation of `fnv1a` in bench/pipeline/sum-digest.ts (workers
 * cannot load .ts): the runner compares the merged digest with the single-thread loop's, so the
 * two can only disagree loudly.
 */
function fnv1a(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Per sink subtask: the last `{ key, sum }` seen per key is that key's final sum (a key's
 * records reach one subtask, in order). Cost on the timed path: one Map.set per output record.
 */
function digestReporter(ctx, heapSample) {
  const finals = new Map();
  let emitted = 0;
  let firstAt = 0;
  let heapPeak = 0;
  return {
    write(r) {
      if (emitted++ === 0) firstAt = wallNow();
      finals.set(r.key, r.sum);
      if (heapSample && (emitted & 0xffff) === 0) {
        const used = getHeapStatistics().used_heap_size;
        if (used > heapPeak) heapPeak = used;
      }
    },
    report() {
      const endAt = wallNow();
      let total = 0;
      let mix = 0;
      for (const [key, sum] of finals) {
        total += sum;
        mix = (mix + fnv1a(`${key}=${sum}`)) >>> 0;
      }
      return {
        subtask: ctx.subtaskIndex,
        firstAt,
        endAt,
        digest: { keys: finals.size, emitted, total, mix },
        ...(heapSample ? { heapPeak: Math.max(heapPeak, getHeapStatistics().used_heap_size) } : {}),
      };
    },
  };
}

/**
 * `toRecordCpuHeavy` of bench/pipeline/pipeline-spec.ts in plain JavaScript (workers cannot load
 * .ts); the runner's checksum comparison catches any drift.
 */
function cpuHeavyRecord(i, keys) {
  const line = JSON.stringify({
    user: `u${i % keys}`,
    page: `/p/${i % 97}`,
    value: i * 2,
    agent: 'Mozilla/5.0 (X11; Linux x86_64) weir-bench',
  });
  const event = JSON.parse(line);
  return { key: createHash('sha1').update(event.user).digest('hex').slice(0, 12), value: event.value };
}

/** cpu-heavy's key of user `u${j}`. */
function hexKeyOf(j) {
  return createHash('sha1').update(`u${j}`).digest('hex').slice(0, 12);
}

/** ~2-3 µs of arithmetic that allocates nothing (the 'spin' workloads' source-side cost). */
function spin(i) {
  let h = i | 0;
  for (let k = 0; k < 2000; k++) h = Math.imul(h ^ k, 0x01000193);
  return h;
}

/** The map of each workload; the diagnostic ones build their key table once per source subtask. */
function mapOf(workload, keys) {
  const hex = (table) => table ?? Array.from({ length: keys }, (_, j) => hexKeyOf(j));
  let table = null;
  switch (workload) {
    case 'cheap':
      return (i) => ({ key: `k${i % keys}`, value: i * 2 });
    case 'cpu-heavy':
      return (i) => cpuHeavyRecord(i, keys);
    case 'hexkeys':
      return (i) => {
        table = hex(table);
        return { key: table[i % keys], value: i * 2 };
      };
    case 'spin':
      return (i) => ({ key: `k${i % keys}`, value: i * 2 + (spin(i) & 0) });
    case 'hexspin':
      return (i) => {
        table = hex(table);
        return { key: table[i % keys], value: i * 2 + (spin(i) & 0) };
      };
    default:
      throw new RangeError(`unknown workload '${workload}'`);
  }
}

export default defineJob((env, args) => {
  const n = Number(args.n ?? 2_000_000);
  const keys = Number(args.keys ?? 10_000);
  const workload = args.workload ?? 'cheap';
  const ratePerSec = args.rate === undefined ? undefined : Number(args.rate);
  const heapSample = args.heapSample === '1';
  // stateType=number: the running sum declared { type: 'number' } (heap backend: number slots).
  const stateOptions = args.stateType === 'number' ? { type: 'number' } : undefined;
  const map = mapOf(workload, keys);
  env
    .fromSource(sources.sequence({ from: 0, to: n, ...(ratePerSec ? { ratePerSec } : {}) }), 'sequence')
    .map(map)
    .name('map')
    .filter((r) => r.value % 3 !== 0)
    .name('filter')
    .keyBy((r) => r.key)
    .process((r, ctx, out) => {
      const sum = ctx.state.value('sum', stateOptions);
      const next = (sum.value() ?? 0) + r.value;
      sum.update(next);
      out.collect({ key: r.key, sum: next });
    })
    .name('running sum')
    .sinkTo(reportSink('digest', (ctx) => digestReporter(ctx, heapSample)));
});
