/**
 * The demo's side channel from worker threads to the main thread: a `BroadcastChannel` (one per
 * demo run, named in the job args) carrying small progress messages, so the main thread can draw
 * a progress bar and a throughput timeline while the job runs without touching the runtime.
 *
 * Messages are throttled (one per `intervalMs` per poster) and best-effort: a crashing worker
 * loses its last interval, which only blurs the timeline around the crash. The channel is opened
 * lazily on the first post, so building the job graph on the main thread opens nothing.
 */

import { BroadcastChannel } from 'node:worker_threads';

export type TelemetryMessage =
  /** The highest click (sequence number) read so far from a log partition in this attempt. */
  | {
      readonly kind: 'read';
      readonly partition: number;
      readonly attempt: number;
      readonly seq: number;
      readonly t: number;
    }
  /** Records the sink stage of a subtask received since its previous message. */
  | {
      readonly kind: 'sink';
      readonly subtask: number;
      readonly attempt: number;
      readonly records: number;
      readonly t: number;
    };

/** Wall-clock ms with sub-ms resolution, comparable across worker threads. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}

export class TelemetryPoster {
  readonly #name: string;
  readonly #intervalMs: number;
  #channel: BroadcastChannel | null = null;
  #lastPostAt = Number.NEGATIVE_INFINITY;

  constructor(name: string, intervalMs = 100) {
    this.#name = name;
    this.#intervalMs = intervalMs;
  }

  /** True when at least `intervalMs` passed since the last post (the caller then builds a message). */
  due(now: number): boolean {
    return now - this.#lastPostAt >= this.#intervalMs;
  }

  post(message: TelemetryMessage): void {
    if (!this.#channel) {
      this.#channel = new BroadcastChannel(this.#name);
      // A worker must be able to exit with the channel open.
      (this.#channel as unknown as { unref?: () => void }).unref?.();
    }
    this.#lastPostAt = message.t;
    this.#channel.postMessage(message);
  }
}

/** Main-thread end: calls `onMessage` for every message until `close()`. */
export function listenTelemetry(name: string, onMessage: (m: TelemetryMessage) => void): { close(): void } {
  const channel = new BroadcastChannel(name);
  channel.onmessage = (event) => onMessage((event as { data: TelemetryMessage }).data);
  return { close: () => channel.close() };
}
