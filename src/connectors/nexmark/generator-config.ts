/**
 * The parameters of the Nexmark generator (Beam's `NexmarkConfiguration` and `GeneratorConfig`,
 * the subset that shapes the event stream) and the pure functions of an event number that Beam
 * derives from them: the out-of-order adjustment and the event time.
 */

import { InvalidOptionError } from '../../errors.js';

/** Per 50 events: 1 person, 3 auctions, 46 bids (2 % / 6 % / 92 %), as Beam. */
export const PERSON_PROPORTION = 1;
export const AUCTION_PROPORTION = 3;
export const BID_PROPORTION = 46;
export const PROPORTION_DENOMINATOR = PERSON_PROPORTION + AUCTION_PROPORTION + BID_PROPORTION;
export const FIRST_PERSON_ID = 1000;
export const FIRST_AUCTION_ID = 1000;
export const FIRST_CATEGORY_ID = 10;
export const NUM_CATEGORIES = 5;

export interface NexmarkOptions {
  /** Events to generate in total (event numbers 0 … events − 1), across all subtasks. */
  readonly events: number;
  /** Wall-clock emission rate, events/s across all subtasks; unlimited when absent. */
  readonly ratePerSec?: number;
  /**
   * Mixed into every event's random seed (Beam seeds `new Random(eventId)`; seed 0, the
   * default, gives Beam's draws). An integer in [0, 65535].
   */
  readonly seed?: number;
  /** Event time of event 0, ms since the epoch. Default 2015-07-15T00:00:00Z (fixed: reruns agree). */
  readonly baseTime?: number;
  /** Event-time rate: events per second of event time (Beam's `firstEventRate`). Default 10 000. */
  readonly eventsPerSecond?: number;
  /**
   * Events are permuted within consecutive groups of this many (Beam's `outOfOrderGroupSize`);
   * 1 (default) = in order. Records may then arrive up to `maxOutOfOrderness(config)` ms late.
   */
  readonly outOfOrderGroupSize?: number;
  /** People a new auction or bid picks from (Beam's `numActivePeople`). Default 1000. */
  readonly numActivePeople?: number;
  /** Auctions a non-hot bid picks from (Beam's `numInFlightAuctions`). Default 100. */
  readonly numInFlightAuctions?: number;
  /** 1 − 1/ratio of bids go to a hot auction. Default 2. */
  readonly hotAuctionRatio?: number;
  /** 1 − 1/ratio of auctions are by a hot seller. Default 4. */
  readonly hotSellersRatio?: number;
  /** 1 − 1/ratio of bids are by a hot bidder. Default 4. */
  readonly hotBiddersRatio?: number;
  /** Average sizes in bytes the `extra` field pads each kind to (Beam's defaults 200/500/100). */
  readonly avgPersonByteSize?: number;
  readonly avgAuctionByteSize?: number;
  readonly avgBidByteSize?: number;
}

/** {@link NexmarkOptions} checked, with defaults applied. */
export interface GeneratorConfig {
  readonly events: number;
  readonly ratePerSec: number | undefined;
  readonly seed: number;
  readonly baseTime: number;
  /** µs of event time between two consecutive event numbers. */
  readonly interEventDelayUs: number;
  readonly outOfOrderGroupSize: number;
  readonly numActivePeople: number;
  readonly numInFlightAuctions: number;
  readonly hotAuctionRatio: number;
  readonly hotSellersRatio: number;
  readonly hotBiddersRatio: number;
  readonly avgPersonByteSize: number;
  readonly avgAuctionByteSize: number;
  readonly avgBidByteSize: number;
}

const DEFAULT_BASE_TIME = Date.UTC(2015, 6, 15);

function integer(name: string, v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new InvalidOptionError(
      `nexmark.${name}`,
      `must be an integer in [${min}, ${max}], got ${String(v)}`,
    );
  }
  return v;
}

/** Checks `options` up front; {@link InvalidOptionError} names the bad one. */
export function generatorConfig(options: NexmarkOptions): GeneratorConfig {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`sources.nexmark(): expected { events, ratePerSec?, seed? }, got ${String(options)}`);
  }
  const o = options;
  // Event ids seed the random generator below 2^48 together with the seed (× 2^32).
  const events = integer('events', o.events, 0, 2 ** 32);
  const rate = o.ratePerSec;
  if (rate !== undefined && !(typeof rate === 'number' && rate > 0 && Number.isFinite(rate))) {
    throw new InvalidOptionError(
      'nexmark.ratePerSec',
      `must be a positive finite number, got ${String(rate)}`,
    );
  }
  const eventsPerSecond = o.eventsPerSecond ?? 10_000;
  if (!(typeof eventsPerSecond === 'number' && eventsPerSecond > 0 && Number.isFinite(eventsPerSecond))) {
    throw new InvalidOptionError(
      'nexmark.eventsPerSecond',
      `must be a positive finite number, got ${String(eventsPerSecond)}`,
    );
  }
  return {
    events,
    ratePerSec: rate,
    seed: integer('seed', o.seed ?? 0, 0, 0xffff),
    baseTime: integer('baseTime', o.baseTime ?? DEFAULT_BASE_TIME, 0),
    interEventDelayUs: 1_000_000 / eventsPerSecond,
    outOfOrderGroupSize: integer('outOfOrderGroupSize', o.outOfOrderGroupSize ?? 1, 1, 1_000_000),
    numActivePeople: integer('numActivePeople', o.numActivePeople ?? 1000, 1),
    numInFlightAuctions: integer('numInFlightAuctions', o.numInFlightAuctions ?? 100, 1),
    hotAuctionRatio: integer('hotAuctionRatio', o.hotAuctionRatio ?? 2, 1, 2 ** 31 - 1),
    hotSellersRatio: integer('hotSellersRatio', o.hotSellersRatio ?? 4, 1, 2 ** 31 - 1),
    hotBiddersRatio: integer('hotBiddersRatio', o.hotBiddersRatio ?? 4, 1, 2 ** 31 - 1),
    avgPersonByteSize: integer('avgPersonByteSize', o.avgPersonByteSize ?? 200, 0),
    avgAuctionByteSize: integer('avgAuctionByteSize', o.avgAuctionByteSize ?? 500, 0),
    avgBidByteSize: integer('avgBidByteSize', o.avgBidByteSize ?? 100, 0),
  };
}

/**
 * Beam's `nextAdjustedEventNumber`: within each group of `outOfOrderGroupSize` event numbers the
 * events are permuted (`base + (n * 953) % size`), so event ids and times arrive out of order.
 */
export function adjustedEventNumber(config: GeneratorConfig, eventNumber: number): number {
  const n = config.outOfOrderGroupSize;
  if (n === 1) return eventNumber;
  const base = Math.floor(eventNumber / n) * n;
  return base + (((eventNumber % n) * (953 % n)) % n);
}

/** Event time of an (adjusted) event number: `baseTime + ⌊n · interEventDelayUs / 1000⌋`. */
export function eventTimestamp(config: GeneratorConfig, eventNumber: number): number {
  return config.baseTime + Math.floor((eventNumber * config.interEventDelayUs) / 1000);
}

/**
 * How far (ms) an event may trail the latest event time one subtask has emitted: the span of an
 * out-of-order group, plus 1 ms for rounding. 0 for an in-order stream. The bound for
 * `assignTimestampsAndWatermarks({ timestamp: (e) => e.dateTime, maxOutOfOrderness })`.
 */
export function maxOutOfOrderness(config: GeneratorConfig): number {
  if (config.outOfOrderGroupSize === 1) return 0;
  return Math.ceil((config.outOfOrderGroupSize * config.interEventDelayUs) / 1000) + 1;
}
