/** Pure parts of the broker and database connectors: statements, ids, split assignment, options. */
import { describe, expect, it } from 'vitest';
import { jetstreamSink, messageId } from '../../../src/connectors/jetstream-sink.js';
import {
  decodePayload,
  initialJetStreamSplits,
  jetstreamSource,
} from '../../../src/connectors/jetstream-source.js';
import {
  InsertStatements,
  insertStatement,
  lastPerKey,
  postgres,
  quoteName,
  rowsPerStatement,
} from '../../../src/connectors/postgres-sink.js';
import { compareIds } from '../../../src/connectors/redis-stream-source.js';
import { InvalidOptionError, JetStreamSourceError } from '../../../src/errors.js';

describe('postgres sink statements', () => {
  it('quotes (schema-qualified) names, doubling embedded quotes', () => {
    expect(quoteName('counts')).toBe('"counts"');
    expect(quoteName('app.counts')).toBe('"app"."counts"');
    expect(quoteName('we"ird')).toBe('"we""ird"');
  });
  it('builds a multi-row INSERT with numbered parameters', () => {
    expect(insertStatement('"t"', ['a', 'b'], 2, undefined)).toBe(
      'INSERT INTO "t" ("a", "b") VALUES ($1, $2), ($3, $4)',
    );
  });
  it('upsert updates the non-key columns; DO NOTHING when every column is a key', () => {
    expect(insertStatement('"t"', ['k', 'v'], 1, ['k'])).toBe(
      'INSERT INTO "t" ("k", "v") VALUES ($1, $2) ON CONFLICT ("k") DO UPDATE SET "v" = EXCLUDED."v"',
    );
    expect(insertStatement('"t"', ['k'], 1, ['k'])).toBe(
      'INSERT INTO "t" ("k") VALUES ($1) ON CONFLICT ("k") DO NOTHING',
    );
  });
  it('names one prepared statement per statement text, reused for the same shape', () => {
    const statements = new InsertStatements();
    const a = statements.full('"t"', ['a', 'b'], 2, undefined);
    expect(a.text).toBe(insertStatement('"t"', ['a', 'b'], 2, undefined));
    expect(statements.full('"t"', ['a', 'b'], 2, undefined)).toBe(a);
    const names = [
      a,
      statements.full('"t"', ['a', 'b'], 3, undefined),
      statements.full('"u"', ['a', 'b'], 2, undefined),
      statements.full('"t"', ['a', 'b'], 2, ['a']),
      new InsertStatements().full('"t"', ['b', 'a'], 2, undefined),
    ].map((q) => q.name);
    expect(new Set(names).size).toBe(names.length);
    // the same text gets the same name in another instance (names are per text, not per instance)
    expect(new InsertStatements().full('"t"', ['a', 'b'], 2, undefined).name).toBe(a.name);
  });
  it('stays under 65535 parameters per statement', () => {
    expect(rowsPerStatement(3)).toBe(2000);
    expect(rowsPerStatement(100) * 100).toBeLessThanOrEqual(65535);
    expect(rowsPerStatement(100_000)).toBe(1);
  });
  it('keeps the last row per key, in order of last write', () => {
    const rows = [
      [1, 'a'],
      [2, 'b'],
      [1, 'c'],
    ];
    expect(lastPerKey(['k', 'v'], rows, ['k'])).toEqual([
      [2, 'b'],
      [1, 'c'],
    ]);
    expect(
      lastPerKey(
        ['k', 'j', 'v'],
        [
          [1, 1, 'x'],
          [1, 2, 'y'],
          [1, 1, 'z'],
        ],
        ['k', 'j'],
      ),
    ).toEqual([
      [1, 2, 'y'],
      [1, 1, 'z'],
    ]);
  });
  it('rejects bad options up front', () => {
    expect(() => postgres({ connection: 'postgres://x', table: '' })).toThrow(InvalidOptionError);
    expect(() =>
      postgres({ connection: 'postgres://x', table: 't', upsertKey: ['k'], columns: ['v'] }),
    ).toThrow(/every key column/);
    expect(() => postgres({ connection: 'postgres://x', table: 't', columns: ['a', 'a'] })).toThrow(/twice/);
  });
});

describe('jetstream connectors', () => {
  it('assigns split i to subtask i mod parallelism', () => {
    expect(initialJetStreamSplits(5, 0, 2)).toEqual([0, 2, 4]);
    expect(initialJetStreamSplits(5, 1, 2)).toEqual([1, 3]);
    expect(initialJetStreamSplits(1, 1, 3)).toEqual([]);
  });
  it('message ids are deterministic per (prefix, checkpoint, index)', () => {
    expect(messageId('job/ab12/0', 7, 3)).toBe('job/ab12/0/7/3');
  });
  it('decodes payloads; bad JSON is a typed error naming the message', () => {
    const bytes = Buffer.from('{"a":1}');
    expect(decodePayload(bytes, 'json', 'x')).toEqual({ a: 1 });
    expect(decodePayload(bytes, 'string', 'x')).toBe('{"a":1}');
    expect(decodePayload(bytes, 'bytes', 'x')).toBe(bytes);
    expect(() => decodePayload(Buffer.from('{'), 'json', 'stream "s" seq 4')).toThrow(JetStreamSourceError);
    expect(() => decodePayload(Buffer.from('{'), 'json', 'stream "s" seq 4')).toThrow(/seq 4/);
  });
  it('rejects bad options up front', () => {
    expect(() => jetstreamSource({ servers: [], stream: 's' })).toThrow(InvalidOptionError);
    expect(() => jetstreamSource({ servers: 'nats://x', stream: 's', filterSubjects: ['a', 'a'] })).toThrow(
      /twice/,
    );
    expect(() => jetstreamSource({ servers: 'nats://x', stream: 's', format: 'xml' as 'json' })).toThrow(
      /format/,
    );
    expect(() => jetstreamSink({ servers: 'nats://x', subject: '' })).toThrow(InvalidOptionError);
  });
});

describe('redis stream ids', () => {
  it('compares ms-seq ids numerically', () => {
    expect(compareIds('1-0', '1-0')).toBe(0);
    expect(compareIds('9-0', '10-0')).toBe(-1);
    expect(compareIds('10-2', '10-11')).toBe(-1);
    expect(compareIds('11-0', '10-99')).toBe(1);
  });
});
