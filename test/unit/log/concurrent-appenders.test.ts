/**
 * Appends from two worker threads, a child process and the main thread (asynchronous appends) at
 * once, to one topic: afterwards every record is there exactly once, each partition's offsets are
 * dense from 0, and each appender's records keep their order within every partition.
 */
import { fork } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { openLog } from '../../../src/log/index.js';
import { partitionForKey } from '../../../src/log/partition-routing.js';
import { tempLogDir } from './helpers.js';

const PARTITIONS = 3;
const BATCHES = 60;
const BATCH_SIZE = 25;
const APPENDER = new URL('./fixtures/log-appender.mjs', import.meta.url);

type Message = { kind: 'ready' | 'done'; appender: string; appended?: number };

describe('concurrent appenders in several threads and processes', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('never collide or lose a record, and keep per-appender order', async () => {
    const t = tempLogDir('concurrent');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const topic = log.topic<{ appender: string; seq: number }>('events', { partitions: PARTITIONS });

    const gate = new SharedArrayBuffer(4);
    const ready = new Set<string>();
    const done = new Map<string, number>();
    let allReady!: () => void;
    const readyPromise = new Promise<void>((resolve) => (allReady = resolve));
    const onMessage = (m: Message) => {
      if (m.kind === 'ready') {
        ready.add(m.appender);
        if (ready.size === 3) allReady();
      } else done.set(m.appender, m.appended!);
    };
    const job = (appender: string) => ({
      dir: t.dir,
      topic: 'events',
      appender,
      batches: BATCHES,
      batchSize: BATCH_SIZE,
    });

    const exits: Promise<void>[] = [];
    for (const name of ['thread-0', 'thread-1']) {
      const worker = new Worker(APPENDER, { workerData: { ...job(name), gate } });
      cleanups.push(() => worker.terminate());
      worker.on('message', onMessage);
      exits.push(
        new Promise((resolve, reject) => {
          worker.on('error', reject);
          worker.on('exit', (code) =>
            code === 0 ? resolve() : reject(new Error(`${name} exited with ${code}`)),
          );
        }),
      );
    }
    const child = fork(APPENDER, [JSON.stringify(job('process'))], { execArgv: [], stdio: 'inherit' });
    cleanups.push(() => child.kill());
    child.on('message', onMessage);
    exits.push(
      new Promise((resolve, reject) => {
        child.on('error', reject);
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child exited with ${code}`))));
      }),
    );

    await readyPromise;
    // Release everyone at once: threads through the Atomics gate, the child over IPC; the main
    // thread appends asynchronously meanwhile.
    Atomics.store(new Int32Array(gate), 0, 1);
    Atomics.notify(new Int32Array(gate), 0);
    child.send('go');
    let seq = 0;
    const mainAppends: Promise<unknown>[] = [];
    for (let b = 0; b < BATCHES; b++) {
      const records = Array.from({ length: BATCH_SIZE }, () => ({ appender: 'main', seq: seq++ }));
      mainAppends.push(topic.append(records, { key: (r) => r.seq % 7 }));
    }
    await Promise.all(mainAppends);
    await Promise.all(exits);
    expect([...done.values()]).toEqual([BATCHES * BATCH_SIZE, BATCHES * BATCH_SIZE, BATCHES * BATCH_SIZE]);

    const seen = new Map<string, Set<number>>();
    let total = 0;
    let switches = 0;
    for (let p = 0; p < PARTITIONS; p++) {
      const end = topic.endOffset(p);
      const records = topic.read(p, 0, end + 10);
      expect(records.map((r) => r.offset)).toEqual(Array.from({ length: end }, (_, i) => i));
      const lastSeq = new Map<string, number>();
      let previous: string | undefined;
      for (const { value } of records) {
        expect(partitionForKey(value.seq % 7, PARTITIONS)).toBe(p);
        if (previous !== undefined && previous !== value.appender) switches++;
        previous = value.appender;
        // per-appender order within the partition
        expect(value.seq).toBeGreaterThan(lastSeq.get(value.appender) ?? -1);
        lastSeq.set(value.appender, value.seq);
        const s = seen.get(value.appender) ?? new Set<number>();
        expect(s.has(value.seq)).toBe(false);
        s.add(value.seq);
        seen.set(value.appender, s);
      }
      total += records.length;
    }
    // The appends really interleaved (otherwise this test would prove nothing about concurrency).
    expect(switches).toBeGreaterThan(3);
    const perAppender = BATCHES * BATCH_SIZE;
    expect(total).toBe(4 * perAppender);
    for (const name of ['thread-0', 'thread-1', 'process', 'main'])
      expect(seen.get(name)?.size).toBe(perAppender);
  });
});
