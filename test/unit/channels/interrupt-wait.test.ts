import { describe, expect, test } from 'vitest';
import { channels, drain } from './helpers.js';

describe('ChannelWriter.interruptWait', () => {
  test('a pending waitForCapacity returns while still backlogged, and the next one waits again', async () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 8 });
    const w = writers[0];
    for (let i = 0; !w.backlogged; i++) w.write('x'.repeat(200) + i); // nobody reads: the ring fills
    let settled = false;
    const waiting = w.waitForCapacity().then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false); // parked: the consumer does not read
    w.interruptWait();
    await waiting;
    expect(w.backlogged).toBe(true);
    // the interrupt is consumed: waiting again parks until the consumer reads
    let again = false;
    const next = w.waitForCapacity().then(() => {
      again = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(again).toBe(false);
    drain(gate);
    await next;
    expect(again).toBe(true);
  });

  test('an interrupt before the wait makes the next wait return at once', async () => {
    const { writers } = channels(1, 4096, { batchRecords: 8 });
    const w = writers[0];
    for (let i = 0; !w.backlogged; i++) w.write('y'.repeat(200) + i);
    w.interruptWait();
    await w.waitForCapacity();
    expect(w.backlogged).toBe(true);
  });
});
