/** sources.postgres: split assignment and options checked up front (no database). */
import { describe, expect, it } from 'vitest';
import { initialPostgresSplits, postgresSource } from '../../../src/connectors/postgres-source.js';
import { InvalidOptionError } from '../../../src/errors.js';

const C = 'postgres://root@127.0.0.1:5432/test';

describe('sources.postgres', () => {
  it('assigns split i of S to subtask i mod parallelism on a fresh start, each split once', () => {
    expect(initialPostgresSplits(3, 0, 2)).toEqual([
      [0, 3],
      [2, 3],
    ]);
    expect(initialPostgresSplits(3, 1, 2)).toEqual([[1, 3]]);
    expect(initialPostgresSplits(2, 2, 3)).toEqual([]);
    const all = [0, 1, 2, 3].flatMap((s) => initialPostgresSplits(7, s, 4).map(([i]) => i));
    expect(all.sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('checks options up front', () => {
    expect(() => postgresSource({ connection: C, table: '', key: 'id' })).toThrow(InvalidOptionError);
    expect(() => postgresSource({ connection: C, table: 't', key: [] })).toThrow(InvalidOptionError);
    expect(() => postgresSource({ connection: C, table: 't', key: ['a', 'a'] })).toThrow(/twice/);
    expect(() => postgresSource({ connection: C, table: 't', key: 'id', columns: [] })).toThrow(
      InvalidOptionError,
    );
    expect(() => postgresSource({ connection: C, table: 't', key: 'id', splits: 0 })).toThrow(RangeError);
    expect(() => postgresSource({ connection: C, table: 't', key: 'id', batchRows: 1.5 })).toThrow(
      RangeError,
    );
    const s = postgresSource({ connection: C, table: 't', key: 'id' });
    expect(s.bounded).toBe(true);
    expect(s.type).toBe('postgres');
  });

  it('checks incrementing options up front; incrementing makes the source unbounded', () => {
    const inc = (incrementing: unknown, key?: string) =>
      postgresSource({ connection: C, table: 't', key, incrementing: incrementing as never });
    expect(() => postgresSource({ connection: C, table: 't' })).toThrow(InvalidOptionError); // no key
    expect(() => inc({})).toThrow(/incrementing/);
    expect(() => inc({ column: '' })).toThrow(InvalidOptionError);
    expect(() => inc({ column: 'id', pollIntervalMs: 0 })).toThrow(RangeError);
    expect(() => inc({ column: 'id', pollIntervalMs: 100, maxPollIntervalMs: 50 })).toThrow(
      /maxPollIntervalMs/,
    );
    expect(() => inc({ column: 'id' }, 'other')).toThrow(/the key is the incrementing column "id"/);
    expect(inc({ column: 'id' }, 'id').bounded).toBe(false);
    expect(inc({ column: 'id' }).bounded).toBe(false);
  });

  it('refuses restored state of another table or key', () => {
    const s = postgresSource({ connection: C, table: 't', key: 'id' });
    const entry = { table: 'u', key: ['id'], split: 0, of: 1, last: null, end: null, done: true };
    const ctx = { subtaskIndex: 0, parallelism: 1, attempt: 0 } as never;
    expect(() => s.createReader({ ...(ctx as object), restoredState: [entry] } as never)).toThrow(
      /table "u"/,
    );
    expect(() =>
      s.createReader({ ...(ctx as object), restoredState: [{ ...entry, table: 't', key: ['k'] }] } as never),
    ).toThrow(/by key/);
    expect(() => s.createReader({ ...(ctx as object), restoredState: [{ table: 't' }] } as never)).toThrow(
      /not a PostgreSQL split/,
    );
  });
});
