import { describe, expect, it } from 'vitest';
import {
  IntervalJoinOperator,
  LEFT_BUFFER,
  RIGHT_BUFFER,
} from '../../../../src/worker/operators/interval-join-operator.js';
import { TaskTime } from '../../../../src/worker/timers/task-time.js';
import { heapBackend } from '../timers/heap-backend.js';

function harness(lower: number, upper: number) {
  const time = new TaskTime();
  const out: { value: unknown; ts: number | undefined }[] = [];
  const backend = heapBackend();
  const op = new IntervalJoinOperator(
    0,
    'j',
    'j',
    { subtaskIndex: 0, parallelism: 1, attempt: 0, operatorName: 'j' },
    { collect: (value) => out.push({ value, ts: time.timestamp }) },
    backend,
    {
      kind: 'interval-join',
      lower,
      upper,
      fn: (l: { v: string }, r: { v: string }, ctx, o) => o.collect(`${String(ctx.key)}:${l.v}+${r.v}`),
      keySelectors: [(e: { k: string }) => e.k, (e: { k: string }) => e.k],
    },
    time,
  );
  const send = (side: 0 | 1, k: string, v: string, ts: number) => {
    time.timestamp = ts;
    op.processElement({ k, v }, side);
  };
  const buffered = (k: string) => {
    backend.setCurrentKey(k);
    return [[...backend.store.map(LEFT_BUFFER).keys()], [...backend.store.map(RIGHT_BUFFER).keys()]];
  };
  return { op, out, send, buffered };
}

describe('IntervalJoinOperator', () => {
  it('joins pairs with right time in [left + lower, left + upper], bounds inclusive, either arrival order', () => {
    const h = harness(-5, 10);
    h.send(0, 'a', 'L20', 20);
    h.send(1, 'a', 'R15', 15); // 20 - 5: in
    h.send(1, 'a', 'R14', 14); // out
    h.send(1, 'a', 'R30', 30); // 20 + 10: in
    h.send(1, 'a', 'R31', 31); // out
    h.send(1, 'b', 'R20', 20); // other key
    h.send(0, 'a', 'L25', 25); // matches R30 (in [20, 35]); R31 too
    expect(h.out.map((o) => o.value)).toEqual(['a:L20+R15', 'a:L20+R30', 'a:L25+R30', 'a:L25+R31']);
    // results carry max(left, right)
    expect(h.out.map((o) => o.ts)).toEqual([20, 30, 30, 31]);
  });

  it('drops state once no partner can arrive, and drops elements behind the watermark', () => {
    const h = harness(-5, 10);
    h.send(0, 'a', 'L20', 20); // kept until watermark 30
    h.send(1, 'a', 'R40', 40); // kept until watermark 45
    h.op.watermarkOutput = { emitWatermark() {} };
    h.op.processWatermark(29);
    expect(h.buffered('a')).toEqual([[20], [40]]);
    h.op.processWatermark(30);
    expect(h.buffered('a')).toEqual([[], [40]]);
    h.op.processWatermark(45);
    expect(h.buffered('a')).toEqual([[], []]);
    h.send(0, 'a', 'L44', 44);
    expect(h.op.counters()).toEqual({ numLateRecordsDropped: 1 });
  });
});
