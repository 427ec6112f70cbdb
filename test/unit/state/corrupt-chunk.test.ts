import { describe, expect, it } from 'vitest';
import { CorruptStateError, KeyGroupCorruptError } from '../../../src/errors.js';
import { crc32, crc32Implementation, crc32Table } from '../../../src/state/crc32.js';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';

async function serialized() {
  const b = new HeapKeyedStateBackend({ maxParallelism: 8, keyGroupRange: { start: 0, end: 7 } });
  for (let k = 0; k < 100; k++) {
    b.setCurrentKey(k);
    b.value<{ k: number }>('v').update({ k });
  }
  const s = b.snapshot(1);
  const out = await s.encode();
  s.release();
  return out;
}

const fresh = () => new HeapKeyedStateBackend({ maxParallelism: 8, keyGroupRange: { start: 0, end: 7 } });

describe('corrupt chunks', () => {
  it('a flipped bit anywhere fails with a CorruptStateError naming the key group', async () => {
    const { chunks } = await serialized();
    const victim = chunks[2];
    for (const at of [0, 5, 12, 30, victim.bytes.length - 1]) {
      const bytes = victim.bytes.slice();
      bytes[at] ^= 0x10;
      const bad = chunks.map((c) => (c === victim ? { keyGroup: c.keyGroup, bytes } : c));
      let err: unknown;
      try {
        fresh().restore(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CorruptStateError);
      expect(err).toBeInstanceOf(KeyGroupCorruptError);
      expect((err as KeyGroupCorruptError).keyGroup).toBe(victim.keyGroup);
      expect((err as Error).message).toContain(`key group ${victim.keyGroup}`);
      expect((err as KeyGroupCorruptError).failureKind).toBe('task');
    }
  });

  it('truncated chunks and chunks filed under another key group are corrupt', async () => {
    const { chunks } = await serialized();
    const [a, b] = chunks;
    expect(() => fresh().restore([{ keyGroup: a.keyGroup, bytes: a.bytes.subarray(0, 10) }])).toThrow(
      KeyGroupCorruptError,
    );
    expect(() => fresh().restore([{ keyGroup: b.keyGroup, bytes: a.bytes }])).toThrow(
      new RegExp(`key group ${b.keyGroup} is corrupt: chunk holds key group ${a.keyGroup}`),
    );
  });

  it('the native and the table CRC-32 agree with the reference value', () => {
    const check = new TextEncoder().encode('123456789');
    expect(crc32(check)).toBe(0xcbf43926);
    expect(crc32Table(check)).toBe(0xcbf43926);
    const random = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7919) & 0xff);
    expect(crc32Table(random)).toBe(crc32(random));
    expect(crc32Table(new Uint8Array(0))).toBe(0);
  });

  it("uses the runtime's zlib.crc32 where it exists, the table only without it", async () => {
    const zlib = await import('node:zlib');
    expect(crc32Implementation).toBe(
      typeof (zlib as { crc32?: unknown }).crc32 === 'function' ? 'native' : 'table',
    );
  });
});
