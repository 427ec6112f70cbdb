/** Topics: creation, reopening, fixed partition counts, policies, and the closed-log errors. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  InvalidOptionError,
  LogClosedError,
  LogPartitionCountMismatchError,
  LogTopicNotFoundError,
} from '../../../src/errors.js';
import { openLog } from '../../../src/log/index.js';
import { tempLogDir } from './helpers.js';

describe('topics', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const fresh = (label: string) => {
    const t = tempLogDir(label);
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    return { log, dir: t.dir };
  };

  it('creates a topic with a partition count and reopens it with or without the count', async () => {
    const { log, dir } = fresh('create');
    const a = log.topic('events', { partitions: 4 });
    expect(a.partitions).toBe(4);
    expect(log.topic('events').partitions).toBe(4);
    expect(log.topic('events', { partitions: 4 }).partitions).toBe(4);
    log.topic('other', { partitions: 1 });
    expect(log.topics()).toEqual(['events', 'other']);
    // another handle (as another thread or process would open it) sees the same topics
    const second = openLog(dir);
    expect(second.topic('events').partitions).toBe(4);
    await second.close();
  });

  it('refuses another partition count and a missing topic without partitions, with typed errors', () => {
    const { log } = fresh('mismatch');
    log.topic('events', { partitions: 3 });
    const mismatch = (() => {
      try {
        log.topic('events', { partitions: 5 });
      } catch (e) {
        return e;
      }
    })();
    expect(mismatch).toBeInstanceOf(LogPartitionCountMismatchError);
    expect((mismatch as LogPartitionCountMismatchError).existingPartitions).toBe(3);
    expect((mismatch as Error).message).toMatch(/3 partition\(s\).*partitions: 5/);
    expect(() => log.topic('nope')).toThrow(LogTopicNotFoundError);
    expect(() => log.topic('nope')).toThrow(/no topic "nope"/);
    // the failed open did not create it
    expect(log.topics()).toEqual(['events']);
  });

  it('rejects bad names and options before writing anything', () => {
    const { log } = fresh('bad-options');
    expect(() => log.topic('')).toThrow(InvalidOptionError);
    expect(() => log.topic('x'.repeat(201), { partitions: 1 })).toThrow(/at most 200/);
    expect(() => log.topic('t', { partitions: 0 })).toThrow(/topic\(options.partitions\)/);
    expect(() => log.topic('t', { partitions: 1.5 })).toThrow(InvalidOptionError);
    expect(() => log.topic('t', { partitions: 1, retention: { maxBytes: -1 } })).toThrow(
      /retention\)\.maxBytes/,
    );
    expect(() => log.topic('t', { partitions: 1, retention: { maxAge: 5 } as never })).toThrow(
      /unknown field/,
    );
    expect(() => log.topic('t', { partitions: 1, size: 3 } as never)).toThrow(/unknown option "size"/);
    expect(() => openLog('')).toThrow(InvalidOptionError);
    expect(log.topics()).toEqual([]);
  });

  it('stores retention as a policy that a later open may replace', () => {
    const { log } = fresh('policy');
    const t = log.topic('events', { partitions: 2, retention: { maxBytes: 1000 } });
    expect(t.retention).toEqual({ maxBytes: 1000 });
    log.topic('events', { retention: { maxAgeMs: 60_000 } });
    expect(t.retention).toEqual({ maxAgeMs: 60_000 });
    log.topic('events');
    expect(t.retention).toEqual({ maxAgeMs: 60_000 });
  });

  it('throws LogClosedError for every use after close, and close is idempotent', async () => {
    const { log } = fresh('closed');
    const t = log.topic('events', { partitions: 2 });
    t.appendSync([1, 2, 3], { partition: 0 });
    await log.close();
    await log.close();
    expect(log.closed).toBe(true);
    expect(() => t.read(0, 0, 10)).toThrow(LogClosedError);
    expect(() => t.endOffset(0)).toThrow(LogClosedError);
    expect(() => t.startOffset(0)).toThrow(LogClosedError);
    expect(() => t.appendSync([4])).toThrow(LogClosedError);
    await expect(t.append([4])).rejects.toThrow(LogClosedError);
    await expect(t.enforceRetention()).rejects.toThrow(LogClosedError);
    expect(() => log.topic('events')).toThrow(LogClosedError);
    expect(() => log.topics()).toThrow(LogClosedError);
  });

  it('close waits for in-flight asynchronous appends, which are then durable', async () => {
    const t = tempLogDir('close-in-flight');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    const topic = log.topic('events', { partitions: 1 });
    const appends = [topic.append([1, 2]), topic.append([3])];
    await log.close();
    await expect(Promise.all(appends)).resolves.toHaveLength(2);
    const again = openLog(t.dir);
    expect(
      again
        .topic('events')
        .read(0, 0, 10)
        .map((r) => r.value),
    ).toEqual([1, 2, 3]);
    await again.close();
  });
});
