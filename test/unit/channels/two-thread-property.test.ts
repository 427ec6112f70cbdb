import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Doorbell } from '../../../src/channels/doorbell.js';
import type { ControlFrame, Frame } from '../../../src/channels/frame.js';
import { InputGate } from '../../../src/channels/input-gate.js';
import { RingBuffer } from '../../../src/channels/ring-buffer.js';
import type { PeerItem } from '../../fixtures/channels/channel-peer.js';
import { Peer } from '../../fixtures/channels/peer-handle.js';
import { flatten, normalize } from './helpers.js';

const key = fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/);
const scalar = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.integer(),
  fc.double({ noNaN: true }).map((x) => (Object.is(x, -0) ? 0 : x)),
  fc.boolean(),
  fc.constant(null),
  fc.uint8Array({ maxLength: 40 }),
);
const record = fc.oneof(
  { arbitrary: scalar, weight: 3 },
  { arbitrary: fc.record({ key: fc.string({ maxLength: 8 }), value: fc.integer() }), weight: 4 },
  { arbitrary: fc.dictionary(key, scalar, { maxKeys: 5 }), weight: 2 },
  { arbitrary: fc.array(scalar, { maxLength: 6 }), weight: 1 },
  // Larger than the smaller rings' frame limit: fragmented.
  { arbitrary: fc.nat(6000).map((n) => 'L'.repeat(n)), weight: 1 },
);
const control: fc.Arbitrary<ControlFrame> = fc.oneof(
  fc.record({
    kind: fc.constant('barrier' as const),
    checkpointId: fc.nat(),
    timestamp: fc.nat(),
    checkpointType: fc.constantFrom('checkpoint' as const, 'savepoint' as const),
    unaligned: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('cancel-checkpoint' as const), checkpointId: fc.nat() }),
  fc.record({
    kind: fc.constant('watermark' as const),
    timestamp: fc.double({ noNaN: true, min: -1e15, max: 1e15 }),
  }),
);
const item: fc.Arbitrary<PeerItem> = fc.oneof(
  { arbitrary: record.map((r) => ({ record: r })), weight: 9 },
  { arbitrary: control.map((c) => ({ control: c })), weight: 1 },
);

let peer: Peer;
beforeAll(() => {
  peer = new Peer();
});
afterAll(() => peer.terminate());

test('random frame sequences cross a real two-thread ring unchanged and in order', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(item, { maxLength: 300 }),
      fc.constantFrom(256, 1024, 4096),
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 50 }),
      // 60 s: full batches never ring a parked reader by time, only by the other rules (a lost
      // wake-up hangs the test).
      fc.constantFrom(0, 60_000),
      async (items, capacity, batchRecords, flushEvery, wakeDelayMs) => {
        const ring = RingBuffer.allocate(capacity);
        const doorbell = Doorbell.allocate();
        const gate = new InputGate([ring], doorbell);
        const done = peer.request({
          cmd: 'write',
          ring,
          doorbell,
          items,
          batchRecords,
          flushEvery,
          wakeDelayMs,
        });
        const frames: Frame[] = [];
        while (!gate.allEnded) {
          const next = gate.pollNext();
          if (next === null) await Promise.race([gate.waitAsync(), peer.failure]);
          else frames.push(next.frame);
        }
        expect(await done).toMatchObject({ ok: true });
        expect(normalize(flatten(frames))).toEqual(
          normalize([...items, { control: { kind: 'end-of-partition' } }]),
        );
        expect(RingBuffer.canariesIntact(ring)).toBe(true);
      },
    ),
    { numRuns: 40, seed: Number(process.env.WEIR_FC_SEED ?? 20_240_601) },
  );
});
