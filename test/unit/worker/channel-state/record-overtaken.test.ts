/**
 * ChannelStateRecorder.recordOvertaken: the batches an overtaking barrier passed join its
 * checkpoint, kept as the ring carried them (no decode, no re-encode at the barrier).
 */
import { describe, expect, test } from 'vitest';
import type { EncodedBatches } from '../../../../src/channels/encoded-batches.js';
import { decodeEncodedBatch, RecordCodec } from '../../../../src/channels/record-codec.js';
import {
  type ChannelStateBatch,
  ChannelStateRecorder,
  channelStatePackr,
} from '../../../../src/worker/channel-state/channel-state-recorder.js';

const channels = [
  { edgeId: 0, producerSubtask: 0, inputIndex: 0 as const },
  { edgeId: 0, producerSubtask: 1, inputIndex: 0 as const },
];

/** Record batches encoded by a channel's producer codec, with the consumer's shapes after them. */
function encoded(...batches: unknown[][]): EncodedBatches {
  const producer = new RecordCodec();
  const consumer = new RecordCodec();
  const payloads = batches.map((records) => {
    const payload = producer.encodeBatch(records).slice(); // a view of codec scratch: copy
    const shapes = producer.takeStructureUpdate();
    if (shapes) consumer.applyStructureUpdate(shapes);
    return payload;
  });
  return { payloads, structures: consumer.structures };
}

/** What a restore decodes (channel-state-replay.ts): both encodings. */
const decoded = (batches: readonly ChannelStateBatch[] | null) =>
  batches?.map((b) => [
    b.channel,
    b.ring !== undefined ? decodeEncodedBatch(b.records, b.ring) : channelStatePackr().unpack(b.records),
  ]);

describe('overtaken channel state', () => {
  test('staged by the barrier that opens the checkpoint, then the other channels follow', async () => {
    const r = new ChannelStateRecorder(channels);
    r.recordOvertaken(4, 0, encoded([1, 2], [3]));
    const done = r.open(4); // the barrier handler triggers
    r.start(4, [1]);
    r.dropStaged();
    r.record(1, ['late']); // arrived on channel 1 before its barrier
    r.recordOvertaken(4, 1, encoded(['in ring']));
    r.stop(4, 1);
    r.finish(4);
    expect(decoded(await done)).toEqual([
      [0, [1, 2]],
      [0, [3]],
      [1, ['late']],
      [1, ['in ring']],
    ]);
  });

  test('msgpack batches (mixed shapes) decode with the shapes the channel shared, after a chunk round trip', async () => {
    const r = new ChannelStateRecorder(channels);
    const mixed = [
      [{ a: 1 }, { b: 'x', c: [1, 2] }],
      [{ b: 'y', c: [] }, -0, new Set([1])],
    ];
    r.recordOvertaken(7, 1, encoded(...mixed, [{ k: 'shape batch', v: 1 }]));
    const done = r.open(7);
    r.finish(7);
    const batches = await done;
    expect(batches?.every((b) => b.ring !== undefined)).toBe(true);
    // The chunk the async part writes, read back as a restore reads it.
    const chunk = r.encode(batches!);
    const back = channelStatePackr().unpack(chunk) as ChannelStateBatch[];
    const got = decoded(back)!;
    expect(got.map(([c]) => c)).toEqual([1, 1, 1]);
    expect(got[0][1]).toEqual(mixed[0]);
    expect(got[1][1]).toEqual(mixed[1]);
    expect(Object.is((got[1][1] as unknown[])[1], -0)).toBe(true);
    expect(got[2][1]).toEqual([{ k: 'shape batch', v: 1 }]);
  });

  test('a leftover barrier (no checkpoint opened) leaves nothing for the next one', async () => {
    const r = new ChannelStateRecorder(channels);
    r.recordOvertaken(2, 0, encoded([9]));
    r.dropStaged();
    const done = r.open(3);
    r.finish(3);
    expect(await done).toEqual([]);
    r.recordOvertaken(5, 1, encoded([7]));
    const other = r.open(6); // another id does not take them
    r.finish(6);
    expect(await other).toEqual([]);
  });
});
