/**
 * Values cross the rings unchanged on both record paths: -0 (which msgpack turned into 0), Sets
 * (which arrived as arrays), Maps and Dates; a function-valued field (which arrived as
 * `undefined`) fails the job with a ValueNotSerializableError naming the operator.
 */
import { describe, expect, it } from 'vitest';
import { JobFailedError, runJob, TaskFailureError, ValueNotSerializableError } from '../../dist/index.js';
import { fixture } from './helpers.js';

const n = 300;

describe('record values between threads', () => {
  it.each(['auto', 'msgpack'] as const)(
    'keep -0 in a one-shape batch (records: %s)',
    async (recordFormat) => {
      const r = await runJob(fixture('values.mjs'), {
        parallelism: 2,
        channels: { recordFormat },
        args: { kind: 'shape', n: String(n) },
      });
      const out = r.sinks.out as { i: number; z: number; half: number }[];
      expect(out).toHaveLength(n);
      for (const rec of out) expect(Object.is(rec.z, -0)).toBe(true);
    },
  );

  it.each(['auto', 'msgpack'] as const)(
    'keep -0, Maps, Sets and Dates (records: %s)',
    async (recordFormat) => {
      const r = await runJob(fixture('values.mjs'), {
        parallelism: 2,
        channels: { recordFormat },
        args: { kind: 'rich', n: String(n) },
      });
      const out = (r.sinks.out as { i: number }[]).sort((a, b) => a.i - b.i);
      expect(out).toHaveLength(n);
      for (const rec of out as any[]) {
        const i = rec.i;
        expect(Object.is(rec.z, -0)).toBe(true);
        expect(Object.is(rec.list[0], -0)).toBe(true);
        expect(Object.is(rec.list[1], 0)).toBe(true);
        expect(rec.map).toBeInstanceOf(Map);
        expect(Object.is(rec.map.get('neg'), -0)).toBe(true);
        expect(rec.map.get('set')).toEqual(new Set([i, -0]));
        expect(rec.set).toBeInstanceOf(Set);
        expect([...rec.set]).toEqual(['a', 'b']);
        expect(rec.date).toBeInstanceOf(Date);
        expect(rec.date.getTime()).toBe(1_700_000_000_000 + i);
      }
    },
  );

  it('reject a function-valued field, naming the operator', async () => {
    const error = await runJob(fixture('values.mjs'), { parallelism: 2, args: { kind: 'function' } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JobFailedError);
    const failure = (error as JobFailedError).cause as TaskFailureError;
    expect(failure).toBeInstanceOf(TaskFailureError);
    expect(failure.message).toMatch(
      /ValueNotSerializableError: a record emitted by operator make values cannot be serialized: it holds a function/,
    );
    expect((failure.cause as Error).name).toBe('ValueNotSerializableError');
    expect(ValueNotSerializableError).toBeDefined();
  });
});
