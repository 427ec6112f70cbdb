/**
 * CRC-32 (IEEE 802.3, the zlib/PNG polynomial) of a byte array: the checksum of every stored
 * state chunk.
 *
 * Uses `node:zlib`'s native `crc32` when the running Node has it (20.15+, 22.2+); otherwise a
 * table-driven implementation (the package supports Node >= 20.10). Both give identical results.
 * Cost: native ≈ several GB/s; the fallback ≈ 0.5–1 GB/s, one table lookup per byte.
 */

import * as zlib from 'node:zlib';

type Crc32Fn = (data: Uint8Array) => number;

/** Read-only after construction: 256 precomputed remainders of the reflected polynomial 0xEDB88320. */
const TABLE: Uint32Array = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** Table-driven CRC-32; exported for tests that compare it with the native one. */
export function crc32Table(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const native = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

/** Which implementation {@link crc32} is on this runtime: `'native'` on Node 20.15+, 22.2+, 24. */
export const crc32Implementation: 'native' | 'table' = typeof native === 'function' ? 'native' : 'table';

/** CRC-32 of `data` as an unsigned 32-bit integer. */
export const crc32: Crc32Fn = crc32Implementation === 'native' ? (data) => native!(data) >>> 0 : crc32Table;
