/**
 * `topic.tail`: an iterator that waits for new records sees every record exactly once, in order,
 * whether appended by this handle, another thread or another process, and ends cleanly on
 * `return()` — also while it waits — and when the log closes.
 */
import { fork } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../../src/errors.js';
import { openLog } from '../../../src/log/index.js';
import { tempLogDir } from './helpers.js';

const APPENDER = new URL('./fixtures/log-appender.mjs', import.meta.url);

describe('topic.tail', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const setup = (label: string) => {
    const t = tempLogDir(label);
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    return { dir: t.dir, log };
  };

  it('yields records appended while it waits, exactly once and in order, until return()', async () => {
    const { log } = setup('in-process');
    const topic = log.topic<number>('events', { partitions: 1 });
    await topic.append([0, 1, 2]);
    const tail = topic.tail(0, { batch: 4 });
    const got: number[] = [];
    const reading = (async () => {
      for await (const r of tail) {
        expect(r.offset).toBe(got.length);
        got.push(r.value);
        if (got.length === 300) break;
      }
    })();
    // Appends in many groups, while the reader is waiting and while it is reading.
    for (let i = 3; i < 300; i += 3) await topic.append([i, i + 1, i + 2]);
    await reading;
    expect(got).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(await tail.next()).toEqual({ done: true, value: undefined });
  });

  it('return() ends an iterator that is waiting; closing the log ends the others', async () => {
    const { log } = setup('return');
    const topic = log.topic<number>('events', { partitions: 2 });
    const a = topic.tail(0, { from: 'latest' });
    const waiting = a.next();
    await a.return();
    expect(await waiting).toEqual({ done: true, value: undefined });
    const b = topic.tail(1);
    const pending = b.next();
    await log.close();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('wakes for appends of other threads and processes, and starts where asked', async () => {
    const { dir, log } = setup('cross');
    const topic = log.topic<{ appender: string; seq: number }>('events', { partitions: 3 });
    await topic.append([{ appender: 'main', seq: 0 }], { partition: 0 });
    const froms = [1, 0, 0];
    const tails = froms.map((from, p) => topic.tail(p, { from: p === 0 ? from : 'earliest' }));
    const collected = tails.map(async (tail) => {
      const out: { offset: number; value: { appender: string; seq: number } }[] = [];
      for await (const r of tail) out.push(r);
      return out;
    });
    // A thread and a process append 10 batches of 7 records over the partitions.
    const job = (appender: string) => ({ dir, topic: 'events', appender, batches: 10, batchSize: 7 });
    const gate = new SharedArrayBuffer(4);
    const worker = new Worker(APPENDER, { workerData: { ...job('thread'), gate } });
    cleanups.push(() => worker.terminate());
    worker.on('message', (m: { kind: string }) => {
      if (m.kind === 'ready') {
        Atomics.store(new Int32Array(gate), 0, 1);
        Atomics.notify(new Int32Array(gate), 0);
      }
    });
    const child = fork(APPENDER, [JSON.stringify(job('process'))], { execArgv: [], stdio: 'inherit' });
    cleanups.push(() => child.kill());
    child.on('message', (m: { kind: string }) => m.kind === 'ready' && child.send('go'));
    const exited = (w: { on(e: 'exit', f: (code: number) => void): unknown }) =>
      new Promise<void>((resolve, reject) =>
        w.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`)))),
      );
    await Promise.all([exited(worker), exited(child)]);
    // Once each tail has reached the end its partition has now, stop it.
    await Promise.all(
      tails.map(async (tail, p) => {
        const end = topic.endOffset(p);
        while (tail.position < end) await new Promise((r) => setImmediate(r));
        await tail.return();
      }),
    );
    const got = await Promise.all(collected);
    let total = 0;
    for (let p = 0; p < 3; p++) {
      // Exactly what the partition holds from `from` on: each record once, in offset order.
      expect(got[p]).toEqual(topic.read(p, froms[p], 10_000));
      total += got[p].length;
    }
    expect(total).toBe(2 * 10 * 7);
  });

  it('is woken by appends of this process without polling (other handle, other thread)', async () => {
    const t = tempLogDir('wake');
    cleanups.push(t.remove);
    // A poll interval no test run reaches: only the in-process wake-ups can end the waits.
    const log = openLog(t.dir, { pollMs: 2_000_000_000 });
    cleanups.push(() => log.close());
    const topic = log.topic<{ appender: string; seq: number }>('events', { partitions: 1 });
    const tail = topic.tail(0);
    const first = tail.next();
    // Same handle.
    await topic.append([{ appender: 'self', seq: 0 }]);
    expect((await first).value).toMatchObject({ offset: 0 });
    // Another handle of this thread.
    const other = openLog(t.dir);
    const second = tail.next();
    await other.topic('events').append([{ appender: 'other', seq: 0 }]);
    expect((await second).value).toMatchObject({ offset: 1 });
    await other.close();
    // Another thread.
    const third = tail.next();
    const gate = new SharedArrayBuffer(4);
    const worker = new Worker(APPENDER, {
      workerData: { dir: t.dir, topic: 'events', appender: 'thread', batches: 1, batchSize: 1, gate },
    });
    cleanups.push(() => worker.terminate());
    worker.on('message', (m: { kind: string }) => {
      if (m.kind === 'ready') {
        Atomics.store(new Int32Array(gate), 0, 1);
        Atomics.notify(new Int32Array(gate), 0);
      }
    });
    expect((await third).value).toMatchObject({ offset: 2, value: { appender: 'thread' } });
    await tail.return();
  });

  it('checks its options', () => {
    const { log } = setup('options');
    const topic = log.topic<number>('events', { partitions: 1 });
    expect(() => topic.tail(1)).toThrow(InvalidOptionError);
    expect(() => topic.tail(0, { from: -1 })).toThrow(InvalidOptionError);
    expect(() => topic.tail(0, { from: 'newest' as 'latest' })).toThrow(InvalidOptionError);
    expect(() => topic.tail(0, { batch: 0 })).toThrow(InvalidOptionError);
  });
});
