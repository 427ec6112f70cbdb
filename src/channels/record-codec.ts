/**
 * RecordCodec: encodes a batch of records on the producer side and decodes it on the consumer
 * side of ONE channel, with msgpackr's record extension and structures shared between the two ends.
 *
 * Sharing structures between threads: the producer's Packr starts with empty shared structures
 * and learns record shapes (key lists) as it encodes; msgpackr then calls `saveStructures`. After
 * each batch, {@link RecordCodec.takeStructureUpdate} returns the shapes learned since the last
 * call (plain key lists, msgpack-encoded) and the writer publishes them in-band, in a `structures`
 * frame BEFORE the batch that first references them. The ring is FIFO, so the consumer always
 * applies a shape before it meets a reference to it. No shared mutable state between endpoints:
 * each endpoint owns its codec and the shapes travel as bytes.
 *
 * Limits: up to {@link SHARED_STRUCTURES} shapes are shared (msgpackr's default, one-byte ids);
 * further shapes are written inline with each batch (self-describing, slower).
 * Measured here: shared structures encode+decode about 2x faster than plain msgpack.
 *
 * Batches of records of one shape (plain objects of primitives and nested plain objects, or
 * primitives; bare or in event-time envelopes) skip msgpack: see shape-codec.ts (encoders and
 * decoders generated per shape).
 *
 * Values: -0, Sets, Maps and Dates arrive as sent on both paths; a function value throws
 * ValueNotSerializableError (msgpack-values.ts).
 *
 * Decoding copies: strings are decoded into JS strings, and binary values are copied
 * (`copyBuffers`), so a decoded batch never aliases the ring's shared memory.
 */
import { Packr, Unpackr } from 'msgpackr';
import { ChannelProtocolError } from '../errors.js';
import { encodeNegativeZeros, msgpackValueOptions } from './msgpack-values.js';
import { SHAPE_BATCH_MARK, ShapeDecoder, ShapeEncoder } from './shape-codec.js';

/** Shared shapes per channel; msgpackr's default, which keeps record ids to one byte. */
export const SHARED_STRUCTURES = 32;

export class RecordCodec {
  readonly #packr: Packr;
  /** The Packr's live structures array, as last handed to saveStructures (producer side). */
  #producerStructures: readonly (readonly string[])[] = [];
  /** How many of #producerStructures the consumer has been sent. */
  #sentStructures = 0;
  /** Plain msgpack for structure updates (no records: they describe records). */
  readonly #plain = new Packr({ useRecords: false });
  /** Consumer side: every shape received so far, in id order. */
  readonly #consumerStructures: string[][] = [];
  #unpackr: Unpackr;
  /** What {@link structures} last returned. */
  #structuresSnapshot: readonly (readonly string[])[] = [];
  /** Fast path for batches of one flat shape (shape-codec.ts); other batches use msgpack. */
  readonly #shapeEncoder: ShapeEncoder | null;
  readonly #shapeDecoder = new ShapeDecoder();

  /**
   * @param options.shapeBatches encode one-shape batches with the shape codec (default true);
   *   false sends every batch through msgpack (benchmarks compare the two). Decoding accepts both.
   * @param options.producer the operator whose records this codec encodes, named by the
   *   ValueNotSerializableError a function-valued field raises.
   */
  constructor(options: { readonly shapeBatches?: boolean; readonly producer?: string } = {}) {
    this.#shapeEncoder = options.shapeBatches === false ? null : new ShapeEncoder();
    this.#packr = new Packr({
      // Sets stay Sets, functions are rejected (msgpack-values.ts).
      ...msgpackValueOptions(
        options.producer === undefined ? 'a record' : `a record emitted by ${options.producer}`,
      ),
      structures: [],
      maxSharedStructures: SHARED_STRUCTURES,
      saveStructures: (structures) => {
        this.#producerStructures = structures as unknown as readonly (readonly string[])[];
      },
    });
    this.#unpackr = this.#newUnpackr();
  }

  /**
   * Producer. Encodes `records` as a shape batch when they share one shape (plain objects with
   * the same keys, or primitives: shape-codec.ts), else as one msgpack array. Returns a view of
   * the codec's internal buffer, valid until the next call on this codec: copy it (into the ring)
   * before that.
   */
  encodeBatch(records: readonly unknown[]): Uint8Array {
    // The shape codec keeps -0 itself; msgpack needs it marked (one walk of the batch, which
    // copies only when it finds a -0: msgpack-values.ts).
    return this.#shapeEncoder?.encode(records) ?? this.#packr.pack(encodeNegativeZeros(records));
  }

  /** Producer counters: batches that took the shape path, and batches that fell back to msgpack. */
  get shapeStats(): { readonly shapeBatches: number; readonly fallbacks: number } {
    return this.#shapeEncoder?.stats ?? { shapeBatches: 0, fallbacks: 0 };
  }

  /** Producer. Encodes one record on its own (used to size records when a batch is oversized). */
  encodedSize(record: unknown): number {
    return this.#packr.pack(encodeNegativeZeros(record)).length;
  }

  /**
   * Producer, after {@link encodeBatch}: the shapes learned since the last call, as a payload for a
   * `structures` frame that must be published before the batch; `null` when there are none.
   */
  takeStructureUpdate(): Uint8Array | null {
    const all = this.#producerStructures;
    if (all.length <= this.#sentStructures) return null;
    const from = this.#sentStructures;
    const shapes = all.slice(from).map((keys) => Array.from(keys, String));
    this.#sentStructures = all.length;
    return this.#plain.pack([from, shapes]);
  }

  /** Consumer. Applies a `structures` payload (may be a view into shared memory; not retained). */
  applyStructureUpdate(payload: Uint8Array): void {
    let update: unknown;
    try {
      update = this.#plain.unpack(payload);
    } catch (cause) {
      throw new ChannelProtocolError('undecodable structures frame', { cause });
    }
    if (!Array.isArray(update) || update.length !== 2 || !Array.isArray(update[1])) {
      throw new ChannelProtocolError('malformed structures frame');
    }
    const [from, shapes] = update as [unknown, unknown[]];
    if (from !== this.#consumerStructures.length) {
      throw new ChannelProtocolError(
        `structures frame starts at id ${String(from)}, expected ${this.#consumerStructures.length}`,
      );
    }
    for (const keys of shapes) {
      if (!Array.isArray(keys)) throw new ChannelProtocolError('malformed shape in structures frame');
      this.#consumerStructures.push(keys.map(String));
    }
    if (this.#consumerStructures.length > SHARED_STRUCTURES) {
      throw new ChannelProtocolError(`more than ${SHARED_STRUCTURES} shared structures on one channel`);
    }
    // Rare (at most SHARED_STRUCTURES times per channel), so a fresh Unpackr is cheaper to reason
    // about than patching msgpackr's internal structure bookkeeping.
    this.#unpackr = this.#newUnpackr();
  }

  /**
   * Consumer: the shapes received so far (id order), enough to decode any batch read so far on
   * its own ({@link decodeEncodedBatch}). The list only grows and its entries never change, so the
   * returned array is a snapshot that stays valid; it is re-made only after a structures frame.
   */
  get structures(): readonly (readonly string[])[] {
    if (this.#structuresSnapshot.length !== this.#consumerStructures.length)
      this.#structuresSnapshot = this.#consumerStructures.slice();
    return this.#structuresSnapshot;
  }

  /** Consumer. Decodes a batch (the payload may be a view into shared memory; nothing aliases it). */
  decodeBatch(payload: Uint8Array): unknown[] {
    if (payload[0] === SHAPE_BATCH_MARK) return this.#shapeDecoder.decode(payload);
    let records: unknown;
    try {
      records = this.#unpackr.unpack(payload);
    } catch (cause) {
      throw new ChannelProtocolError('undecodable record batch', { cause });
    }
    if (!Array.isArray(records)) throw new ChannelProtocolError('record batch is not an array');
    return records;
  }

  #newUnpackr(): Unpackr {
    return new Unpackr({
      structures: this.#consumerStructures.map((keys) => keys.slice()),
      maxSharedStructures: SHARED_STRUCTURES,
      copyBuffers: true,
    });
  }
}

/**
 * Decodes one record batch as a channel carried it (`payload`, a shape batch or msgpack with
 * shared structures) away from its channel: `structures` are the consumer's shapes when it was
 * read ({@link RecordCodec.structures}; a later, longer list decodes it too). Used for channel
 * state kept in ring encoding (unaligned checkpoints). Cost: a decoder per call (msgpack) or a
 * generated shape decoder per call: for restore and tests, not for a hot path.
 */
export function decodeEncodedBatch(
  payload: Uint8Array,
  structures: readonly (readonly string[])[],
): unknown[] {
  if (payload[0] === SHAPE_BATCH_MARK) return new ShapeDecoder().decode(payload);
  let records: unknown;
  try {
    records = new Unpackr({
      structures: structures.map((keys) => keys.slice()),
      maxSharedStructures: SHARED_STRUCTURES,
      copyBuffers: true,
    }).unpack(payload);
  } catch (cause) {
    throw new ChannelProtocolError('undecodable record batch', { cause });
  }
  if (!Array.isArray(records)) throw new ChannelProtocolError('record batch is not an array');
  return records;
}
