/**
 * Operator-state chunks (a collect sink's sealed records, a custom sink's committables, source
 * positions) keep the values users put in them through a checkpoint: -0, Maps, Sets, Dates,
 * BigInts; a function is a ValueNotSerializableError naming the operator (msgpack would have
 * stored `undefined`).
 */
import { describe, expect, it } from 'vitest';
import { ValueNotSerializableError } from '../../../src/errors.js';
import { operatorStatePackr, packOperatorState } from '../../../src/protocol/operator-state-codec.js';

describe('operator-state codec', () => {
  it('keeps -0, Maps, Sets, Dates and bigints, nested in records', () => {
    const packr = operatorStatePackr();
    const entries = [
      {
        transactionId: '0@0:3',
        records: [
          {
            key: 'a',
            v: -0,
            m: new Map<unknown, unknown>([
              [1, { x: -0 }],
              ['k', new Set([1, 2])],
            ]),
          },
          { at: new Date(1_700_000_000_123), big: 12345678901234567890n, plain: { a: [1, -0, 2] } },
        ],
      },
      new Map([['pos', 42]]),
    ];
    const back = operatorStatePackr().unpack(packOperatorState(packr, 'sink-1', entries)) as typeof entries;
    expect(back).toEqual(entries);
    const rec = (back[0] as { records: Record<string, unknown>[] }).records;
    expect(Object.is(rec[0].v, -0)).toBe(true);
    expect(rec[0].m).toBeInstanceOf(Map);
    expect(((rec[0].m as Map<unknown, unknown>).get(1) as { x: number }).x).toBe(-0);
    expect(Object.is(((rec[0].m as Map<unknown, unknown>).get(1) as { x: number }).x, -0)).toBe(true);
    expect((rec[0].m as Map<unknown, unknown>).get('k')).toBeInstanceOf(Set);
    expect(rec[1].at).toBeInstanceOf(Date);
    expect(rec[1].big).toBe(12345678901234567890n);
    expect(Object.is((rec[1].plain as { a: number[] }).a[1], -0)).toBe(true);
    expect(back[1]).toBeInstanceOf(Map);
  });

  it('leaves the entries it packs unchanged', () => {
    const entries = [{ v: -0, m: new Map([[1, 2]]) }];
    packOperatorState(operatorStatePackr(), 'op', entries);
    expect(Object.is(entries[0].v, -0)).toBe(true);
    expect(entries[0].m).toBeInstanceOf(Map);
  });

  it('rejects a function with an error naming the operator', () => {
    const attempt = () => packOperatorState(operatorStatePackr(), 'my-sink', [{ records: [{ f: () => 1 }] }]);
    expect(attempt).toThrow(ValueNotSerializableError);
    expect(attempt).toThrow(/operator state of my-sink cannot be serialized: it holds a function/);
    try {
      attempt();
    } catch (err) {
      expect((err as ValueNotSerializableError).operator).toBe('my-sink');
    }
  });
});
