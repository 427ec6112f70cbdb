/**
 * The wire vocabulary of the cross-thread group commit (`thread-relay.ts`): an asynchronous log
 * operation as data ({@link WireOp}, what a follower hands to the process's committer), as posted
 * ({@link PackedOp}), and each operation's outcome as sent back ({@link WireOutcome}), with the
 * conversions. Pure functions, no I/O.
 *
 * Cost: packing copies an append's encoded records once into one exact-size buffer; unpacking
 * makes views into the received copy (none).
 */

import { InvalidOptionError, LogStorageError, type WeirError } from '../errors.js';

/**
 * Records encoded and routed, ready for a write transaction. Plain data (survives msgpack), so a
 * transactional sink can keep a sealed batch in its checkpoint and commit it after a restore.
 */
export interface PreparedAppend {
  /** Stored values (header + msgpack), one per record. */
  readonly values: Uint8Array[];
  /** Partition per record, or null for round-robin (decided inside the transaction). */
  readonly routed: number[] | null;
}

/** An asynchronous log operation as data (what a follower sends). */
export type WireOp =
  | {
      readonly kind: 'append';
      readonly topic: string;
      readonly topicId: number;
      readonly prepared: PreparedAppend;
      readonly tx: { readonly transactionId: string; readonly writer: string } | null;
    }
  | { readonly kind: 'retention'; readonly topic: string; readonly topicId: number };

/** One operation's outcome, as sent back. */
export type WireOutcome =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly name: string; readonly message: string; readonly option?: string };

/**
 * A {@link WireOp} as posted: an append's values packed into one exact-size buffer. A stored value
 * is usually a view into Node's shared 8 KiB allocation pool, and structured clone copies a view's
 * whole buffer: posted as they are, one single-record append cost every receiver an 8 KiB copy.
 */
export type PackedOp =
  | Exclude<WireOp, { kind: 'append' }>
  | {
      readonly kind: 'packed-append';
      readonly topic: string;
      readonly topicId: number;
      readonly bytes: Uint8Array;
      readonly lengths: number[];
      readonly routed: number[] | null;
      readonly tx: { readonly transactionId: string; readonly writer: string } | null;
    };

/** One exact-size buffer per append (see {@link PackedOp}). */
export function packOp(op: WireOp): PackedOp {
  if (op.kind !== 'append') return op;
  const { values, routed } = op.prepared;
  const lengths: number[] = new Array(values.length);
  let total = 0;
  for (let i = 0; i < values.length; i++) total += lengths[i] = values[i].length;
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const value of values) {
    bytes.set(value, at);
    at += value.length;
  }
  return { kind: 'packed-append', topic: op.topic, topicId: op.topicId, bytes, lengths, routed, tx: op.tx };
}

/** The committer's copy: the values are views into the one received buffer (no copy). */
export function unpackOp(op: PackedOp): WireOp {
  if (op.kind !== 'packed-append') return op;
  const buffer = Buffer.from(op.bytes.buffer, op.bytes.byteOffset, op.bytes.byteLength);
  const values: Buffer[] = new Array(op.lengths.length);
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    values[i] = buffer.subarray(at, at + op.lengths[i]);
    at += op.lengths[i];
  }
  return {
    kind: 'append',
    topic: op.topic,
    topicId: op.topicId,
    prepared: { values, routed: op.routed },
    tx: op.tx,
  };
}

export function succeeded(result: unknown): WireOutcome {
  return { ok: true, result };
}

export function failed(error: unknown): WireOutcome {
  if (error instanceof InvalidOptionError) {
    return { ok: false, name: error.name, message: error.message, option: error.option };
  }
  const e = error instanceof Error ? error : new Error(String(error));
  return { ok: false, name: e.name, message: e.message };
}

/** A follower's view of a failed outcome: the committer's typed error, rebuilt. */
export function outcomeError(outcome: WireOutcome & { ok: false }, dir: string): WeirError {
  if (outcome.name === 'InvalidOptionError' && outcome.option !== undefined) {
    const prefix = `invalid option ${outcome.option}: `;
    const detail = outcome.message.startsWith(prefix)
      ? outcome.message.slice(prefix.length)
      : outcome.message;
    return new InvalidOptionError(outcome.option, detail);
  }
  return new LogStorageError(`log ${dir}: the committer thread failed the append: ${outcome.message}`);
}
