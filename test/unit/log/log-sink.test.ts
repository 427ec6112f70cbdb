/**
 * `sinks.log` writers driven by hand: two-phase commit under exactly-once (nothing visible before
 * the checkpoint completes, commit-on-restore idempotent, also after rescaling), batches under
 * at-least-once, and bad records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckpointingMode, SinkContext, SinkWriter } from '../../../src/api/source.js';
import { log as logSink } from '../../../src/connectors/log-sink.js';
import {
  InvalidOptionError,
  LogPartitionCountMismatchError,
  LogRecordEncodingError,
} from '../../../src/errors.js';
import { openLog } from '../../../src/log/index.js';
import { partitionForKey } from '../../../src/log/partition-routing.js';
import { redistributeOperatorState } from '../../../src/state/redistribute-operator-state.js';
import { tempLogDir } from './helpers.js';

const ctx = (
  checkpointingMode: CheckpointingMode,
  subtaskIndex = 0,
  parallelism = 1,
  attempt = 0,
  restoredState?: unknown[],
): SinkContext => ({
  subtaskIndex,
  parallelism,
  attempt,
  operatorName: 'to log',
  checkpointingMode,
  restoredState,
  deliver: () => {
    throw new Error('sinks.log does not deliver to the client');
  },
});

describe('sinks.log', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const setup = () => {
    const t = tempLogDir('sink');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const all = (topic = 'out') => {
      const tp = log.topic<number>(topic);
      return Array.from({ length: tp.partitions }, (_, p) => tp.read(p, 0, 1_000_000).map((r) => r.value))
        .flat()
        .sort((a, b) => a - b);
    };
    return { dir: t.dir, log, all };
  };
  const track = <T>(w: SinkWriter<T>) => {
    cleanups.push(() => w.close?.());
    return w as SinkWriter<T> & { whenCommitted(): Promise<void> };
  };

  it('exactly-once: appends a transaction only when its checkpoint completes, older ones too', async () => {
    const { dir, all } = setup();
    const w = track(logSink<number>({ dir, topic: 'out', partitions: 2 }).createWriter(ctx('exactly-once')));
    for (const v of [1, 2, 3]) w.write(v);
    w.preCommit!(1);
    for (const v of [4, 5]) w.write(v);
    w.preCommit!(2);
    w.write(6);
    await w.whenCommitted();
    expect(all()).toEqual([]);
    w.notifyCheckpointComplete!(1);
    await w.whenCommitted();
    expect(all()).toEqual([1, 2, 3]);
    // checkpoint 3's completion also commits 2 (whose own notification never came)
    w.preCommit!(3);
    w.notifyCheckpointComplete!(3);
    await w.whenCommitted();
    expect(all()).toEqual([1, 2, 3, 4, 5, 6]);
    w.notifyCheckpointComplete!(3);
    await w.whenCommitted();
    expect(all()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('exactly-once: commit-on-restore appends what was not committed and nothing twice, at any parallelism', async () => {
    const { dir, all } = setup();
    const sink = logSink<number>({ dir, topic: 'out', partitions: 3, key: (v) => v % 10 });
    const before = [0, 1].map((s) => track(sink.createWriter(ctx('exactly-once', s, 2))));
    before[0].write(1);
    before[1].write(2);
    for (const w of before) w.preCommit!(7);
    before[0].write(3);
    before[1].write(4);
    const snapshot = before.map((w) => w.preCommit!(8)); // checkpoint 8 holds sealed 7 and 8
    // checkpoint 8 completes; only subtask 0 hears of it before the failure
    before[0].notifyCheckpointComplete!(8);
    before[0].write(99); // after the checkpoint: rewound, never committed
    await before[0].whenCommitted();
    expect(all()).toEqual([1, 3]);
    // restore checkpoint 8 at parallelism 3, attempt 1
    const restored = redistributeOperatorState(snapshot, 3, 'even-split');
    const after = restored.map((state, s) => track(sink.createWriter(ctx('exactly-once', s, 3, 1, state))));
    await Promise.all(after.map((w) => w.whenCommitted()));
    expect(all()).toEqual([1, 2, 3, 4]);
    // and once more (a failure during the restore): still nothing twice
    const again = restored.map((state, s) => track(sink.createWriter(ctx('exactly-once', s, 3, 2, state))));
    await Promise.all(again.map((w) => w.whenCommitted()));
    expect(all()).toEqual([1, 2, 3, 4]);
    // new transactions of the new attempt commit normally
    after[2].write(5);
    after[2].preCommit!(9);
    after[2].notifyCheckpointComplete!(9);
    await after[2].whenCommitted();
    expect(all()).toEqual([1, 2, 3, 4, 5]);
  });

  it('routes by the key function, round-robin without one', async () => {
    const { dir, log } = setup();
    const keyed = track(
      logSink<number>({ dir, topic: 'keyed', partitions: 4, key: (v) => `k${v % 5}` }).createWriter(
        ctx('exactly-once'),
      ),
    );
    for (let v = 0; v < 50; v++) keyed.write(v);
    keyed.preCommit!(1);
    keyed.notifyCheckpointComplete!(1);
    await keyed.whenCommitted();
    const topic = log.topic<number>('keyed');
    for (let p = 0; p < 4; p++) {
      for (const { value } of topic.read(p, 0, 100)) expect(partitionForKey(`k${value % 5}`, 4)).toBe(p);
    }
    const rr = track(logSink<number>({ dir, topic: 'rr', partitions: 2 }).createWriter(ctx('at-least-once')));
    for (let v = 0; v < 10; v++) rr.write(v);
    rr.finish!();
    await rr.whenCommitted();
    const rrTopic = log.topic<number>('rr');
    expect([rrTopic.endOffset(0), rrTopic.endOffset(1)]).toEqual([5, 5]);
  });

  it('at-least-once: appends in batches, at every barrier and at end of input', async () => {
    const { dir, all } = setup();
    const w = track(logSink<number>({ dir, topic: 'out' }).createWriter(ctx('at-least-once')));
    for (let v = 0; v < 5000; v++) w.write(v);
    await w.whenCommitted();
    expect(all()).toHaveLength(4096);
    expect(w.preCommit!(1)).toEqual([]);
    await w.whenCommitted();
    expect(all()).toHaveLength(5000);
    w.write(5000);
    w.finish!();
    await w.whenCommitted();
    expect(all()).toEqual(Array.from({ length: 5001 }, (_, i) => i));
  });

  it('creates the topic with 1 partition by default and refuses another count for an existing one', () => {
    const { dir, log } = setup();
    track(logSink({ dir, topic: 'fresh' }).createWriter(ctx('none')));
    expect(log.topic('fresh').partitions).toBe(1);
    log.topic('three', { partitions: 3 });
    track(logSink({ dir, topic: 'three' }).createWriter(ctx('none')));
    expect(() => logSink({ dir, topic: 'three', partitions: 2 }).createWriter(ctx('none'))).toThrow(
      LogPartitionCountMismatchError,
    );
  });

  it('a record that cannot be encoded fails at the barrier, before it enters a snapshot', async () => {
    const { dir, all } = setup();
    const w = track(logSink<unknown>({ dir, topic: 'out' }).createWriter(ctx('exactly-once')));
    w.write(1);
    w.preCommit!(1);
    w.write(() => 'no');
    expect(() => w.preCommit!(2)).toThrow(LogRecordEncodingError);
    w.notifyCheckpointComplete!(1);
    await w.whenCommitted();
    expect(all()).toEqual([1]);
  });

  it('after end of input, close() makes commits still in flight durable before it returns', () => {
    const { dir, all } = setup();
    const w = track(logSink<number>({ dir, topic: 'out', partitions: 2 }).createWriter(ctx('exactly-once')));
    for (const v of [1, 2, 3]) w.write(v);
    w.finish!();
    w.preCommit!(1);
    w.notifyCheckpointComplete!(1); // asynchronous commit issued, not awaited
    w.close!(); // the task ends: repeated synchronously (idempotent)
    expect(all()).toEqual([1, 2, 3]);
  });

  it('rejects bad options up front', () => {
    expect(() => logSink({ dir: '', topic: 't' })).toThrow(InvalidOptionError);
    expect(() => logSink({ dir: '/tmp/x', topic: '' })).toThrow(/sinks.log.topic/);
    expect(() => logSink({ dir: '/tmp/x', topic: 't', key: 'k' as never })).toThrow(/sinks.log.key/);
    expect(() => logSink({ dir: '/tmp/x', topic: 't', partitions: 0 })).toThrow(/sinks.log.partitions/);
  });
});
