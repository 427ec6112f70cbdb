/**
 * Combines the watermarks of a task's input channels into the task's input watermark (Flink's
 * `StatusWatermarkValve`): the minimum over the channels that are neither ended nor idle, never
 * decreasing.
 *
 * - A channel's watermark is the highest it has sent (a lower one is ignored).
 * - EndOfPartition removes a channel from the minimum for good. When every channel has ended the
 *   output is `Infinity` (every event-time timer fires).
 * - Idleness (only with an `idleTimeoutMs`): a channel that has sent nothing (no record, no
 *   watermark) for `idleTimeoutMs` stops holding the minimum back; it takes part again with the
 *   next frame it sends. While every live channel is idle the output does not advance (nothing
 *   is known about event time then). A resumed channel never lowers the output: its records that
 *   are behind it are late, as in Flink.
 *
 * Pure: time is passed in. Costs: O(channels) per watermark, end or idleness change; O(1) per
 * activity report.
 */
export class WatermarkValve {
  readonly #watermarks: number[];
  readonly #ended: boolean[];
  readonly #idle: boolean[];
  readonly #lastActive: number[];
  readonly #idleTimeoutMs: number | undefined;
  /** Output so far; only increases. */
  #output = -Infinity;

  constructor(channelCount: number, idleTimeoutMs: number | undefined, now: number) {
    this.#watermarks = new Array<number>(channelCount).fill(-Infinity);
    this.#ended = new Array<boolean>(channelCount).fill(false);
    this.#idle = new Array<boolean>(channelCount).fill(false);
    this.#lastActive = new Array<number>(channelCount).fill(now);
    this.#idleTimeoutMs = idleTimeoutMs;
  }

  /** The combined watermark emitted so far (`-Infinity` before the first). */
  get output(): number {
    return this.#output;
  }

  /** Whether idleness is tracked (the caller then reports activity with {@link onActivity}). */
  get tracksIdleness(): boolean {
    return this.#idleTimeoutMs !== undefined;
  }

  /** A watermark arrived on `channel`. Returns the new output if it advanced, else `undefined`. */
  onWatermark(channel: number, timestamp: number, now: number): number | undefined {
    this.#lastActive[channel] = now;
    this.#idle[channel] = false;
    if (timestamp > this.#watermarks[channel]) this.#watermarks[channel] = timestamp;
    return this.#recompute();
  }

  /** Records arrived on `channel`: it is active (resumes if it was idle). Never advances the output. */
  onActivity(channel: number, now: number): void {
    this.#lastActive[channel] = now;
    this.#idle[channel] = false;
  }

  /** `channel` ended. Returns the new output if it advanced. */
  onEnd(channel: number): number | undefined {
    this.#ended[channel] = true;
    return this.#recompute();
  }

  /** Marks channels silent for the idle timeout as idle. Returns the new output if it advanced. */
  checkIdle(now: number): number | undefined {
    const timeout = this.#idleTimeoutMs;
    if (timeout === undefined) return undefined;
    let changed = false;
    for (let c = 0; c < this.#idle.length; c++) {
      if (!this.#ended[c] && !this.#idle[c] && now - this.#lastActive[c] >= timeout) {
        this.#idle[c] = true;
        changed = true;
      }
    }
    return changed ? this.#recompute() : undefined;
  }

  /** When the next channel may become idle (`Infinity` if none can): the loop wakes then. */
  nextIdleCheck(): number {
    const timeout = this.#idleTimeoutMs;
    if (timeout === undefined) return Infinity;
    let next = Infinity;
    for (let c = 0; c < this.#idle.length; c++) {
      if (!this.#ended[c] && !this.#idle[c]) next = Math.min(next, this.#lastActive[c] + timeout);
    }
    return next;
  }

  #recompute(): number | undefined {
    let min = Infinity;
    let live = 0;
    let active = 0;
    for (let c = 0; c < this.#watermarks.length; c++) {
      if (this.#ended[c]) continue;
      live++;
      if (this.#idle[c]) continue;
      active++;
      if (this.#watermarks[c] < min) min = this.#watermarks[c];
    }
    if (live > 0 && active === 0) return undefined; // all idle: hold
    if (min > this.#output) {
      this.#output = min;
      return min;
    }
    return undefined;
  }
}
