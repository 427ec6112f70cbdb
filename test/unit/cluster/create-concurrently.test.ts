import { describe, expect, it } from 'vitest';
import { CREATE_ATTEMPTS, createConcurrently } from '../../../src/cluster/cluster-connection.js';

/** A create that is refused with `codes` in turn, then succeeds; it counts its calls. */
function scripted(codes: (number | undefined)[]): { create: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    create: async () => {
      const code = codes[calls++];
      if (calls > codes.length) return 'bucket';
      throw Object.assign(new Error(`refused ${code}`), { code });
    },
    calls: () => calls,
  };
}

const noPause = async (): Promise<void> => undefined;

describe('createConcurrently (several members create the same bucket at once)', () => {
  it('retries the refusals a concurrent create causes and returns the bucket', async () => {
    const s = scripted([10065, 10058]);
    const pauses: number[] = [];
    await expect(createConcurrently(s.create, async (a) => void pauses.push(a))).resolves.toBe('bucket');
    expect(s.calls()).toBe(3);
    expect(pauses).toEqual([1, 2]);
  });

  it('throws any other refusal at once', async () => {
    const s = scripted([10071]);
    await expect(createConcurrently(s.create, noPause)).rejects.toMatchObject({ code: 10071 });
    expect(s.calls()).toBe(1);
    const plain = scripted([undefined]);
    await expect(createConcurrently(plain.create, noPause)).rejects.toThrow('refused undefined');
    expect(plain.calls()).toBe(1);
  });

  it('gives up after CREATE_ATTEMPTS refusals and throws the last one', async () => {
    const s = scripted(Array.from({ length: CREATE_ATTEMPTS }, () => 10065));
    await expect(createConcurrently(s.create, noPause)).rejects.toMatchObject({ code: 10065 });
    expect(s.calls()).toBe(CREATE_ATTEMPTS);
  });
});
