/**
 * Cross-thread group commit (`src/log/thread-relay.ts`): worker threads' appends are committed by
 * the main thread's handle when it has the directory open, and by each thread itself otherwise.
 * Real worker threads, seeded interleavings; checked: every acknowledged append is read back at
 * exactly its acknowledged position, offsets are dense, nothing is lost or duplicated, each
 * appender's records keep their order, and which handle committed them.
 */
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { type Log, openLog, type Topic } from '../../../src/log/index.js';
import { tempLogDir } from './helpers.js';

const PARTITIONS = 3;
const THREADS = 3;
const APPENDERS = 4;
const COUNT = 40;
const FIXTURE = new URL('./fixtures/log-relay-appender.mjs', import.meta.url);

type Event = { thread: number; appender: number; seq: number };
type Position = { appender: number; seq: number; partition: number; offset: number };
type Message = { kind: 'ready' } | { kind: 'ack'; acked: number } | { kind: 'done'; positions: Position[] };

interface Running {
  readonly ready: Promise<void>;
  readonly done: Promise<Position[]>[];
  readonly start: () => void;
  readonly onAck: (listener: (total: number) => void) => void;
}

function startThreads(dir: string, seed: number, cleanups: (() => unknown)[]): Running {
  const workers: Worker[] = [];
  const ready: Promise<void>[] = [];
  const done: Promise<Position[]>[] = [];
  const ackListeners: ((total: number) => void)[] = [];
  let totalAcked = 0;
  for (let thread = 0; thread < THREADS; thread++) {
    const worker = new Worker(FIXTURE, {
      workerData: { dir, thread, appenders: APPENDERS, count: COUNT, seed: seed + thread },
    });
    cleanups.push(() => worker.terminate());
    workers.push(worker);
    let readyResolve!: () => void;
    ready.push(new Promise((resolve) => (readyResolve = resolve)));
    done.push(
      new Promise((resolve, reject) => {
        worker.on('error', reject);
        worker.on('exit', (code) => reject(new Error(`thread ${thread} exited (${code}) before done`)));
        worker.on('message', (m: Message) => {
          if (m.kind === 'ready') readyResolve();
          else if (m.kind === 'ack') {
            totalAcked++;
            for (const l of ackListeners) l(totalAcked);
          } else resolve(m.positions);
        });
      }),
    );
  }
  return {
    ready: Promise.all(ready).then(() => undefined),
    done,
    start: () => {
      for (const w of workers) w.postMessage('go');
    },
    onAck: (listener) => ackListeners.push(listener),
  };
}

/** Every acknowledged position holds its record; dense offsets; order per appender; no extras. */
function checkLog(topic: Topic<Event>, acked: Position[][], mainRecords: number): void {
  const all = new Map<string, Event>();
  let total = 0;
  for (let p = 0; p < PARTITIONS; p++) {
    const records = topic.read(p, 0, 1_000_000);
    expect(records.map((r) => r.offset)).toEqual(Array.from({ length: topic.endOffset(p) }, (_, i) => i));
    const lastSeq = new Map<string, number>();
    for (const { offset, value } of records) {
      all.set(`${p}:${offset}`, value);
      if (value.thread < 0) continue;
      const appender = `${value.thread}/${value.appender}`;
      expect(value.seq).toBe((lastSeq.get(appender) ?? -1) + 1);
      lastSeq.set(appender, value.seq);
    }
    total += records.length;
  }
  expect(total).toBe(THREADS * APPENDERS * COUNT + mainRecords);
  for (let thread = 0; thread < THREADS; thread++) {
    expect(acked[thread]).toHaveLength(APPENDERS * COUNT);
    for (const { appender, seq, partition, offset } of acked[thread]) {
      expect(all.get(`${partition}:${offset}`)).toEqual({ thread, appender, seq });
    }
  }
}

describe('cross-thread group commit', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function openMain(label: string): { dir: string; log: Log; topic: Topic<Event> } {
    const t = tempLogDir(label);
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    return { dir: t.dir, log, topic: log.topic<Event>('events', { partitions: PARTITIONS }) };
  }

  it('commits every worker thread append on the main thread handle, beside its own', async () => {
    const { dir, log, topic } = openMain('relay');
    const running = startThreads(dir, 0x51ed, cleanups);
    await running.ready;
    running.start();
    // The main thread appends too, one record per worker acknowledgement, into the same groups.
    const mine: Promise<unknown>[] = [];
    running.onAck((n) => {
      if (n % 10 === 0)
        mine.push(topic.append([{ thread: -1, appender: 0, seq: n }], { partition: n % PARTITIONS }));
    });
    const acked = await Promise.all(running.done);
    await Promise.all(mine);
    expect(log.relayedOperations()).toBe(THREADS * APPENDERS * COUNT);
    checkLog(topic, acked, mine.length);
  });

  it('loses and duplicates nothing when the main thread handle closes mid-run', async () => {
    const { dir, log } = openMain('relay-close');
    const running = startThreads(dir, 0xc105e, cleanups);
    await running.ready;
    let closed: Promise<void> | undefined;
    // Close once a seeded share of the appends was acknowledged: requests in flight then are
    // either taken (and answered) or handed back to their thread.
    running.onAck((n) => {
      if (n === 97 && closed === undefined) closed = log.close();
    });
    running.start();
    const acked = await Promise.all(running.done);
    await closed;
    const relayed = log.relayedOperations();
    expect(relayed).toBeGreaterThan(0);
    expect(relayed).toBeLessThan(THREADS * APPENDERS * COUNT);
    const reader = openLog(dir);
    cleanups.push(() => reader.close());
    checkLog(reader.topic<Event>('events'), acked, 0);
  });

  it('a second main-thread handle hands its appends to the first', async () => {
    const { dir, log, topic } = openMain('relay-second');
    const second = openLog(dir);
    cleanups.push(() => second.close());
    const other = second.topic<Event>('events');
    const results = await Promise.all([
      ...Array.from({ length: 30 }, (_, seq) =>
        other.append([{ thread: 1, appender: 0, seq }], { partition: 0 }),
      ),
      ...Array.from({ length: 30 }, (_, seq) =>
        topic.append([{ thread: 0, appender: 0, seq }], { partition: 0 }),
      ),
    ]);
    expect(log.relayedOperations()).toBe(30);
    expect(second.relayedOperations()).toBe(0);
    // Each handle's appends in call order; offsets dense and each acknowledged one holds its record.
    const offsets = results.map((r) => r.positions[0].offset);
    expect([...offsets].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    const read = topic.read(0, 0, 100);
    for (let i = 0; i < 60; i++) {
      expect(read[offsets[i]].value).toEqual({ thread: i < 30 ? 1 : 0, appender: 0, seq: i % 30 });
    }
    for (const thread of [0, 1]) {
      const seqs = read.filter((r) => r.value.thread === thread).map((r) => r.value.seq);
      expect(seqs).toEqual(Array.from({ length: 30 }, (_, i) => i));
    }
  });

  it('without a main thread handle, each thread commits its own appends', async () => {
    const { dir, log } = openMain('relay-none');
    await log.close();
    const running = startThreads(dir, 0xbeef, cleanups);
    await running.ready;
    running.start();
    const acked = await Promise.all(running.done);
    const reader = openLog(dir);
    cleanups.push(() => reader.close());
    expect(reader.relayedOperations()).toBe(0);
    checkLog(reader.topic<Event>('events'), acked, 0);
  });
});
