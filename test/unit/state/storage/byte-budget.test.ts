import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../../../src/state/storage/index.js';

describe('ByteBudget', () => {
  it('admits in call order, never exceeding the limit except for one oversized request alone', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 100 }),
        fc.array(fc.integer({ min: 0, max: 150 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
        async (limit, requests, releaseOrder) => {
          const budget = new ByteBudget(limit);
          const admitted: number[] = [];
          const held: number[] = [];
          const pending = requests.map((bytes, i) =>
            budget.acquire(bytes).then(() => {
              admitted.push(i);
              held.push(i);
            }),
          );
          let step = 0;
          while (admitted.length < requests.length || held.length > 0) {
            // One macrotask turn runs every pending admission callback.
            await new Promise<void>((resolve) => setImmediate(resolve));
            const heldBytes = held.reduce((sum, i) => sum + requests[i], 0);
            expect(budget.heldBytes).toBe(heldBytes);
            // Over the limit only through a single (oversized) request holding bytes.
            expect(heldBytes <= limit || held.filter((i) => requests[i] > 0).length === 1).toBe(true);
            if (held.length === 0) continue;
            const [i] = held.splice(releaseOrder[step++ % releaseOrder.length] % held.length, 1);
            budget.release(requests[i]);
          }
          await Promise.all(pending);
          expect(admitted).toEqual(requests.map((_, i) => i));
          expect(budget.heldBytes).toBe(0);
        },
      ),
      { seed: 7, numRuns: 200 },
    );
  });

  it('makes a request wait while earlier bytes are held', async () => {
    const budget = new ByteBudget(10);
    await budget.acquire(8);
    let second = false;
    const waiting = budget.acquire(5).then(() => {
      second = true;
    });
    await Promise.resolve();
    expect(second).toBe(false);
    budget.release(8);
    await waiting;
    expect(second).toBe(true);
    expect(budget.heldBytes).toBe(5);
  });
});
