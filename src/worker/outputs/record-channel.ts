/**
 * What a task's network output writers need from one output channel: a ring's
 * `ChannelWriter` (src/channels/channel-writer.ts) or a remote edge's sender (src/cluster).
 */

import type { ControlFrame } from '../../channels/frame.js';

export interface RecordChannel {
  /** `keyGroup`: the record's key group on a hash edge (see ChannelWriter.write). */
  write(value: unknown, keyGroup?: number): void;
  writeControl(frame: ControlFrame): void;
}
