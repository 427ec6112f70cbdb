import { describe, expect, it } from 'vitest';
import type { AggregateFunction } from '../../../../src/api/functions.js';
import { type WindowAssigner, windows } from '../../../../src/api/windows.js';
import type { WindowFunctionSpec } from '../../../../src/graph/stream-graph.js';
import { WindowOperator } from '../../../../src/worker/operators/window-operator.js';
import { TaskTime } from '../../../../src/worker/timers/task-time.js';
import { heapBackend, type TestBackend } from '../timers/heap-backend.js';

interface Ev {
  k: string;
  v: number;
}

function harness(
  assigner: WindowAssigner,
  fn: WindowFunctionSpec,
  options: { lateness?: number; backend?: TestBackend; late?: boolean } = {},
) {
  const time = new TaskTime();
  const out: { value: unknown; ts: number | undefined }[] = [];
  const late: unknown[] = [];
  const watermarks: number[] = [];
  const backend = options.backend ?? heapBackend();
  const op = new WindowOperator(
    0,
    'w',
    'w',
    { subtaskIndex: 0, parallelism: 1, attempt: 0, operatorName: 'w' },
    { collect: (value) => out.push({ value, ts: time.timestamp }) },
    backend,
    {
      kind: 'window',
      assigner,
      function: fn,
      keySelectors: [(e: Ev) => e.k, (e: Ev) => e.k],
      allowedLateness: options.lateness ?? 0,
      ...(options.late ? { lateDataTag: 'late' } : {}),
    },
    time,
    options.late ? { collect: (v) => late.push(v) } : undefined,
  );
  op.watermarkOutput = { emitWatermark: (ts) => watermarks.push(ts) };
  return {
    op,
    out,
    late,
    watermarks,
    backend,
    element(k: string, v: number, ts: number, input: 0 | 1 = 0) {
      time.timestamp = ts;
      op.processElement({ k, v }, input);
    },
  };
}

const sum: WindowFunctionSpec = { kind: 'reduce', fn: (a: Ev, b: Ev) => ({ k: a.k, v: a.v + b.v }) };
const values = (h: { out: { value: unknown }[] }) => h.out.map((o) => o.value);

describe('WindowOperator', () => {
  it('tumbling reduce: fires each window once the watermark reaches end - 1, results stamped end - 1', () => {
    const h = harness(windows.tumbling({ size: 10 }), sum);
    h.element('a', 1, 3);
    h.element('b', 2, 5);
    h.element('a', 4, 12);
    h.element('a', 8, 9);
    h.op.processWatermark(8);
    expect(h.out).toEqual([]);
    h.op.processWatermark(9);
    expect(h.out).toEqual([
      { value: { k: 'a', v: 9 }, ts: 9 },
      { value: { k: 'b', v: 2 }, ts: 9 },
    ]);
    expect(h.watermarks).toEqual([8, 9]);
    h.op.processWatermark(Infinity);
    expect(values(h).slice(2)).toEqual([{ k: 'a', v: 4 }]);
  });

  it('sliding aggregate: an element counts in every window it belongs to', () => {
    const agg: AggregateFunction<Ev, number, number> = {
      createAccumulator: () => 0,
      add: (e, acc) => acc + e.v,
      getResult: (acc) => acc,
    };
    const h = harness(windows.sliding({ size: 20, slide: 10 }), { kind: 'aggregate', fn: agg });
    h.element('a', 1, 5); // [-10,10) [0,20)
    h.element('a', 10, 15); // [0,20) [10,30)
    h.op.processWatermark(Infinity);
    expect(h.out).toEqual([
      { value: 1, ts: 9 },
      { value: 11, ts: 19 },
      { value: 10, ts: 29 },
    ]);
  });

  it('session process: windows merge (touching included), contents combined, one firing per session', () => {
    const fired: string[] = [];
    const h = harness(windows.session({ gap: 10 }), {
      kind: 'process',
      fn: (els: Ev[], ctx, out) => {
        fired.push(`${String(ctx.key)}[${ctx.window.start},${ctx.window.end})`);
        out.collect(els.map((e) => e.v).sort((x, y) => x - y));
      },
    });
    h.element('a', 1, 0);
    h.element('a', 2, 30);
    h.element('a', 3, 20); // touches [30,40) and [0,10)? [20,30) touches [30,40): merges -> [20,40)
    h.element('a', 4, 10); // [10,20) touches [0,10) and [20,40): all merge -> [0,40)
    h.element('b', 5, 5);
    h.op.processWatermark(38);
    expect(fired).toEqual(['b[5,15)']);
    h.op.processWatermark(39);
    expect(fired).toEqual(['b[5,15)', 'a[0,40)']);
    expect(values(h)).toEqual([[5], [1, 2, 3, 4]]);
  });

  it('allowed lateness: late firings with updated contents, then late elements go to the side output', () => {
    const h = harness(windows.tumbling({ size: 10 }), sum, { lateness: 5, late: true });
    h.element('a', 1, 2);
    h.op.processWatermark(9);
    expect(values(h)).toEqual([{ k: 'a', v: 1 }]);
    h.element('a', 2, 4); // late but within lateness: fires again at once
    expect(values(h)).toEqual([
      { k: 'a', v: 1 },
      { k: 'a', v: 3 },
    ]);
    h.op.processWatermark(13); // no second on-time firing
    expect(h.out).toHaveLength(2);
    h.op.processWatermark(14); // end - 1 + lateness: purged
    h.element('a', 4, 5);
    expect(h.out).toHaveLength(2);
    expect(h.late).toEqual([{ k: 'a', v: 4 }]);
    expect(h.op.counters()).toEqual({ numLateRecordsDropped: 0, numLateRecordsSideOutput: 1 });
  });

  it('without a side output late elements are dropped and counted', () => {
    const h = harness(windows.tumbling({ size: 10 }), sum);
    h.op.processWatermark(100);
    h.element('a', 1, 50);
    expect(h.out).toEqual([]);
    expect(h.op.counters()?.numLateRecordsDropped).toBe(1);
  });

  it('window join: every pair of the two inputs per key and window', () => {
    const h = harness(windows.tumbling({ size: 10 }), {
      kind: 'join',
      fn: (l: Ev, r: Ev) => `${l.k}:${l.v}-${r.v}`,
    });
    h.element('a', 1, 1, 0);
    h.element('a', 2, 2, 0);
    h.element('a', 10, 3, 1);
    h.element('b', 1, 3, 0); // no right side: nothing
    h.element('a', 20, 15, 1); // other window
    h.op.processWatermark(Infinity);
    expect(values(h)).toEqual(['a:1-10', 'a:2-10']);
  });

  it('contents and timers are keyed state: a restored operator fires exactly the pending windows', async () => {
    const first = harness(windows.tumbling({ size: 10 }), sum);
    first.element('a', 1, 3);
    first.element('a', 2, 13);
    first.op.processWatermark(9);
    expect(values(first)).toEqual([{ k: 'a', v: 1 }]);
    const second = harness(windows.tumbling({ size: 10 }), sum, {
      backend: await first.backend.restoreCopy(),
    });
    second.element('a', 4, 15);
    second.op.processWatermark(Infinity);
    expect(values(second)).toEqual([{ k: 'a', v: 6 }]);
  });

  it('rescaling: window contents and timers follow their keys to the new subtasks', async () => {
    const first = harness(windows.tumbling({ size: 10 }), sum);
    const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
    for (const [i, k] of keys.entries()) {
      first.element(k, i, 1);
      first.element(k, 100, 5);
    }
    const parts = await first.backend.restoreRescaled(2);
    const outs = parts.map((b) => {
      const h = harness(windows.tumbling({ size: 10 }), sum, { backend: b });
      h.op.processWatermark(Infinity);
      return values(h) as Ev[];
    });
    expect(outs.every((o) => o.length > 0)).toBe(true);
    const all = outs.flat().sort((a, b) => a.v - b.v);
    expect(all).toEqual(keys.map((k, i) => ({ k, v: 100 + i })));
  });

  it('event-time windows reject records without a timestamp', () => {
    const h = harness(windows.tumbling({ size: 10 }), sum);
    expect(() => h.op.processElement({ k: 'a', v: 1 }, 0)).toThrow(/assignTimestampsAndWatermarks/);
  });
});
