import { describe, expect, it } from 'vitest';
import { resolveWatermarkStrategy } from '../../../../src/api/watermarks.js';
import { TimestampsAndWatermarksOperator } from '../../../../src/worker/operators/timestamps-and-watermarks-operator.js';
import { TaskTime } from '../../../../src/worker/timers/task-time.js';

class FakeTime extends TaskTime {
  clock = 0;
  override now(): number {
    return this.clock;
  }
}

function assigner(options: { everyRecords?: number; interval?: number }, restored?: unknown[]) {
  const time = new FakeTime();
  const out: [unknown, number | undefined][] = [];
  const watermarks: number[] = [];
  const op = new TimestampsAndWatermarksOperator(
    0,
    'a',
    'a',
    { subtaskIndex: 0, parallelism: 1, attempt: 0, operatorName: 'a' },
    { collect: (v) => out.push([v, time.timestamp]) },
    resolveWatermarkStrategy({ timestamp: (v: number) => v, maxOutOfOrderness: 10, ...options }),
    time,
    restored,
  );
  op.watermarkOutput = { emitWatermark: (ts) => watermarks.push(ts) };
  op.open();
  return { op, out, watermarks, time };
}

describe('TimestampsAndWatermarksOperator', () => {
  it('stamps records and emits max - maxOutOfOrderness - 1 periodically, only when advanced', () => {
    const a = assigner({ interval: 100 });
    expect(a.time.nextDeadline).toBe(100);
    a.op.processElement(50);
    a.op.processElement(40);
    expect(a.out).toEqual([
      [50, 50],
      [40, 40],
    ]);
    expect(a.watermarks).toEqual([]);
    a.time.clock = 100;
    a.time.nextDeadline = Infinity;
    a.op.onProcessingTime(100);
    expect(a.watermarks).toEqual([39]);
    expect(a.time.nextDeadline).toBe(200);
    a.time.nextDeadline = Infinity;
    a.op.onProcessingTime(200); // not advanced: nothing
    expect(a.watermarks).toEqual([39]);
  });

  it('everyRecords: 1 emits after each advancing record; upstream watermarks are replaced except Infinity', () => {
    const a = assigner({ everyRecords: 1 });
    a.op.processElement(20);
    a.op.processElement(15);
    a.op.processElement(30);
    a.op.processWatermark(1000); // an upstream watermark: ignored
    expect(a.watermarks).toEqual([9, 19]);
    a.op.processWatermark(Infinity);
    expect(a.watermarks).toEqual([9, 19, Infinity]);
    a.op.finish(); // already final: nothing more
    expect(a.watermarks).toEqual([9, 19, Infinity]);
  });

  it('snapshots its highest timestamp; a restored subtask re-emits its watermark first (smallest of several)', () => {
    const a = assigner({});
    a.op.processElement(70);
    expect(a.op.snapshotState(1).operatorState).toEqual([{ maxTimestamp: 70 }]);
    const b = assigner({}, [{ maxTimestamp: 70 }, { maxTimestamp: 90 }]);
    expect(b.watermarks).toEqual([59]);
  });

  it('rejects a timestamp that is not a finite number, naming the operator', () => {
    const a = assigner({});
    expect(() => a.op.processElement('x' as never)).toThrow(/finite numbers/);
  });
});
