/**
 * What a barrier handler knows about its input channels, as an immutable value: how many there
 * are, which have ended, and the last barrier each delivered. The protocol checks live here, so
 * both handlers reject the same malformed input the same way.
 *
 * Updates copy the value: O(channels) per control event. Control events are a few per
 * checkpoint per channel, so this never shows next to the record path.
 */

import { BarrierProtocolError } from '../../errors.js';

/** No barrier seen yet on a channel. Checkpoint ids start at 1. */
const NONE = -1;

export interface InputChannels {
  readonly count: number;
  /** Channels that delivered EndOfPartition. Nothing may follow it on that channel. */
  readonly ended: ReadonlySet<number>;
  /**
   * Id of the last barrier each channel delivered, -1 for none. Strictly increases per channel:
   * a producer emits barriers in id order (a subsumed checkpoint becomes a cancel marker, never a
   * late barrier), and a channel is FIFO.
   */
  readonly lastBarrierId: readonly number[];
}

export function createInputChannels(count: number): InputChannels {
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`a barrier handler needs at least one input channel, got ${count}`);
  }
  return { count, ended: new Set(), lastBarrierId: new Array<number>(count).fill(NONE) };
}

/** Channels that have not ended. O(1). */
export function liveChannelCount(channels: InputChannels): number {
  return channels.count - channels.ended.size;
}

/** Checks a barrier from `channelIndex` against the protocol and records it. */
export function acceptBarrier(
  channels: InputChannels,
  channelIndex: number,
  checkpointId: number,
): InputChannels {
  checkOpen(channels, channelIndex, `barrier ${checkpointId}`);
  const last = channels.lastBarrierId[channelIndex];
  if (checkpointId === last) {
    throw new BarrierProtocolError(channelIndex, checkpointId, `barrier ${checkpointId} arrived twice`);
  }
  if (checkpointId < last) {
    throw new BarrierProtocolError(
      channelIndex,
      checkpointId,
      `barrier ${checkpointId} arrived after barrier ${last}: barriers on one channel must arrive in id order`,
    );
  }
  const lastBarrierId = channels.lastBarrierId.slice();
  lastBarrierId[channelIndex] = checkpointId;
  return { ...channels, lastBarrierId };
}

/** Checks that a cancel marker may arrive on `channelIndex`. */
export function checkCancelMarker(channels: InputChannels, channelIndex: number, checkpointId: number): void {
  checkOpen(channels, channelIndex, `cancel marker ${checkpointId}`);
}

/** Records the end of `channelIndex`. */
export function endChannel(channels: InputChannels, channelIndex: number): InputChannels {
  checkOpen(channels, channelIndex, 'a second end of partition');
  const ended = new Set(channels.ended);
  ended.add(channelIndex);
  return { ...channels, ended };
}

function checkOpen(channels: InputChannels, channelIndex: number, what: string): void {
  if (!Number.isInteger(channelIndex) || channelIndex < 0 || channelIndex >= channels.count) {
    throw new RangeError(`channel index ${channelIndex} out of range [0, ${channels.count})`);
  }
  if (channels.ended.has(channelIndex)) {
    throw new BarrierProtocolError(channelIndex, undefined, `${what} arrived after end of partition`);
  }
}
