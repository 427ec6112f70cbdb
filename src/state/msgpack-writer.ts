/** A small msgpack writer over a growable byte buffer (see {@link ByteWriter}). */

/**
 * A growable buffer with msgpack writers for arrays headers, strings and numbers: the subset the
 * number-slot paths write themselves (`number-section-writer.ts`, `heap/number-slots.ts`). Bytes
 * read back with msgpackr as the same values (`-0`, NaN and ±Infinity as float64).
 *
 * Growing never writes into the old buffer: it allocates a bigger one and copies, so a view of
 * bytes written earlier stays valid (the number slots' key arenas rely on this).
 */
export class ByteWriter {
  buf: Uint8Array;
  view: DataView;
  p = 0;

  constructor(capacity = 1 << 16) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
  }

  ensure(n: number): void {
    if (this.p + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.p + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.p));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.p);
    this.p += b.length;
  }

  arrayHeader(n: number): void {
    this.ensure(5);
    const b = this.buf;
    if (n < 16) b[this.p++] = 0x90 | n;
    else if (n < 0x10000) {
      b[this.p] = 0xdc;
      this.view.setUint16(this.p + 1, n);
      this.p += 3;
    } else {
      b[this.p] = 0xdd;
      this.view.setUint32(this.p + 1, n);
      this.p += 5;
    }
  }

  string(s: string): void {
    const len = s.length;
    if (len < 32) {
      // Common case: a short ASCII key, one byte per char.
      this.ensure(len + 1);
      const b = this.buf;
      const start = this.p;
      let p = start + 1;
      let i = 0;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        b[p++] = c;
      }
      if (i === len) {
        b[start] = 0xa0 | len;
        this.p = p;
        return;
      }
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.ensure(n + 5);
    const b = this.buf;
    let p = this.p;
    if (n < 32) b[p++] = 0xa0 | n;
    else if (n < 0x100) {
      b[p++] = 0xd9;
      b[p++] = n;
    } else if (n < 0x10000) {
      b[p] = 0xda;
      this.view.setUint16(p + 1, n);
      p += 3;
    } else {
      b[p] = 0xdb;
      this.view.setUint32(p + 1, n);
      p += 5;
    }
    const written = Buffer.from(b.buffer, b.byteOffset, b.byteLength).write(s, p, 'utf8');
    this.p = p + written;
  }

  number(v: number): void {
    this.ensure(9);
    const b = this.buf;
    const p = this.p;
    if (Number.isInteger(v) && (v !== 0 || 1 / v > 0)) {
      if (v >= 0) {
        if (v < 0x80) {
          b[p] = v;
          this.p = p + 1;
          return;
        }
        if (v < 0x100) {
          b[p] = 0xcc;
          b[p + 1] = v;
          this.p = p + 2;
          return;
        }
        if (v < 0x10000) {
          b[p] = 0xcd;
          this.view.setUint16(p + 1, v);
          this.p = p + 3;
          return;
        }
        if (v < 0x100000000) {
          b[p] = 0xce;
          this.view.setUint32(p + 1, v);
          this.p = p + 5;
          return;
        }
      } else {
        if (v >= -32) {
          b[p] = v & 0xff;
          this.p = p + 1;
          return;
        }
        if (v >= -0x80) {
          b[p] = 0xd0;
          this.view.setInt8(p + 1, v);
          this.p = p + 2;
          return;
        }
        if (v >= -0x8000) {
          b[p] = 0xd1;
          this.view.setInt16(p + 1, v);
          this.p = p + 3;
          return;
        }
        if (v >= -0x80000000) {
          b[p] = 0xd2;
          this.view.setInt32(p + 1, v);
          this.p = p + 5;
          return;
        }
      }
    }
    // Fractions, −0, NaN, ±Infinity and integers beyond 32 bits: float64, exact.
    b[p] = 0xcb;
    this.view.setFloat64(p + 1, v);
    this.p = p + 9;
  }
}
