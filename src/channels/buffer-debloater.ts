/**
 * Buffer debloating (Flink's `BufferDebloater` + `ThroughputCalculator`, FLIP-183): how many bytes
 * each input ring of a task may hold in flight, so that a barrier entering the rings now waits
 * behind about `targetMs` of data instead of behind full rings.
 *
 * Pure: the input gate measures, once per `periodMs`, the payload bytes it read, the time that
 * passed and the part of it it spent idle (waiting for input), and calls {@link debloatStep};
 * the decision says whether to publish a new per-channel limit to the rings' writers
 * (`RingBuffer.setInFlightLimit`). Nothing here reads a clock.
 *
 * Rule: throughput = bytes / (elapsed − idle) — the rate the consumer can take data while it has
 * data, so a consumer that is faster than its producers is not mistaken for a slow one — smoothed
 * by an exponential moving average over `samples` periods. The gate's total in-flight budget is
 * throughput × targetMs, shared evenly by the channels still open (the barrier must come through
 * all of them); each channel gets at least `minBytes` (and an empty ring always takes one frame,
 * whatever the limit). A new limit is published only when it differs from the current one by
 * more than `thresholdPercent`, so the writers do not see a new value every period.
 */
import { InvalidOptionError } from '../errors.js';

export interface BufferDebloatOptions {
  /** In-flight data a barrier should wait behind, in milliseconds of the consumer's throughput. */
  readonly targetMs: number;
  /** How often the throughput is measured and the limit recomputed, in milliseconds. */
  readonly periodMs: number;
  /** Smallest per-channel limit in bytes. */
  readonly minBytes: number;
  /** Periods the moving average of the throughput spans (alpha = 2 / (samples + 1)). */
  readonly samples: number;
  /** A new limit is published only when it differs from the current one by more than this. */
  readonly thresholdPercent: number;
}

export const DEFAULT_BUFFER_DEBLOAT: BufferDebloatOptions = Object.freeze({
  targetMs: 20,
  periodMs: 100,
  minBytes: 32 * 1024,
  samples: 5,
  thresholdPercent: 25,
});

/** One measurement period of an input gate. */
export interface ThroughputSample {
  /** Payload bytes read from all channels during the period. */
  readonly bytes: number;
  /** Length of the period, ms. */
  readonly elapsedMs: number;
  /** Part of the period the consumer waited for input (spin + park), ms. */
  readonly idleMs: number;
  /** Channels not ended (blocked ones included). */
  readonly openChannels: number;
}

export interface DebloatState {
  /** Smoothed throughput in bytes per ms; null before the first measurable period. */
  readonly throughput: number | null;
  /** Per-channel limit in force, bytes (the ring capacity while there is none). */
  readonly limit: number;
}

export interface DebloatDecision {
  readonly next: DebloatState;
  /** The limit to publish to every open channel, or null to leave the rings alone. */
  readonly publish: number | null;
}

/** The state of a gate whose rings hold `capacity` bytes each, before any measurement. */
export function initialDebloatState(capacity: number): DebloatState {
  return { throughput: null, limit: capacity };
}

/**
 * One period: updates the smoothed throughput and decides whether to publish a new per-channel
 * limit (at most `capacity`). A period without busy time or without open channels changes nothing.
 */
export function debloatStep(
  state: DebloatState,
  sample: ThroughputSample,
  options: BufferDebloatOptions,
  capacity: number,
): DebloatDecision {
  const busyMs = sample.elapsedMs - sample.idleMs;
  if (!(busyMs > 0) || sample.openChannels <= 0) return { next: state, publish: null };
  const measured = sample.bytes / busyMs;
  const alpha = 2 / (options.samples + 1);
  const throughput =
    state.throughput === null ? measured : state.throughput + alpha * (measured - state.throughput);
  const wanted = Math.floor((throughput * options.targetMs) / sample.openChannels);
  const limit = Math.min(capacity, Math.max(options.minBytes, wanted));
  const change = Math.abs(limit - state.limit) / state.limit;
  if (change * 100 <= options.thresholdPercent)
    return { next: { throughput, limit: state.limit }, publish: null };
  return { next: { throughput, limit }, publish: limit };
}

/** Completes and checks user options (`channels.debloat`); throws InvalidOptionError naming the bad one. */
export function bufferDebloatOptions(
  given: Partial<BufferDebloatOptions>,
  path = 'channels.debloat',
): BufferDebloatOptions {
  const o = { ...DEFAULT_BUFFER_DEBLOAT, ...given };
  const check = (name: keyof BufferDebloatOptions, min: number, max: number, integer: boolean): void => {
    const v = o[name];
    if (typeof v !== 'number' || !(v >= min && v <= max) || (integer && !Number.isInteger(v))) {
      const kind = integer ? 'an integer' : 'a number';
      throw new InvalidOptionError(
        `${path}.${name}`,
        `must be ${kind} in [${min}, ${max}], got ${String(v)}`,
      );
    }
  };
  check('targetMs', 1, 60_000, false);
  check('periodMs', 1, 60_000, false);
  check('minBytes', 256, 1 << 30, true);
  check('samples', 1, 1000, true);
  check('thresholdPercent', 0, 100, false);
  return o;
}
