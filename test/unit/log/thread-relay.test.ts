/**
 * Cross-thread group commit (`src/log/thread-relay.ts`): every thread's appends are committed by
 * one elected handle of the process (the main thread's when it opened the directory first, else a
 * worker thread's), also when that committer closes, is terminated, or stalls mid-run.
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
type Done = { positions: Position[]; relayed: number; fromAck: number };
type Message =
  | { kind: 'ready' }
  | { kind: 'dying' }
  | { kind: 'ack'; acked: number }
  | { kind: 'stalled' }
  | ({ kind: 'done' } & Done);

interface Running {
  readonly ready: Promise<void>;
  readonly done: Promise<Done>[];
  readonly workers: Worker[];
  readonly start: () => void;
  /** `listener(total, thread)` after each acknowledged append of any thread. */
  readonly onAck: (listener: (total: number, thread: number) => void) => void;
}

interface ThreadOptions {
  /** Start thread 0 alone and wait until it opened the log (it is then the committer). */
  readonly firstAlone?: boolean;
  /** Thread 0 blocks its event loop after this many acknowledged appends, until `stall[0]` is 1. */
  readonly stall?: { readonly after: number; readonly buffer: SharedArrayBuffer };
  /** Thread 0 exits right after its n-th committed group of other threads' appends, unanswered. */
  readonly dieBeforeAnswer?: number;
  /** `openLog` option of every thread. */
  readonly committerTimeoutMs?: number;
}

async function startThreads(
  dir: string,
  seed: number,
  cleanups: (() => unknown)[],
  options: ThreadOptions = {},
): Promise<Running> {
  const workers: Worker[] = [];
  const ready: Promise<void>[] = [];
  const done: Promise<Done>[] = [];
  const ackListeners: ((total: number, thread: number) => void)[] = [];
  let totalAcked = 0;
  for (let thread = 0; thread < THREADS; thread++) {
    const stall = thread === 0 ? options.stall : undefined;
    const worker = new Worker(FIXTURE, {
      workerData: {
        dir,
        thread,
        appenders: APPENDERS,
        count: COUNT,
        seed: seed + thread,
        stall: stall?.buffer,
        stallAfter: stall?.after,
        dieBeforeAnswer: thread === 0 ? options.dieBeforeAnswer : undefined,
        committerTimeoutMs: options.committerTimeoutMs,
      },
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
            for (const l of ackListeners) l(totalAcked, thread);
          } else if (m.kind === 'done')
            resolve({ positions: m.positions, relayed: m.relayed, fromAck: m.fromAck });
        });
      }),
    );
    if (thread === 0 && options.firstAlone === true) await ready[0];
  }
  return {
    ready: Promise.all(ready).then(() => undefined),
    done,
    workers,
    start: () => {
      for (const w of workers) w.postMessage('go');
    },
    onAck: (listener) => ackListeners.push(listener),
  };
}

/**
 * Every acknowledged position holds its record; dense offsets; order per appender; no extras.
 * `acked[thread] === null`: that thread was terminated; its records must be a gap-free prefix of
 * each of its appenders' sequences (checked with the order), not all of them.
 */
function checkLog(topic: Topic<Event>, acked: (Position[] | null)[], mainRecords: number): void {
  const all = new Map<string, Event>();
  let total = 0;
  let partial = 0;
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
      if (acked[value.thread] === null) partial++;
    }
    total += records.length;
  }
  const full = acked.filter((a) => a !== null).length;
  expect(total).toBe(full * APPENDERS * COUNT + partial + mainRecords);
  for (let thread = 0; thread < THREADS; thread++) {
    const positions = acked[thread];
    if (positions === null) continue;
    expect(positions).toHaveLength(APPENDERS * COUNT);
    for (const { appender, seq, partition, offset } of positions) {
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
    const running = await startThreads(dir, 0x51ed, cleanups);
    await running.ready;
    running.start();
    // The main thread appends too, one record per worker acknowledgement, into the same groups.
    const mine: Promise<unknown>[] = [];
    running.onAck((n) => {
      if (n % 10 === 0)
        mine.push(topic.append([{ thread: -1, appender: 0, seq: n }], { partition: n % PARTITIONS }));
    });
    const done = await Promise.all(running.done);
    await Promise.all(mine);
    expect(log.relayedOperations()).toBe(THREADS * APPENDERS * COUNT);
    checkLog(
      topic,
      done.map((d) => d.positions),
      mine.length,
    );
  });

  it('loses and duplicates nothing when the main thread handle closes mid-run', async () => {
    const { dir, log } = openMain('relay-close');
    const running = await startThreads(dir, 0xc105e, cleanups);
    await running.ready;
    let closed: Promise<void> | undefined;
    // Close once a seeded share of the appends was acknowledged: requests in flight then are
    // either taken (and answered) or handed back to their thread, and a worker takes the role.
    running.onAck((n) => {
      if (n === 97 && closed === undefined) closed = log.close();
    });
    running.start();
    const done = await Promise.all(running.done);
    await closed;
    const relayed = log.relayedOperations();
    expect(relayed).toBeGreaterThan(0);
    expect(relayed).toBeLessThan(THREADS * APPENDERS * COUNT);
    const reader = openLog(dir);
    cleanups.push(() => reader.close());
    checkLog(
      reader.topic<Event>('events'),
      done.map((d) => d.positions),
      0,
    );
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

  it('without a main thread handle, the first worker thread commits for the others', async () => {
    const { dir, log } = openMain('relay-none');
    await log.close();
    const running = await startThreads(dir, 0xbeef, cleanups, { firstAlone: true });
    await running.ready;
    running.start();
    const done = await Promise.all(running.done);
    // Thread 0 opened first: it committed every other thread's appends (it closes last or, if it
    // closes first, a later thread takes the role for what is left).
    expect(done[0].relayed).toBeGreaterThan(0);
    expect(done.reduce((sum, d) => sum + d.relayed, 0)).toBeLessThanOrEqual(
      (THREADS - 1) * APPENDERS * COUNT + APPENDERS * COUNT,
    );
    const reader = openLog(dir);
    cleanups.push(() => reader.close());
    expect(reader.relayedOperations()).toBe(0);
    checkLog(
      reader.topic<Event>('events'),
      done.map((d) => d.positions),
      0,
    );
  });

  it('a worker committer terminated mid-run: its followers take over, nothing lost or doubled', async () => {
    const { dir, log } = openMain('relay-terminated');
    await log.close();
    const running = await startThreads(dir, 0x7e4a, cleanups, { firstAlone: true });
    await running.ready;
    let terminated: Promise<number> | undefined;
    // Terminate the committer (thread 0) once the others had a seeded share acknowledged: their
    // requests then in flight were committed and not answered, or not committed at all.
    let others = 0;
    running.onAck((_, thread) => {
      if (thread !== 0 && ++others === 41 && terminated === undefined) {
        terminated = running.workers[0].terminate();
      }
    });
    running.start();
    const [, ...rest] = running.done;
    void running.done[0].catch(() => undefined);
    const done = await Promise.all(rest);
    await terminated;
    const reader = openLog(dir);
    cleanups.push(() => reader.close());
    checkLog(reader.topic<Event>('events'), [null, ...done.map((d) => d.positions)], 0);
  });

  it('a stalled worker committer is fenced: followers go on, its late groups commit nothing twice', async () => {
    const { dir, log } = openMain('relay-stalled');
    await log.close();
    const stall = new SharedArrayBuffer(4);
    const running = await startThreads(dir, 0x57a11, cleanups, {
      firstAlone: true,
      stall: { after: 9, buffer: stall },
    });
    await running.ready;
    // Thread 0 (the committer) blocks its event loop after its 9th acknowledged append. Release it
    // once the others got 60 more appends acknowledged: only a take-over can have committed them.
    let stalled = false;
    let afterStall = 0;
    running.workers[0].on('message', (m: Message) => {
      if (m.kind === 'stalled') stalled = true;
    });
    running.onAck((_, thread) => {
      if (stalled && thread !== 0 && ++afterStall === 60) {
        Atomics.store(new Int32Array(stall), 0, 1);
        Atomics.notify(new Int32Array(stall), 0);
      }
    });
    running.start();
    const done = await Promise.all(running.done);
    expect(afterStall).toBeGreaterThanOrEqual(60);
    const reader = openLog(dir);
    cleanups.push(() => reader.close());
    checkLog(
      reader.topic<Event>('events'),
      done.map((d) => d.positions),
      0,
    );
  });

  it('a worker committer exiting after its commit, before answering: the take-over answers from the acknowledgement, once', async () => {
    const { dir, log } = openMain('relay-die-before-answer');
    await log.close();
    // Thread 0 (the committer) exits right after its 7th group holding the others' appends is
    // durable, before answering any of them. Their appends are in the log but unanswered: the
    // followers' take-over (after 1 s without a heartbeat) must find them through the
    // acknowledgement written in that group and resolve them, not append them again. (1 s, not
    // less: a committer merely delayed by a loaded machine and fenced before its 7th group would
    // never die there, and the test would fail on its exit code instead of testing the path.)
    const running = await startThreads(dir, 0xd1e, cleanups, {
      firstAlone: true,
      dieBeforeAnswer: 7,
      committerTimeoutMs: 1000,
    });
    const committer = running.workers[0];
    const dying = new Promise<void>((resolve) =>
      committer.on('message', (m: Message) => m.kind === 'dying' && resolve()),
    );
    const exited = new Promise<number>((resolve) => committer.once('exit', resolve));
    await running.ready;
    running.start();
    const [first, ...rest] = running.done;
    void first.catch(() => undefined);
    const done = await Promise.all(rest);
    expect(await exited).toBe(3);
    await dying;
    // At least the request of the 7th group was committed and never answered.
    expect(done.reduce((sum, d) => sum + d.fromAck, 0)).toBeGreaterThanOrEqual(1);
    const reader = openLog(dir);
    cleanups.push(() => reader.close());
    // Exactly once: dense offsets, each follower appender's sequence once and in order, every
    // acknowledged position holds its record; thread 0's (never acknowledged) records a prefix.
    checkLog(reader.topic<Event>('events'), [null, ...done.map((d) => d.positions)], 0);
  });

  it('committerTimeoutMs is checked', () => {
    const t = tempLogDir('relay-timeout-option');
    cleanups.push(t.remove);
    for (const bad of [0, 199, 600_001, 1.5, '300', Number.NaN]) {
      expect(() => openLog(t.dir, { committerTimeoutMs: bad as number })).toThrow(
        /openLog\(options\.committerTimeoutMs\).*integer from 200 to 600000/,
      );
    }
    const ok = openLog(t.dir, { committerTimeoutMs: 200 });
    cleanups.push(() => ok.close());
  });
});
