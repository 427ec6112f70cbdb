/**
 * ShapeCodec: the fast path of a channel's record batches. A batch whose records are all plain
 * objects of one shape — the same keys in the same order, with primitive values or plain objects
 * of one shape themselves (down to {@link MAX_SHAPE_DEPTH} levels) — or all primitives, bare or
 * each in an event-time envelope `[timestamp | null, record]`, is written as one shape header
 * (the key tree) followed by tagged values, by an encoder and a decoder generated for that shape
 * (named property loads and object literals, so V8 keeps both monomorphic). Values must be
 * numbers, strings, booleans, null or undefined. Any other batch — arrays inside records, class
 * instances, Dates, Maps, bigints, mixed shapes, a nested object that is null in some record —
 * makes {@link ShapeEncoder.encode} return `null`, and the batch goes through msgpack as before
 * (see record-codec.ts).
 *
 * Why: msgpackr with shared structures costs ~90 ns per small record to encode here and was the
 * producer's bottleneck (bench/channels). Measured on the channel bench's `{ key, value }`
 * records: see bench/README.md.
 *
 * Batch layout (little-endian):
 *   0xc1                      SHAPE_BATCH_MARK (a byte msgpack never uses)
 *   u8 kind                   bit 0 (KIND_OBJECT): objects, else primitives;
 *                             bit 1 (KIND_ENVELOPE): each record is an event-time envelope
 *                             `[timestamp | null, record]` (worker/outputs/timestamped-record-writer.ts)
 *   key tree (objects only)   u16 keyCount, then per key: u16 byteLength, utf8 key, u8 nested
 *                             (1: the key's own key tree follows)
 *   u32 recordCount
 *   recordCount × ([envelope: the timestamp value], then one value for a primitive, or the
 *   object's primitive values depth first in key order)
 * A value is a tag byte and its payload:
 *   I32 (i32) · F64 (f64) · ASCII (u8 length, bytes) · UTF8 (u32 length, bytes) · TRUE · FALSE ·
 *   NULL · UNDEFINED
 *
 * Exactness: numbers keep their bits (-0, NaN, ±Infinity as f64; i32 only for integers other
 * than -0), strings their code units (a string with a lone surrogate sends its batch to
 * msgpack), `undefined` stays `undefined`, key order is kept. Decoded strings and values never
 * alias the payload (which may be shared memory). (msgpack, for the batches it gets, turns -0
 * into 0 and lone surrogates in keys into U+FFFD, as it always did.)
 *
 * Why one file: the encoder and decoder generators must agree byte for byte on the layout described
 * above; they sit together with the layout so that a change to one is made to the other in the same
 * place.
 */

import { ChannelProtocolError } from '../errors.js';

/** First byte of a shape batch. 0xc1 is "never used" in msgpack, so it cannot start a msgpack batch. */
export const SHAPE_BATCH_MARK = 0xc1;

/** Kind bits: records are plain objects (else primitives); records are event-time envelopes. */
const KIND_OBJECT = 1;
const KIND_ENVELOPE = 2;

const T_I32 = 1;
const T_F64 = 2;
const T_ASCII = 3;
const T_UTF8 = 4;
const T_TRUE = 5;
const T_FALSE = 6;
const T_NULL = 7;
const T_UNDEFINED = 8;

/** Strings up to this length are tried as ASCII inline (one length byte). */
const ASCII_MAX = 255;
/** Shapes one endpoint generates code for; further shapes take the msgpack path. */
export const MAX_SHAPES = 64;
/** Keys per shape, nested ones included, handled by generated code; wider shapes take msgpack. */
export const MAX_SHAPE_KEYS = 64;
/** An encoder buffer grown above this is dropped before the next batch. */
const RETAINED_BUFFER_BYTES = 4 * 1024 * 1024;
/** After a batch that did not fit its first record's shape, this many batches skip the fast path. */
const MISMATCH_BACKOFF_BATCHES = 16;

/** The encoder's growable output buffer and position, shared with generated code. */
class Out {
  buf: Buffer = Buffer.allocUnsafeSlow(64 * 1024);
  dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  p = 0;

  /** Back to a small buffer after a batch of huge records, so one of them does not pin memory. */
  reset(): void {
    this.buf = Buffer.allocUnsafeSlow(64 * 1024);
    this.dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.p = 0;
  }

  ensure(extra: number): void {
    if (this.p + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.p + extra) size *= 2;
    const next = Buffer.allocUnsafeSlow(size);
    next.set(this.buf.subarray(0, this.p));
    this.buf = next;
    this.dv = new DataView(next.buffer, next.byteOffset, next.byteLength);
  }
}

/** Helpers generated encoders call for the less common value types. */
interface EncodeHelpers {
  readonly out: Out;
  /** Writes a value at out.p (tag included) and advances it; false for a value no tag covers. */
  writeSlow(value: unknown): boolean;
}

type GeneratedEncoder = (records: readonly unknown[], n: number, h: EncodeHelpers) => boolean;

/** A shape's generated encoder and the batch header that names the shape. */
interface EncoderShape {
  readonly fn: GeneratedEncoder;
  readonly header: Uint8Array;
}
type GeneratedDecoder = (
  buf: Uint8Array,
  dv: DataView,
  p: number,
  n: number,
  out: unknown[],
  h: DecodeHelpers,
) => number;

/**
 * Producer side. Not thread-safe; one per channel writer. The returned bytes are a view of the
 * encoder's buffer, valid until the next call.
 */
export class ShapeEncoder {
  readonly #out = new Out();
  readonly #helpers: EncodeHelpers;
  /** By kind and key list. */
  readonly #shapes = new Map<string, EncoderShape>();
  /** The shape of the previous batch: tried first, since its encoder checks every record anyway. */
  #last: EncoderShape | null = null;
  #backoff = 0;
  /** Counters: batches encoded by shape, and batches that fell back to msgpack. */
  readonly stats = { shapeBatches: 0, fallbacks: 0 };

  constructor() {
    const out = this.#out;
    this.#helpers = { out, writeSlow: (v) => writeValueSlow(out, v) };
  }

  /** Encodes `records` as a shape batch, or returns null when they do not share one shape. */
  encode(records: readonly unknown[]): Uint8Array | null {
    const n = records.length;
    if (n === 0) return null;
    if (this.#backoff > 0) {
      this.#backoff--;
      this.stats.fallbacks++;
      return null;
    }
    if (this.#last !== null && this.#run(this.#last, records)) {
      this.stats.shapeBatches++;
      return this.#result();
    }
    let first = records[0];
    let kind = 0;
    if (Array.isArray(first)) {
      // An event-time envelope `[timestamp | null, record]`; any other array takes msgpack.
      const ts = first[0];
      if (first.length !== 2 || (ts !== null && typeof ts !== 'number')) return this.#miss();
      kind |= KIND_ENVELOPE;
      first = first[1];
    }
    let node: ShapeNode | null = null;
    if (isPlainObject(first)) {
      kind |= KIND_OBJECT;
      node = inferShape(first, 1, { keys: 0 });
      // A record without values (`{}`, `{ a: {} }`) cannot have its count checked against the
      // payload's size on decode.
      if (node === null || (leafCount(node) === 0 && (kind & KIND_ENVELOPE) === 0)) return this.#miss();
    } else if (first !== null && typeof first === 'object') {
      return this.#miss();
    }
    const id = `${kind}:${node === null ? '' : shapeId(node)}`;
    let shape = this.#shapes.get(id);
    if (shape === undefined) {
      if (this.#shapes.size >= MAX_SHAPES || (node !== null && !keysFit(node))) return this.#miss();
      shape = { fn: generateEncoder(kind, node), header: shapeHeader(kind, node) };
      this.#shapes.set(id, shape);
    }
    if (!this.#run(shape, records)) return this.#miss();
    this.#last = shape;
    this.stats.shapeBatches++;
    return this.#result();
  }

  /** Writes the header and the records with `shape`'s encoder; false when a record does not fit. */
  #run(shape: EncoderShape, records: readonly unknown[]): boolean {
    const out = this.#out;
    if (out.buf.length > RETAINED_BUFFER_BYTES) out.reset();
    const header = shape.header;
    out.p = 0;
    out.ensure(header.length + 4);
    out.buf.set(header, 0);
    out.p = header.length;
    out.dv.setUint32(out.p, records.length, true);
    out.p += 4;
    return shape.fn(records, records.length, this.#helpers);
  }

  /** The encoded batch: a plain Uint8Array view (not a Buffer, whose `slice` would not copy). */
  #result(): Uint8Array {
    const out = this.#out;
    return new Uint8Array(out.buf.buffer, out.buf.byteOffset, out.p);
  }

  #miss(): null {
    this.stats.fallbacks++;
    this.#backoff = MISMATCH_BACKOFF_BATCHES;
    return null;
  }
}

/** Helpers generated decoders call for the less common value types. */
interface DecodeHelpers {
  /** Position after the value read by {@link readSlow}. */
  p: number;
  ascii(buf: Uint8Array, p: number, len: number): string;
  /** Throws: a value at `p` runs past the payload. */
  truncated(p: number): never;
  readSlow(tag: number, buf: Uint8Array, dv: DataView, p: number): unknown;
}

/** Consumer side. One per channel reader. */
export class ShapeDecoder {
  readonly #helpers: DecodeHelpers;
  readonly #decoders = new Map<string, GeneratedDecoder>();
  #lastHeader: Uint8Array = new Uint8Array(0);
  #lastDecoder: GeneratedDecoder | null = null;

  constructor() {
    const helpers: DecodeHelpers = {
      p: 0,
      ascii: readAscii,
      truncated: (p) => {
        throw new ChannelProtocolError(`shape batch: the value at byte ${p} runs past its end`);
      },
      readSlow: (tag, buf, dv, p) => {
        const r = readValueSlow(tag, buf, dv, p);
        helpers.p = r.p;
        return r.value;
      },
    };
    this.#helpers = helpers;
  }

  /** Decodes a shape batch (`payload[0] === SHAPE_BATCH_MARK`). Nothing returned aliases `payload`. */
  decode(payload: Uint8Array): unknown[] {
    try {
      const dv = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
      const { end: headerEnd, leaves } = walkHeader(payload, dv);
      const decoder = this.#decoderFor(payload, headerEnd);
      const n = dv.getUint32(headerEnd, true);
      // Every value takes at least its tag byte: a count the payload cannot hold is damage (and
      // must not allocate an array of that size).
      const values = ((payload[1] & KIND_ENVELOPE) !== 0 ? 1 : 0) + leaves;
      if (values === 0 || n * values > payload.length - headerEnd - 4) {
        throw new ChannelProtocolError(`shape batch: ${n} records cannot fit in ${payload.length} bytes`);
      }
      const out = new Array<unknown>(n);
      const end = decoder(payload, dv, headerEnd + 4, n, out, this.#helpers);
      if (end !== payload.length) {
        throw new ChannelProtocolError(`shape batch: ${payload.length - end} bytes after its last record`);
      }
      return out;
    } catch (e) {
      if (e instanceof ChannelProtocolError) throw e;
      throw new ChannelProtocolError('undecodable shape batch', { cause: e });
    }
  }

  #decoderFor(payload: Uint8Array, headerEnd: number): GeneratedDecoder {
    const last = this.#lastHeader;
    if (this.#lastDecoder !== null && last.length === headerEnd) {
      let same = true;
      for (let i = 0; i < headerEnd; i++) {
        if (last[i] !== payload[i]) {
          same = false;
          break;
        }
      }
      if (same) return this.#lastDecoder;
    }
    // A copy: `payload` may be a Buffer (whose `slice` is a view) over the ring's shared memory.
    const header = Uint8Array.prototype.slice.call(payload, 0, headerEnd);
    const id = Buffer.from(header.buffer, header.byteOffset, header.length).toString('latin1');
    let decoder = this.#decoders.get(id);
    if (decoder === undefined) {
      if (this.#decoders.size >= MAX_SHAPES * 2) this.#decoders.clear();
      const kind = payload[1];
      decoder = generateDecoder(kind, (kind & KIND_OBJECT) === 0 ? null : parseShape(header));
      this.#decoders.set(id, decoder);
    }
    this.#lastHeader = header;
    this.#lastDecoder = decoder;
    return decoder;
  }
}

// ---------------------------------------------------------------------------------- headers

/**
 * The key tree of an object shape: `children[i]` is the shape of the plain object under
 * `keys[i]`, or null when that value is a primitive.
 */
export interface ShapeNode {
  readonly keys: readonly string[];
  readonly children: readonly (ShapeNode | null)[];
}

/** How deep plain objects nest inside a shape (the record itself is depth 1). */
export const MAX_SHAPE_DEPTH = 4;

/**
 * The shape of `obj` and of the plain objects in it (down to {@link MAX_SHAPE_DEPTH}; deeper
 * ones are values no tag covers, so their batch takes msgpack). Null when the shape has more
 * than {@link MAX_SHAPE_KEYS} keys in all.
 */
function inferShape(obj: Record<string, unknown>, depth: number, budget: { keys: number }): ShapeNode | null {
  const keys: string[] = [];
  const children: (ShapeNode | null)[] = [];
  for (const k in obj) {
    if (++budget.keys > MAX_SHAPE_KEYS) return null;
    keys.push(k);
    const v = obj[k];
    if (depth < MAX_SHAPE_DEPTH && isPlainObject(v)) {
      const child = inferShape(v, depth + 1, budget);
      if (child === null) return null;
      children.push(child);
    } else {
      children.push(null);
    }
  }
  return { keys, children };
}

/** Primitive values per record of a shape. */
function leafCount(node: ShapeNode): number {
  let n = 0;
  for (const c of node.children) n += c === null ? 1 : leafCount(c);
  return n;
}

/** A cache key for a shape (keys cannot collide with the separators: JSON escapes them). */
function shapeId(node: ShapeNode): string {
  return JSON.stringify(node);
}

/** `[SHAPE_BATCH_MARK, kind]`, then for objects the key tree (see {@link walkHeader}). */
function shapeHeader(kind: number, node: ShapeNode | null): Uint8Array {
  const parts: Buffer[] = [Buffer.from([SHAPE_BATCH_MARK, kind])];
  const u16 = (n: number) => {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(n);
    return b;
  };
  const write = (n: ShapeNode) => {
    parts.push(u16(n.keys.length));
    n.keys.forEach((k, i) => {
      const bytes = Buffer.from(k, 'utf8');
      const child = n.children[i];
      parts.push(u16(bytes.length), bytes, Buffer.from([child === null ? 0 : 1]));
      if (child !== null) write(child);
    });
  };
  if (node !== null) write(node);
  const header = Buffer.concat(parts);
  return new Uint8Array(header.buffer, header.byteOffset, header.length);
}

/**
 * Walks a batch's header: object shapes are a key tree, each node `u16 keyCount` then per key
 * `u16 byteLength, utf8 key, u8 nested` and, when nested is 1, the child node. Returns where the
 * header ends and the primitive values per record. Bounds: {@link MAX_SHAPE_KEYS} keys in all,
 * {@link MAX_SHAPE_DEPTH} levels; reading past the payload throws (a RangeError, wrapped by the
 * caller).
 */
function walkHeader(payload: Uint8Array, dv: DataView): { end: number; leaves: number } {
  const kind = payload[1];
  if (kind > (KIND_OBJECT | KIND_ENVELOPE))
    throw new ChannelProtocolError(`shape batch of unknown kind ${kind}`);
  if ((kind & KIND_OBJECT) === 0) return { end: 2, leaves: 1 };
  let p = 2;
  let keys = 0;
  let leaves = 0;
  const node = (depth: number): void => {
    if (depth > MAX_SHAPE_DEPTH) throw new ChannelProtocolError('shape batch header nested too deep');
    const count = dv.getUint16(p, true);
    p += 2;
    keys += count;
    if (keys > MAX_SHAPE_KEYS) throw new ChannelProtocolError(`shape batch with over ${MAX_SHAPE_KEYS} keys`);
    for (let i = 0; i < count; i++) {
      p += 2 + dv.getUint16(p, true);
      const nested = dv.getUint8(p++);
      if (nested === 1) node(depth + 1);
      else if (nested === 0) leaves++;
      else throw new ChannelProtocolError(`shape batch header: nested flag ${nested}`);
    }
  };
  node(1);
  return { end: p, leaves };
}

/** The key tree of a header that {@link walkHeader} accepted. */
function parseShape(header: Uint8Array): ShapeNode {
  const b = Buffer.from(header.buffer, header.byteOffset, header.length);
  let p = 2;
  const node = (): ShapeNode => {
    const count = b.readUInt16LE(p);
    p += 2;
    const keys: string[] = [];
    const children: (ShapeNode | null)[] = [];
    for (let i = 0; i < count; i++) {
      const len = b.readUInt16LE(p);
      const key = b.toString('utf8', p + 2, p + 2 + len);
      p += 2 + len;
      if (key === '__proto__' || keys.includes(key)) {
        throw new ChannelProtocolError(
          `shape batch header with key ${JSON.stringify(key)} not allowed or repeated`,
        );
      }
      keys.push(key);
      children.push(b[p++] === 1 ? node() : null);
    }
    return { keys, children };
  };
  return node();
}

// ---------------------------------------------------------------------------------- values

const OBJECT_PROTOTYPE = Object.prototype;

/** An object literal's kind: its prototype is Object.prototype (so for-in sees own keys only). */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === OBJECT_PROTOTYPE;
}

/**
 * Keys the header can carry exactly: UTF-8 without loss (no lone surrogates), at most 65535
 * bytes each, and none that an object literal would treat specially (`__proto__`).
 */
function keysFit(node: ShapeNode): boolean {
  for (const k of node.keys) {
    if (k === '__proto__' || !isWellFormed(k) || Buffer.byteLength(k, 'utf8') > 0xffff) return false;
  }
  return node.children.every((c) => c === null || keysFit(c));
}

/**
 * The generated code for writing one value held in variable `v` (the common tags inline: i32,
 * f64, short ASCII strings, booleans, null; everything else through `h.writeSlow`). Uses the locals
 * `buf`, `dv`, `p` of the generated function and reloads them after a helper call.
 */
function writeValueCode(v: string): string {
  return `
    if (typeof ${v} === 'number') {
      if (p + 9 > buf.length) { out.p = p; out.ensure(9); buf = out.buf; dv = out.dv; }
      if ((${v} | 0) === ${v} && (${v} !== 0 || 1 / ${v} > 0)) { buf[p] = ${T_I32}; dv.setInt32(p + 1, ${v}, true); p += 5; }
      else { buf[p] = ${T_F64}; dv.setFloat64(p + 1, ${v}, true); p += 9; }
    } else if (typeof ${v} === 'string' && ${v}.length <= ${ASCII_MAX}) {
      const len = ${v}.length;
      if (p + len + 2 > buf.length) { out.p = p; out.ensure(len + 2); buf = out.buf; dv = out.dv; }
      let ok = true;
      for (let j = 0; j < len; j++) {
        const c = ${v}.charCodeAt(j);
        if (c > 0x7f) { ok = false; break; }
        buf[p + 2 + j] = c;
      }
      if (ok) { buf[p] = ${T_ASCII}; buf[p + 1] = len; p += len + 2; }
      else { out.p = p; if (!h.writeSlow(${v})) return false; buf = out.buf; dv = out.dv; p = out.p; }
    } else if (typeof ${v} === 'boolean') {
      if (p + 1 > buf.length) { out.p = p; out.ensure(1); buf = out.buf; dv = out.dv; }
      buf[p++] = ${v} ? ${T_TRUE} : ${T_FALSE};
    } else if (${v} === null) {
      if (p + 1 > buf.length) { out.p = p; out.ensure(1); buf = out.buf; dv = out.dv; }
      buf[p++] = ${T_NULL};
    }
    else { out.p = p; if (!h.writeSlow(${v})) return false; buf = out.buf; dv = out.dv; p = out.p; }`;
}

/**
 * The encoder of one kind and shape: per record, the shape check (an envelope of two with a
 * number or null timestamp; a plain object — and plain objects inside it — whose own enumerable
 * keys are exactly the shape's, in order; or a primitive), then the values depth first. Returns
 * false at the first record that does not fit.
 */
function generateEncoder(kind: number, node: ShapeNode | null): GeneratedEncoder {
  const lines: string[] = [];
  const keySets: (readonly string[])[] = [];
  let vars = 0;
  // Checks that `obj` has exactly `n`'s keys, then writes its values (recursing into children).
  const emitObject = (obj: string, n: ShapeNode) => {
    const set = keySets.length;
    keySets.push(n.keys);
    const count = n.keys.length;
    // `__proto__` reads the prototype as fast as `constructor` (Object.getPrototypeOf costs ~11 ns
    // here); an own `__proto__` property only makes the check fail, never pass wrongly.
    lines.push(
      `  if (typeof ${obj} !== 'object' || ${obj} === null || ${obj}.__proto__ !== OBJECT_PROTOTYPE) return false;`,
    );
    const k = `k${set}`;
    lines.push(`  let ${k} = 0;`);
    lines.push(`  for (const key in ${obj}) {`);
    lines.push(`    if (${k} === ${count} || key !== K${set}[${k}]) return false;`);
    lines.push(`    ${k}++;`);
    lines.push('  }');
    lines.push(`  if (${k} !== ${count}) return false;`);
    n.keys.forEach((key, i) => {
      const v = `v${vars++}`;
      lines.push(`  const ${v} = ${obj}[${JSON.stringify(key)}];`);
      const child = n.children[i];
      if (child === null) lines.push(writeValueCode(v));
      else emitObject(v, child);
    });
  };
  lines.push('const out = h.out;');
  lines.push('let buf = out.buf, dv = out.dv, p = out.p;');
  lines.push('for (let i = 0; i < n; i++) {');
  if ((kind & KIND_ENVELOPE) !== 0) {
    lines.push('  const e = records[i];');
    lines.push('  if (!Array.isArray(e) || e.length !== 2) return false;');
    lines.push('  const ts = e[0];');
    lines.push(`  if (ts !== null && typeof ts !== 'number') return false;`);
    lines.push(writeValueCode('ts'));
    lines.push('  const r = e[1];');
  } else {
    lines.push('  const r = records[i];');
  }
  if (node === null) {
    lines.push(`  if (typeof r === 'object' && r !== null) return false;`);
    lines.push(writeValueCode('r'));
  } else {
    emitObject('r', node);
  }
  lines.push('}');
  lines.push('out.p = p;');
  lines.push('return true;');
  // One closure constant per key set (`K0`, `K1`, …): cheaper than indexing a shared array.
  const constants = keySets.map((_, i) => `const K${i} = KEYS[${i}];`).join('\n');
  const factory = new Function(
    'KEYS',
    'OBJECT_PROTOTYPE',
    `${constants}\nreturn function encodeShape(records, n, h) {\n${lines.join('\n')}\n};`,
  );
  return factory(keySets, OBJECT_PROTOTYPE) as GeneratedEncoder;
}

/** Writes a value (tag and payload) at `out.p`; false, writing nothing, when no tag covers it. */
function writeValueSlow(out: Out, v: unknown): boolean {
  switch (typeof v) {
    case 'number':
      out.ensure(9);
      if ((v | 0) === v && (v !== 0 || 1 / v > 0)) {
        out.buf[out.p] = T_I32;
        out.dv.setInt32(out.p + 1, v, true);
        out.p += 5;
      } else {
        out.buf[out.p] = T_F64;
        out.dv.setFloat64(out.p + 1, v, true);
        out.p += 9;
      }
      return true;
    case 'string':
      if (isWellFormed(v)) {
        out.ensure(5 + v.length * 3);
        const written = out.buf.write(v, out.p + 5, 'utf8');
        out.buf[out.p] = T_UTF8;
        out.dv.setUint32(out.p + 1, written, true);
        out.p += 5 + written;
        return true;
      }
      return false; // lone surrogates: msgpack keeps them as it always did
    case 'boolean':
      out.ensure(1);
      out.buf[out.p++] = v ? T_TRUE : T_FALSE;
      return true;
    case 'undefined':
      out.ensure(1);
      out.buf[out.p++] = T_UNDEFINED;
      return true;
    case 'object':
      if (v === null) {
        out.ensure(1);
        out.buf[out.p++] = T_NULL;
        return true;
      }
      return false;
    default:
      return false;
  }
}

const hasIsWellFormed = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function';

/** No lone surrogates (UTF-8 would replace them). */
function isWellFormed(s: string): boolean {
  if (hasIsWellFormed) return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

// ---------------------------------------------------------------------------------- decoding

/** The generated code reading one value into variable `v` (every tag but UTF-8 and undefined inline). */
function readValueCode(v: string): string {
  return `
    t = buf[p];
    if (t === ${T_I32}) { ${v} = dv.getInt32(p + 1, true); p += 5; }
    else if (t === ${T_F64}) { ${v} = dv.getFloat64(p + 1, true); p += 9; }
    else if (t === ${T_ASCII}) {
      const len = buf[p + 1];
      // Written as !(…<=…) so that a missing length byte (undefined) fails too.
      if (!(p + 2 + len <= buf.length)) h.truncated(p);
      ${v} = h.ascii(buf, p + 2, len);
      p += len + 2;
    }
    else if (t === ${T_TRUE}) { ${v} = true; p++; }
    else if (t === ${T_FALSE}) { ${v} = false; p++; }
    else if (t === ${T_NULL}) { ${v} = null; p++; }
    else { ${v} = h.readSlow(t, buf, dv, p); p = h.p; }`;
}

/** The decoder of one kind and shape (the inverse of {@link generateEncoder}). */
function generateDecoder(kind: number, node: ShapeNode | null): GeneratedDecoder {
  const lines: string[] = [];
  let vars = 0;
  // Reads the values of `n` depth first; returns the object literal that rebuilds it.
  const emitObject = (n: ShapeNode): string => {
    const fields = n.keys.map((key, i) => {
      const child = n.children[i];
      if (child !== null) return `${JSON.stringify(key)}: ${emitObject(child)}`;
      const v = `v${vars++}`;
      lines.push(`  let ${v};`);
      lines.push(readValueCode(v));
      return `${JSON.stringify(key)}: ${v}`;
    });
    return `{ ${fields.join(', ')} }`;
  };
  lines.push('let t;');
  lines.push('for (let i = 0; i < n; i++) {');
  const envelope = (kind & KIND_ENVELOPE) !== 0;
  if (envelope) {
    lines.push('  let ts;');
    lines.push(readValueCode('ts'));
  }
  let record: string;
  if (node === null) {
    lines.push('  let r;');
    lines.push(readValueCode('r'));
    record = 'r';
  } else {
    // Values are read into variables first, in wire order; the literal only assembles them.
    record = emitObject(node);
  }
  lines.push(`  out[i] = ${envelope ? `[ts, ${record}]` : record};`);
  lines.push('}');
  lines.push('return p;');
  return new Function('buf', 'dv', 'p', 'n', 'out', 'h', lines.join('\n')) as GeneratedDecoder;
}

const fromCharCode = String.fromCharCode;

/** A fresh string from `len` ASCII bytes at `p` (never a view of `buf`). */
function readAscii(buf: Uint8Array, p: number, len: number): string {
  switch (len) {
    case 0:
      return '';
    case 1:
      return fromCharCode(buf[p]);
    case 2:
      return fromCharCode(buf[p], buf[p + 1]);
    case 3:
      return fromCharCode(buf[p], buf[p + 1], buf[p + 2]);
    case 4:
      return fromCharCode(buf[p], buf[p + 1], buf[p + 2], buf[p + 3]);
    case 5:
      return fromCharCode(buf[p], buf[p + 1], buf[p + 2], buf[p + 3], buf[p + 4]);
    case 6:
      return fromCharCode(buf[p], buf[p + 1], buf[p + 2], buf[p + 3], buf[p + 4], buf[p + 5]);
    case 7:
      return fromCharCode(buf[p], buf[p + 1], buf[p + 2], buf[p + 3], buf[p + 4], buf[p + 5], buf[p + 6]);
    case 8:
      return fromCharCode(
        buf[p],
        buf[p + 1],
        buf[p + 2],
        buf[p + 3],
        buf[p + 4],
        buf[p + 5],
        buf[p + 6],
        buf[p + 7],
      );
    default:
      if (len <= 32) {
        let s = '';
        for (let i = 0; i < len; i++) s += fromCharCode(buf[p + i]);
        return s;
      }
      return Buffer.from(buf.buffer, buf.byteOffset + p, len).toString('latin1');
  }
}

function readValueSlow(tag: number, buf: Uint8Array, dv: DataView, p: number): { value: unknown; p: number } {
  switch (tag) {
    case T_I32:
      return { value: dv.getInt32(p + 1, true), p: p + 5 };
    case T_F64:
      return { value: dv.getFloat64(p + 1, true), p: p + 9 };
    case T_ASCII: {
      const len = buf[p + 1];
      if (!(p + 2 + len <= buf.length)) throw new ChannelProtocolError('shape batch: string past its end');
      return { value: readAscii(buf, p + 2, len), p: p + 2 + len };
    }
    case T_UTF8: {
      const len = dv.getUint32(p + 1, true);
      const start = p + 5;
      if (start + len > buf.length) throw new ChannelProtocolError('shape batch: string past its end');
      const value = Buffer.from(buf.buffer, buf.byteOffset + start, len).toString('utf8');
      return { value, p: start + len };
    }
    case T_TRUE:
      return { value: true, p: p + 1 };
    case T_FALSE:
      return { value: false, p: p + 1 };
    case T_NULL:
      return { value: null, p: p + 1 };
    case T_UNDEFINED:
      return { value: undefined, p: p + 1 };
    default:
      throw new ChannelProtocolError(`shape batch: unknown value tag ${tag} at byte ${p}`);
  }
}
