/**
 * The demo's click source and feed on a real embedded log (main thread only): the feed puts click
 * `seq` into partition `seq mod partitions` in order and stops on request; the source reads
 * while clicks are appended, idles when caught up, ends exactly at the announced ends, and a
 * reader restored from a snapshot resumes there and ends at the same place.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PollResult, SourceContext, SourceReader } from '../../../src/api/source.js';
import { log as logSource } from '../../../src/connectors/log-source.js';
import { clickAt, partitionEnd } from '../../../src/demo/demo-clicks.js';
import { feedClicks } from '../../../src/demo/demo-feed.js';
import { logUntilEnds } from '../../../src/demo/demo-log-source.js';
import type { LoggedClick } from '../../../src/demo/demo-records.js';
import { readCommittedJsonl } from '../../../src/demo/demo-run.js';
import { openLog } from '../../../src/log/log.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'weir-demo-log-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function ctx(subtaskIndex: number, parallelism: number, restoredState?: unknown[]): SourceContext {
  return { subtaskIndex, parallelism, attempt: 0, operatorName: 'clicks', restoredState };
}

/** Polls until a result other than 'more'; returns it with the values read. */
function drain<T>(reader: SourceReader<T>): { result: PollResult; values: T[] } {
  const values: T[] = [];
  for (;;) {
    const result = reader.poll({ collect: (v) => values.push(v) }, 4);
    if (result.state !== 'more') return { result, values };
  }
}

describe('partitionEnd', () => {
  it('counts the clicks 0..n-1 with seq mod partitions = partition', () => {
    for (const [n, partitions] of [
      [10, 3],
      [1, 2],
      [7, 7],
      [5, 8],
    ]) {
      for (let p = 0; p < partitions; p++) {
        const expected = Array.from({ length: n }, (_, s) => s).filter((s) => s % partitions === p).length;
        expect(partitionEnd(n, p, partitions), `${n} ${partitions} ${p}`).toBe(expected);
      }
    }
  });
});

describe('feedClicks', () => {
  it('appends every click once, to partition seq mod partitions in seq order, stamped', async () => {
    const handle = openLog(tempDir());
    try {
      const topic = handle.topic<LoggedClick>('clicks', { partitions: 3 });
      const before = performance.timeOrigin + performance.now();
      const feed = feedClicks(topic, { n: 500, users: 20, rate: 50_000, partitions: 3, tickMs: 2 });
      expect(await feed.done).toBe(500);
      expect(feed.appended()).toBe(500);
      for (let p = 0; p < 3; p++) {
        const records = topic.read(p, 0, 1000);
        expect(records.length).toBe(partitionEnd(500, p, 3));
        records.forEach((r, offset) => {
          const seq = offset * 3 + p;
          expect(r.value).toMatchObject(clickAt(seq, 20));
          expect(r.value.appendedAt).toBeGreaterThanOrEqual(before);
        });
      }
    } finally {
      await handle.close();
    }
  });

  it('stops early when asked', async () => {
    const handle = openLog(tempDir());
    try {
      const topic = handle.topic<LoggedClick>('clicks', { partitions: 1 });
      const feed = feedClicks(topic, { n: 1_000_000, users: 20, rate: 1000, partitions: 1 });
      await new Promise((r) => setTimeout(r, 50));
      feed.stop();
      const appended = await feed.done;
      expect(appended).toBeGreaterThan(0);
      expect(appended).toBeLessThan(1000);
      expect(topic.endOffset(0)).toBe(appended);
    } finally {
      await handle.close();
    }
  });
});

describe('logUntilEnds', () => {
  it('reads while clicks arrive, idles when caught up, ends at the known ends, and resumes from a snapshot', async () => {
    const dir = tempDir();
    const handle = openLog(dir);
    try {
      const topic = handle.topic<{ seq: number }>('clicks', { partitions: 2 });
      const n = 9;
      const source = logUntilEnds(logSource<{ seq: number }>({ dir, topic: 'clicks' }), (p) =>
        partitionEnd(n, p, 2),
      );
      const append = (from: number, to: number) => {
        for (let seq = from; seq < to; seq++) topic.appendSync([{ seq }], { partition: seq % 2 });
      };
      append(0, 4);
      const reader = source.createReader(ctx(0, 1));
      const first = drain(reader);
      expect(first.result.state).toBe('idle');
      expect(first.values.map((v) => v.seq).sort((a, b) => a - b)).toEqual([0, 1, 2, 3]);
      append(4, 6);
      const snapshot = reader.snapshotState(1);
      reader.close?.();

      // restored from the snapshot: continues at 4 and ends after 8, the last click
      const restored = source.createReader(ctx(0, 1, snapshot));
      const second = drain(restored);
      expect(second.result.state).toBe('idle');
      expect(second.values.map((v) => v.seq).sort((a, b) => a - b)).toEqual([4, 5]);
      append(6, n);
      const third = drain(restored);
      expect(third.values.map((v) => v.seq).sort((a, b) => a - b)).toEqual([6, 7, 8]);
      expect(restored.poll({ collect: () => undefined }, 4).state).toBe('end');
      restored.close?.();

      // a subtask without a partition ends at once
      const empty = source.createReader(ctx(2, 3));
      expect(empty.poll({ collect: () => undefined }, 4).state).toBe('end');
      empty.close?.();
    } finally {
      await handle.close();
    }
  });
});

describe('readCommittedJsonl', () => {
  it('reads the committed part files only (staged parts are dot-files with other endings)', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'part-0-0-ab12-0.jsonl'), '{"a":1}\n{"a":2}\n');
    writeFileSync(join(dir, 'part-1-0-cd34-0.jsonl'), '{"a":3}\n');
    writeFileSync(join(dir, '.part-0-1-ef56-0.jsonl.inprogress'), '{"a":4}\n');
    writeFileSync(join(dir, '.part-1-1-ef57-0.jsonl.pending-3'), '{"a":5}\n');
    expect(readCommittedJsonl<{ a: number }>(dir).map((r) => r.a)).toEqual([1, 2, 3]);
    expect(readCommittedJsonl(join(dir, 'missing'))).toEqual([]);
  });
});
