import { afterAll, beforeAll, expect, test } from 'vitest';
import { Doorbell } from '../../../src/channels/doorbell.js';
import { InputGate } from '../../../src/channels/input-gate.js';
import { RingBuffer } from '../../../src/channels/ring-buffer.js';
import { Peer } from '../../fixtures/channels/peer-handle.js';
import { prng, type StressItem, stressSequence } from '../../fixtures/channels/stress-sequence.js';
import { normalize } from './helpers.js';

const SEED = Number(process.env.WEIR_STRESS_SEED ?? 7);
const PRODUCERS = 2;
const COUNT = 15_000;

let peers: Peer[];
beforeAll(() => {
  peers = Array.from({ length: PRODUCERS }, () => new Peer());
});
afterAll(() => Promise.all(peers.map((p) => p.terminate())));

test(`seeded stress: ${PRODUCERS} producer threads, small rings, fragments, random blocking (seed ${SEED})`, async () => {
  const rings = Array.from({ length: PRODUCERS }, () => RingBuffer.allocate(4096));
  const doorbell = Doorbell.allocate();
  const gate = new InputGate(rings, doorbell);
  const replies = peers.map((peer, producer) =>
    peer.request({ cmd: 'stress', ring: rings[producer], doorbell, seed: SEED, producer, count: COUNT }),
  );
  const failure = Promise.race(peers.map((p) => p.failure));
  // One verifier per channel: the same seeded generator, advanced in lockstep with what arrives.
  const verifiers = rings.map((_, producer) => stressSequence(SEED, producer, COUNT));
  const expectNext = (producer: number, actual: StressItem): void => {
    const expected = verifiers[producer].next();
    if (expected.done || JSON.stringify(normalize(expected.value)) !== JSON.stringify(normalize(actual))) {
      expect.fail(
        `producer ${producer}: expected ${JSON.stringify(expected.value)}, got ${JSON.stringify(actual)}`,
      );
    }
  };
  const random = prng(SEED);
  let blockedUntil = -1;
  for (let step = 0; !gate.allEnded; step++) {
    if (blockedUntil === -1 && random() < 0.02) {
      gate.block(Math.floor(random() * PRODUCERS));
      blockedUntil = step + 1 + Math.floor(random() * 50);
    } else if (step >= blockedUntil && blockedUntil !== -1) {
      for (let i = 0; i < PRODUCERS; i++) gate.unblock(i);
      blockedUntil = -1;
    }
    const next = gate.pollNext();
    if (next === null) {
      if (blockedUntil !== -1)
        blockedUntil = step; // don't wait on a channel we hold back ourselves
      else await Promise.race([gate.waitAsync(), failure]);
      continue;
    }
    const { channelIndex, frame } = next;
    if (frame.kind === 'records')
      for (const record of frame.records) expectNext(channelIndex, { record } as StressItem);
    else expectNext(channelIndex, { control: frame });
  }
  for (const verifier of verifiers) expect(verifier.next().done).toBe(true);
  for (const reply of await Promise.all(replies)) expect(reply).toMatchObject({ ok: true });
  for (const ring of rings) expect(RingBuffer.canariesIntact(ring)).toBe(true);
  // The small rings must actually have exercised wrap-around, fragmentation and backpressure.
  const stats = (await Promise.all(replies)).map((r) => r as unknown as { stats: { fragmented: number } });
  expect(stats.every((s) => s.stats.fragmented > 0)).toBe(true);
});
