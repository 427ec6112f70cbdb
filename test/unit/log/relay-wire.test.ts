/**
 * `src/log/relay-wire.ts`: an append posted to the process's committer arrives with the same
 * values, routing and transaction, in one exact-size buffer whatever buffers the values were views
 * into; outcomes round-trip with their typed errors.
 */
import { describe, expect, it } from 'vitest';
import { InvalidOptionError, LogStorageError } from '../../../src/errors.js';
import {
  failed,
  outcomeError,
  packOp,
  succeeded,
  unpackOp,
  type WireOp,
} from '../../../src/log/relay-wire.js';

describe('relay wire', () => {
  it('packs an append into one exact-size buffer and unpacks the same values', () => {
    // Views into a large shared buffer, as Buffer.allocUnsafe hands out from its pool.
    const pool = Buffer.alloc(8192, 7);
    const values = [
      pool.subarray(100, 112),
      pool.subarray(4000, 4009),
      Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9]),
    ];
    values[0].fill(1);
    const op: WireOp = {
      kind: 'append',
      topic: 't',
      topicId: 3,
      prepared: { values, routed: [0, 2, 1] },
      tx: { transactionId: 'x', writer: 'w' },
    };
    const packed = structuredClone(packOp(op));
    expect(packed.kind).toBe('packed-append');
    if (packed.kind !== 'packed-append') return;
    expect(packed.bytes.buffer.byteLength).toBe(12 + 9 + 9);
    const back = unpackOp(packed);
    expect(back).toEqual({
      ...op,
      prepared: { values: values.map((v) => Buffer.from(v)), routed: [0, 2, 1] },
    });
    const retention: WireOp = { kind: 'retention', topic: 't', topicId: 3 };
    expect(unpackOp(packOp(retention))).toBe(retention);
  });

  it('outcomes carry results and typed errors', () => {
    expect(succeeded(5)).toEqual({ ok: true, result: 5 });
    const invalid = failed(new InvalidOptionError('topic', 'gone'));
    if (invalid.ok) throw new Error('expected a failure');
    const rebuilt = outcomeError(invalid, '/d');
    expect(rebuilt).toBeInstanceOf(InvalidOptionError);
    expect(rebuilt.message).toBe(new InvalidOptionError('topic', 'gone').message);
    const other = failed(new Error('disk full'));
    if (other.ok) throw new Error('expected a failure');
    expect(outcomeError(other, '/d')).toBeInstanceOf(LogStorageError);
  });
});
