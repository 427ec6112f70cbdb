/**
 * The doorbell's control flag (doorbell.ts, `ringControl` / `takeControl`): a consumer that blocks
 * in `Atomics.wait` (its event loop held still) must learn that the main thread posted it a
 * control message, whether the flag was set before it parked or while it sleeps.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Doorbell } from '../../../src/channels/doorbell.js';
import { InputGate } from '../../../src/channels/input-gate.js';
import { RingBuffer } from '../../../src/channels/ring-buffer.js';
import { Peer } from '../../fixtures/channels/peer-handle.js';

/** Yields to the event loop until `condition` (a reading of shared memory) holds. No timers. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('doorbell control flag', () => {
  test('a flag set before the park makes a blocking park return at once; taken once', () => {
    const doorbell = new Doorbell(Doorbell.allocate());
    const gate = new InputGate([RingBuffer.allocate(1024)], doorbell, { spinMicros: 0 });
    doorbell.ringControl();
    // Without the flag check this would block forever (no timeout): the test would hang and fail.
    const seen = doorbell.sequence();
    expect(doorbell.parkSync(seen)).toBe('not-equal');
    expect(gate.takeControl()).toBe(true);
    expect(gate.takeControl()).toBe(false);
    expect(doorbell.parkSync(doorbell.sequence(), 0)).toBe('timed-out');
  });

  test('an asynchronous park ignores the flag: its event loop turns anyway', async () => {
    const doorbell = new Doorbell(Doorbell.allocate());
    doorbell.ringControl();
    expect(await doorbell.parkAsync(doorbell.sequence(), 1)).toBe('timed-out');
    expect(doorbell.takeControl()).toBe(true);
  });

  describe('two threads', () => {
    let peer: Peer;
    beforeAll(() => {
      peer = new Peer();
    });
    afterAll(() => peer.terminate());

    test('a consumer blocked without a timeout wakes on ringControl and sees the flag', async () => {
      const ring = RingBuffer.allocate(1024);
      const buffer = Doorbell.allocate();
      const doorbell = new Doorbell(buffer);
      const reply = peer.request({ cmd: 'park-until-control', ring, doorbell: buffer });
      await Promise.race([until(() => doorbell.consumerParked), peer.failure]);
      doorbell.ringControl();
      expect(await reply).toMatchObject({ ok: true, control: true });
    });
  });
});
