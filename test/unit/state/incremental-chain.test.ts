import { describe, expect, it } from 'vitest';
import { IncrementalChain } from '../../../src/state/incremental-chain.js';
import type { ChunkHandle } from '../../../src/state/storage/chunk-handle.js';

const h = (checkpointId: number, n: number): ChunkHandle => ({
  chunkId: `${checkpointId}/${n}`,
  checkpointId,
  name: `kg-${n}`,
  size: 1,
  checksum: 'c',
  keyGroup: n,
});

describe('IncrementalChain', () => {
  it('is full until a persisted checkpoint is confirmed, then deltas share the chain in order', () => {
    const c = new IncrementalChain(10);
    const d1 = c.decide(undefined);
    expect(d1.mode).toBe('full');
    c.persisted(1, d1, [h(1, 0), h(1, 1)]);
    expect(c.decide(undefined).mode).toBe('full'); // not confirmed yet
    c.confirm(1);
    const d2 = c.decide(1);
    expect(d2).toMatchObject({ mode: 'delta', baseCheckpointId: 1, shared: [h(1, 0), h(1, 1)] });
    c.persisted(2, d2, [h(2, 1)]);
    c.confirm(2);
    expect(c.decide(2).shared).toEqual([h(1, 0), h(1, 1), h(2, 1)]);
  });

  it('a declined checkpoint never becomes a base: the next delta builds on the last confirmed', () => {
    const c = new IncrementalChain(10);
    const d1 = c.decide(undefined);
    c.persisted(1, d1, [h(1, 0)]);
    c.confirm(1);
    const d2 = c.decide(1);
    c.persisted(2, d2, [h(2, 0)]); // checkpoint 2 is declined: no confirm
    const d3 = c.decide(1);
    expect(d3).toMatchObject({ mode: 'delta', baseCheckpointId: 1, shared: [h(1, 0)] });
    c.persisted(3, d3, [h(3, 0)]);
    c.confirm(3);
    expect(c.decide(3).shared).toEqual([h(1, 0), h(3, 0)]);
    c.confirm(2); // a late, stale notification changes nothing
    expect(c.baseCheckpointId).toBe(3);
  });

  it('takes a full snapshot every fullEvery checkpoints, bounding the chain', () => {
    const c = new IncrementalChain(3);
    const modes: string[] = [];
    let base: number | undefined;
    for (let cp = 1; cp <= 7; cp++) {
      const d = c.decide(base);
      modes.push(d.mode);
      c.persisted(cp, d, [h(cp, 0)]);
      c.confirm(cp);
      base = cp;
      expect(c.decide(base).shared.length).toBeLessThanOrEqual(3);
    }
    expect(modes).toEqual(['full', 'delta', 'delta', 'full', 'delta', 'delta', 'full']);
  });

  it('is full when the backend is relative to another checkpoint (after restore) and after reset', () => {
    const c = new IncrementalChain(10);
    const d = c.decide(undefined);
    c.persisted(5, d, [h(5, 0)]);
    c.confirm(5);
    expect(c.decide(4).mode).toBe('full');
    c.reset();
    expect(c.decide(5).mode).toBe('full');
    expect(() => new IncrementalChain(0)).toThrow(RangeError);
  });

  it('rebase: the next snapshot is full, and a delta persisted over the old chain never becomes the base', () => {
    const c = new IncrementalChain(100);
    let base: number | undefined;
    for (let cp = 1; cp <= 3; cp++) {
      const d = c.decide(base);
      c.persisted(cp, d, [h(cp, 0)]);
      c.confirm(cp);
      base = cp;
    }
    // Checkpoint 4 (a delta over 1..3) is refused: too long a record. Checkpoint 5 was already
    // taken as a delta over the same chain before the re-base reached the task.
    const d4 = c.decide(3);
    expect(d4).toMatchObject({ mode: 'delta', shared: [h(1, 0), h(2, 0), h(3, 0)] });
    c.persisted(4, d4, [h(4, 0)]);
    const d5 = c.decide(3);
    c.persisted(5, d5, [h(5, 0)]);
    c.rebase();
    expect(c.baseCheckpointId).toBeUndefined();
    expect(c.decide(3).mode).toBe('full');
    c.confirm(5); // its delta completed after all: it is not a base (the chain starts over)
    expect(c.baseCheckpointId).toBeUndefined();
    const d6 = c.decide(5);
    expect(d6.mode).toBe('full');
    c.persisted(6, d6, [h(6, 0)]);
    c.confirm(6);
    expect(c.decide(6)).toMatchObject({ mode: 'delta', baseCheckpointId: 6, shared: [h(6, 0)], deltas: 1 });
  });
});
