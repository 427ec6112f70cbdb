/**
 * `sources.log` readers driven by hand: split assignment, bounded ends kept in the split state,
 * idle/pick-up when unbounded, and restore at other parallelisms through the runtime's own
 * operator-state redistribution (every partition read by exactly one subtask from its offset).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { SourceContext, SourceReader } from '../../../src/api/source.js';
import { initialLogSplits, log as logSource } from '../../../src/connectors/log-source.js';
import { InvalidOptionError, LogTopicNotFoundError } from '../../../src/errors.js';
import { openLog } from '../../../src/log/index.js';
import { redistributeOperatorState } from '../../../src/state/redistribute-operator-state.js';
import { tempLogDir } from './helpers.js';

const ctx = (subtaskIndex: number, parallelism: number, restoredState?: unknown[]): SourceContext => ({
  subtaskIndex,
  parallelism,
  attempt: 0,
  operatorName: 'log source',
  restoredState,
});

/** Polls until the reader ends (bounded) or idles (caught up); returns what it emitted. */
function drain<T>(
  reader: SourceReader<T>,
  maxRecords = Number.POSITIVE_INFINITY,
): { values: T[]; last: string } {
  const values: T[] = [];
  for (;;) {
    if (values.length >= maxRecords) return { values, last: 'stopped' };
    const r = reader.poll({ collect: (v) => values.push(v) }, Math.min(64, maxRecords - values.length));
    if (r.state !== 'more' || values.length >= maxRecords) return { values, last: r.state };
  }
}

describe('sources.log', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const setup = (partitions: number, perPartition: number) => {
    const t = tempLogDir('source');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const topic = log.topic<{ p: number; i: number }>('in', { partitions });
    for (let p = 0; p < partitions; p++) {
      topic.appendSync(
        Array.from({ length: perPartition }, (_, i) => ({ p, i })),
        { partition: p },
      );
    }
    return { dir: t.dir, topic };
  };

  it('assigns partition p to subtask p mod parallelism, each exactly once', () => {
    for (let partitions = 1; partitions <= 7; partitions++) {
      for (let parallelism = 1; parallelism <= 5; parallelism++) {
        const all = Array.from({ length: parallelism }, (_, s) =>
          initialLogSplits(partitions, s, parallelism),
        );
        all.forEach((ps, s) => {
          for (const p of ps) expect(p % parallelism).toBe(s);
        });
        expect(all.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: partitions }, (_, p) => p));
      }
    }
  });

  it('bounded: reads every record up to the ends observed at start, then ends', () => {
    const { dir, topic } = setup(3, 100);
    const readers = [0, 1].map((s) =>
      logSource<{ p: number; i: number }>({ dir, topic: 'in', bounded: true }).createReader(ctx(s, 2)),
    );
    cleanups.push(() => {
      for (const r of readers) r.close?.();
    });
    topic.appendSync([{ p: 0, i: 100 }], { partition: 0 }); // after the start: not read
    const out = readers.map((r) => drain(r));
    expect(out.map((o) => o.last)).toEqual(['end', 'end']);
    expect(out[0].values.map((v) => v.p).sort()).toEqual([...Array(100).fill(0), ...Array(100).fill(2)]);
    expect(out[1].values.every((v) => v.p === 1)).toBe(true);
    expect(out[1].values.map((v) => v.i)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it('unbounded: idles when caught up and picks up appends made by another handle', async () => {
    const { dir } = setup(2, 5);
    const reader = logSource<{ p: number; i: number }>({ dir, topic: 'in' }).createReader(ctx(0, 1));
    cleanups.push(() => reader.close?.());
    const first = drain(reader);
    expect(first.last).toBe('idle');
    expect(first.values).toHaveLength(10);
    const other = openLog(dir);
    other.topic('in').appendSync([{ p: 1, i: 5 }], { partition: 1 });
    await other.close();
    const second = drain(reader);
    expect(second).toEqual({ values: [{ p: 1, i: 5 }], last: 'idle' });
  });

  it("startFrom 'latest' skips what was appended before the start", () => {
    const { dir, topic } = setup(2, 5);
    const reader = logSource<{ p: number; i: number }>({
      dir,
      topic: 'in',
      startFrom: 'latest',
    }).createReader(ctx(0, 1));
    cleanups.push(() => reader.close?.());
    expect(drain(reader).values).toEqual([]);
    topic.appendSync([{ p: 0, i: 5 }], { partition: 0 });
    expect(drain(reader).values).toEqual([{ p: 0, i: 5 }]);
  });

  it('restores at any parallelism: every remaining record exactly once, bounded at the original ends', () => {
    const { dir, topic } = setup(5, 40);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.integer({ min: 0, max: 120 }), { minLength: 4, maxLength: 4 }),
        (oldP, newP, progress) => {
          const source = logSource<{ p: number; i: number }>({ dir, topic: 'in', bounded: true });
          const before = Array.from({ length: oldP }, (_, s) => source.createReader(ctx(s, oldP)));
          const emitted: { p: number; i: number }[] = [];
          before.forEach((r, s) => {
            emitted.push(...drain(r, progress[s % 4]).values);
          });
          const snapshot = before.map((r) => r.snapshotState(1));
          for (const r of before) r.close?.();
          const restored = redistributeOperatorState(snapshot, newP, 'even-split');
          const after = restored.map((state, s) => source.createReader(ctx(s, newP, state)));
          for (const r of after) {
            const { values, last } = drain(r);
            expect(last).toBe('end');
            emitted.push(...values);
            r.close?.();
          }
          expect(emitted).toHaveLength(5 * 40);
          expect(new Set(emitted.map((v) => `${v.p}/${v.i}`)).size).toBe(5 * 40);
        },
      ),
      { seed: 5, numRuns: 25 },
    );
    // appends after the first start stay out of a restored bounded read
    expect(topic.endOffset(0)).toBe(40);
  });

  it('a restored bounded split ends where the checkpoint says, not at the current end', () => {
    const { dir, topic } = setup(1, 10);
    const source = logSource<{ p: number; i: number }>({ dir, topic: 'in', bounded: true });
    const first = source.createReader(ctx(0, 1));
    drain(first, 4);
    const state = first.snapshotState(1);
    first.close?.();
    topic.appendSync([
      { p: 0, i: 10 },
      { p: 0, i: 11 },
    ]);
    const second = source.createReader(ctx(0, 1, state));
    cleanups.push(() => second.close?.());
    expect(drain(second).values.map((v) => v.i)).toEqual([4, 5, 6, 7, 8, 9]);
  });

  it('a subtask restored without splits ends (bounded) or idles (unbounded)', () => {
    const { dir } = setup(1, 3);
    const bounded = logSource({ dir, topic: 'in', bounded: true }).createReader(ctx(1, 2, []));
    const unbounded = logSource({ dir, topic: 'in' }).createReader(ctx(1, 2, []));
    cleanups.push(
      () => bounded.close?.(),
      () => unbounded.close?.(),
    );
    expect(drain(bounded)).toEqual({ values: [], last: 'end' });
    expect(drain(unbounded)).toEqual({ values: [], last: 'idle' });
  });

  it('counts records lost to retention and continues at the first retained offset', () => {
    const t = tempLogDir('source-retention');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const topic = log.topic<number>('in', { partitions: 1, retention: { maxBytes: 5 * 9 } });
    topic.appendSync([0, 1]);
    const reader = logSource<number>({ dir: t.dir, topic: 'in' }).createReader(ctx(0, 1));
    cleanups.push(() => reader.close?.());
    expect(drain(reader, 1).values).toEqual([0]);
    // 1 byte of msgpack + 8 of header = 9 bytes each: 5 of the 9 records are kept (4..8)
    topic.appendSync([2, 3, 4, 5, 6, 7, 8]);
    expect(drain(reader).values).toEqual([4, 5, 6, 7, 8]);
    expect(reader.metrics?.()).toEqual({ recordsLostToRetention: 3 });
  });

  it('rejects bad options up front and a missing topic when the reader opens', () => {
    expect(() => logSource({ dir: '', topic: 'x' })).toThrow(InvalidOptionError);
    expect(() => logSource({ dir: '/tmp/x', topic: '' })).toThrow(/sources.log.topic/);
    expect(() => logSource({ dir: '/tmp/x', topic: 'x', startFrom: 'middle' as never })).toThrow(/startFrom/);
    expect(() => logSource({ dir: '/tmp/x', topic: 'x', bounded: 'yes' as never })).toThrow(/bounded/);
    const { dir } = setup(1, 1);
    expect(() => logSource({ dir, topic: 'missing' }).createReader(ctx(0, 1))).toThrow(LogTopicNotFoundError);
    expect(() =>
      logSource({ dir, topic: 'in' }).createReader(
        ctx(0, 1, [{ topic: 'other', partition: 0, next: 0, end: null }]),
      ),
    ).toThrow(/topic "other"/);
    expect(() => logSource({ dir, topic: 'in', durability: 'none' as never })).toThrow(
      /sources.log.durability/,
    );
  });

  it("reads a log this process appends to with durability 'os' when given the same durability", () => {
    const t = tempLogDir('source-os');
    cleanups.push(t.remove);
    const appender = openLog(t.dir, { durability: 'os' });
    cleanups.push(() => appender.close());
    appender.topic<number>('in', { partitions: 1 }).appendSync([1, 2, 3]);
    // lmdb-js shares one environment per directory and process: a default (fsync) reader is refused
    expect(() => logSource({ dir: t.dir, topic: 'in' }).createReader(ctx(0, 1))).toThrow(InvalidOptionError);
    const reader = logSource<number>({
      dir: t.dir,
      topic: 'in',
      durability: 'os',
      bounded: true,
    }).createReader(ctx(0, 1));
    cleanups.push(() => reader.close?.());
    expect(drain(reader)).toEqual({ values: [1, 2, 3], last: 'end' });
  });
});
