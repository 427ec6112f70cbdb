/**
 * `sinks.log` driven through the committing-sink operator (test/unit/connectors/committing-sink-harness.ts): two-phase commit under exactly-once (nothing visible before
 * the checkpoint completes, commit-on-restore idempotent, also after rescaling), batches under
 * at-least-once, and bad records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckpointingMode } from '../../../src/api/source.js';
import { log as logSink } from '../../../src/connectors/log-sink.js';
import {
  InvalidOptionError,
  LogPartitionCountMismatchError,
  LogRecordEncodingError,
} from '../../../src/errors.js';
import { openLog } from '../../../src/log/index.js';
import { partitionForKey } from '../../../src/log/partition-routing.js';
import { redistributeOperatorState } from '../../../src/state/redistribute-operator-state.js';
import { type HarnessContext, SinkHarness } from '../connectors/committing-sink-harness.js';
import { tempLogDir } from './helpers.js';

/** The cause of what `fn` throws (the operator wraps errors in a UserCodeError naming itself). */
function causeOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return (e as Error).cause;
  }
  throw new Error('expected a throw');
}

const ctx = (
  mode: CheckpointingMode,
  subtaskIndex = 0,
  parallelism = 1,
  attempt = 0,
  restoredState?: unknown[],
): HarnessContext => ({ mode, subtaskIndex, parallelism, attempt, restoredState, operatorName: 'to log' });

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
  const harness = <T>(sink: ReturnType<typeof logSink<T>>, c: HarnessContext) => {
    const h = new SinkHarness<T>(sink, c);
    cleanups.push(() => h.close());
    return h;
  };

  it('exactly-once: appends a transaction only when its checkpoint completes, older ones too', async () => {
    const { dir, all } = setup();
    const w = harness(logSink<number>({ dir, topic: 'out', partitions: 2 }), ctx('exactly-once'));
    for (const v of [1, 2, 3]) w.write(v);
    await w.preCommit(1);
    for (const v of [4, 5]) w.write(v);
    await w.preCommit(2);
    w.write(6);
    expect(all()).toEqual([]);
    await w.complete(1);
    expect(all()).toEqual([1, 2, 3]);
    // checkpoint 3's completion also commits 2 (whose own notification never came)
    await w.preCommit(3);
    await w.complete(3);
    expect(all()).toEqual([1, 2, 3, 4, 5, 6]);
    await w.complete(3);
    expect(all()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(w.failures).toEqual([]);
  });

  it('exactly-once: commit-on-restore appends what was not committed and nothing twice, at any parallelism', async () => {
    const { dir, all } = setup();
    const sink = logSink<number>({ dir, topic: 'out', partitions: 3, key: (v) => v % 10 });
    const before = [0, 1].map((s) => harness(sink, ctx('exactly-once', s, 2)));
    before[0].write(1);
    before[1].write(2);
    for (const w of before) await w.preCommit(7);
    before[0].write(3);
    before[1].write(4);
    // checkpoint 8 holds the uncommitted 7 and 8
    const snapshot = await Promise.all(before.map((w) => w.preCommit(8)));
    // checkpoint 8 completes; only subtask 0 hears of it before the failure
    await before[0].complete(8);
    before[0].write(99); // after the checkpoint: rewound, never committed
    expect(all()).toEqual([1, 3]);
    // restore checkpoint 8 at parallelism 3, attempt 1
    const restored = redistributeOperatorState(snapshot, 3, 'even-split');
    const after = restored.map((state, s) => harness(sink, ctx('exactly-once', s, 3, 1, state)));
    await Promise.all(after.map((w) => w.drain()));
    expect(all()).toEqual([1, 2, 3, 4]);
    // and once more (a failure during the restore): still nothing twice
    const again = restored.map((state, s) => harness(sink, ctx('exactly-once', s, 3, 2, state)));
    await Promise.all(again.map((w) => w.drain()));
    expect(all()).toEqual([1, 2, 3, 4]);
    // new transactions of the new attempt commit normally
    after[2].write(5);
    await after[2].preCommit(9);
    await after[2].complete(9);
    expect(all()).toEqual([1, 2, 3, 4, 5]);
  });

  it('routes by the key function, round-robin without one', async () => {
    const { dir, log } = setup();
    const keyed = harness(
      logSink<number>({ dir, topic: 'keyed', partitions: 4, key: (v) => `k${v % 5}` }),
      ctx('exactly-once'),
    );
    for (let v = 0; v < 50; v++) keyed.write(v);
    await keyed.preCommit(1);
    await keyed.complete(1);
    const topic = log.topic<number>('keyed');
    for (let p = 0; p < 4; p++) {
      for (const { value } of topic.read(p, 0, 100)) expect(partitionForKey(`k${value % 5}`, 4)).toBe(p);
    }
    const rr = harness(logSink<number>({ dir, topic: 'rr', partitions: 2 }), ctx('at-least-once'));
    for (let v = 0; v < 10; v++) rr.write(v);
    rr.finish();
    await rr.preCommit(1);
    const rrTopic = log.topic<number>('rr');
    expect([rrTopic.endOffset(0), rrTopic.endOffset(1)]).toEqual([5, 5]);
  });

  it('at-least-once: appends in batches of 4096 as records arrive, without waiting for a barrier', async () => {
    const { dir, log, all } = setup();
    const w = harness(logSink<number>({ dir, topic: 'out' }), ctx('at-least-once'));
    const appended = new Promise<void>((resolve) => {
      const topic = log.topic<number>('out');
      const poll = () => (topic.endOffset(0) >= 4096 ? resolve() : setImmediate(poll));
      poll();
    });
    for (let v = 0; v < 5000; v++) w.write(v);
    await appended; // the first batch lands with no barrier at all
    expect(all()).toHaveLength(4096);
  });

  it('without checkpointing: everything is appended by the end-of-input pre-commit, before the drain resolves', async () => {
    const { dir, all } = setup();
    const w = harness(logSink<number>({ dir, topic: 'out' }), ctx('none'));
    for (let v = 0; v < 10; v++) w.write(v);
    w.finish();
    await w.drain();
    expect(all()).toEqual(Array.from({ length: 10 }, (_, i) => i));
  });

  it('at-least-once: appends in batches, at every barrier and at end of input', async () => {
    const { dir, all } = setup();
    const w = harness(logSink<number>({ dir, topic: 'out' }), ctx('at-least-once'));
    for (let v = 0; v < 5000; v++) w.write(v);
    // the pre-commit resolves once every append so far is durable; it commits nothing itself
    expect(await w.preCommit(1)).toEqual([]);
    expect(all()).toHaveLength(5000);
    w.write(5000);
    w.finish();
    await w.preCommit(2);
    expect(all()).toEqual(Array.from({ length: 5001 }, (_, i) => i));
  });

  it('creates the topic with 1 partition by default and refuses another count for an existing one', () => {
    const { dir, log } = setup();
    harness(logSink({ dir, topic: 'fresh' }), ctx('none'));
    expect(log.topic('fresh').partitions).toBe(1);
    log.topic('three', { partitions: 3 });
    harness(logSink({ dir, topic: 'three' }), ctx('none'));
    // the operator names itself and keeps the typed error as the cause
    expect(
      causeOf(() => new SinkHarness(logSink({ dir, topic: 'three', partitions: 2 }), ctx('none'))),
    ).toBeInstanceOf(LogPartitionCountMismatchError);
  });

  it('a record that cannot be encoded fails at the barrier, before it enters a snapshot', async () => {
    const { dir, all } = setup();
    const w = harness(logSink<unknown>({ dir, topic: 'out' }), ctx('exactly-once'));
    w.write(1);
    await w.preCommit(1);
    w.write(() => 'no');
    expect(causeOf(() => w.op.snapshotState(2))).toBeInstanceOf(LogRecordEncodingError);
    await w.complete(1);
    expect(all()).toEqual([1]);
  });

  it('after end of input, the drain the task awaits resolves only once the final commit is durable', async () => {
    const { dir, all } = setup();
    const w = harness(logSink<number>({ dir, topic: 'out', partitions: 2 }), ctx('exactly-once'));
    for (const v of [1, 2, 3]) w.write(v);
    w.finish();
    await w.preCommit(1);
    w.op.notifyCheckpointComplete(1); // asynchronous commit issued
    await w.drain();
    expect(all()).toEqual([1, 2, 3]);
  });

  it('rejects bad options up front', () => {
    expect(() => logSink({ dir: '', topic: 't' })).toThrow(InvalidOptionError);
    expect(() => logSink({ dir: '/tmp/x', topic: '' })).toThrow(/sinks.log.topic/);
    expect(() => logSink({ dir: '/tmp/x', topic: 't', key: 'k' as never })).toThrow(/sinks.log.key/);
    expect(() => logSink({ dir: '/tmp/x', topic: 't', partitions: 0 })).toThrow(/sinks.log.partitions/);
  });
});
