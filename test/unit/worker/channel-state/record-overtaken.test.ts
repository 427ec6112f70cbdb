/** ChannelStateRecorder.recordOvertaken: the batches an overtaking barrier passed join its checkpoint. */
import { describe, expect, test } from 'vitest';
import {
  ChannelStateRecorder,
  channelStatePackr,
} from '../../../../src/worker/channel-state/channel-state-recorder.js';

const channels = [
  { edgeId: 0, producerSubtask: 0, inputIndex: 0 as const },
  { edgeId: 0, producerSubtask: 1, inputIndex: 0 as const },
];
const unpack = (batches: { channel: number; records: Uint8Array }[] | null) =>
  batches?.map((b) => [b.channel, channelStatePackr().unpack(b.records)]);

describe('overtaken channel state', () => {
  test('staged by the barrier that opens the checkpoint, then the other channels follow', async () => {
    const r = new ChannelStateRecorder(channels);
    r.recordOvertaken(4, 0, [[1, 2], [], [3]]);
    const done = r.open(4); // the barrier handler triggers
    r.start(4, [1]);
    r.dropStaged();
    r.record(1, ['late']); // arrived on channel 1 before its barrier
    r.recordOvertaken(4, 1, [['in ring']]); // channel 1's barrier overtook this
    r.stop(4, 1);
    r.finish(4);
    expect(unpack(await done)).toEqual([
      [0, [1, 2]],
      [0, [3]],
      [1, ['late']],
      [1, ['in ring']],
    ]);
  });

  test('a leftover barrier (no checkpoint opened) leaves nothing for the next one', async () => {
    const r = new ChannelStateRecorder(channels);
    r.recordOvertaken(2, 0, [[9]]);
    r.dropStaged();
    const done = r.open(3);
    r.finish(3);
    expect(await done).toEqual([]);
    r.recordOvertaken(5, 1, [[7]]);
    const other = r.open(6); // another id does not take them
    r.finish(6);
    expect(await other).toEqual([]);
  });
});
