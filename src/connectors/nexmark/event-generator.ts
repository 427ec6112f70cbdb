/**
 * Event number → event, a pure function (Beam's `Generator.nextEvent` with its `PersonGenerator`,
 * `AuctionGenerator`, `BidGenerator`, `PriceGenerator` and `StringsGenerator`): the event id is
 * the out-of-order-adjusted event number, its kind is `id % 50` (person < 1 ≤ auction < 4 ≤
 * bid), its time comes from the generator's clock (`eventTimestamp`), and every random draw comes
 * from `new Random(id)` (plus the seed), so any subtask can generate any event without the
 * others, and a restore regenerates exactly what it rewinds to.
 *
 * Id windows, as Beam: a new auction or bid picks its person among the last `numActivePeople`
 * people (plus 10 ids ahead, which look swapped in time) and a bid its auction among the last
 * `numInFlightAuctions` auctions (plus 10 ahead); hot sellers, hot bidders and hot auctions are
 * the first of each batch of 100 most recent ones. Bids carry nexmark-flink's `channel` and
 * `url` (half of them one of four hot channels), drawn after the price.
 *
 * Cost: one `JavaRandom` and ~2 draws per character of the padding string `extra` (about 70 for
 * a bid at the default sizes) — the generator is a real part of the benchmark, as in Flink's.
 */

import {
  AUCTION_PROPORTION,
  adjustedEventNumber,
  eventTimestamp,
  FIRST_AUCTION_ID,
  FIRST_CATEGORY_ID,
  FIRST_PERSON_ID,
  type GeneratorConfig,
  NUM_CATEGORIES,
  PERSON_PROPORTION,
  PROPORTION_DENOMINATOR,
} from './generator-config.js';
import { JavaRandom } from './java-random.js';
import type { Auction, Bid, NexmarkEvent, Person } from './nexmark-events.js';

const PERSON_ID_LEAD = 10;
const AUCTION_ID_LEAD = 10;
const HOT_SELLER_RATIO = 100;
const HOT_AUCTION_RATIO = 100;
const HOT_BIDDER_RATIO = 100;
const MIN_STRING_LENGTH = 3;
const US_STATES = ['AZ', 'CA', 'ID', 'OR', 'WA', 'WY'];
const US_CITIES = [
  'Phoenix',
  'Los Angeles',
  'San Francisco',
  'Boise',
  'Portland',
  'Bend',
  'Redmond',
  'Seattle',
  'Kent',
  'Cheyenne',
];
const FIRST_NAMES = [
  'Peter',
  'Paul',
  'Luke',
  'John',
  'Saul',
  'Vicky',
  'Kate',
  'Julie',
  'Sarah',
  'Deiter',
  'Walter',
];
const LAST_NAMES = ['Shultz', 'Abrams', 'Spencer', 'White', 'Bartels', 'Walton', 'Smith', 'Jones', 'Noris'];
const HOT_CHANNELS = ['Google', 'Facebook', 'Baidu', 'Apple'];
const HOT_URLS = HOT_CHANNELS.map(
  (c) => `https://www.nexmark.com/${c.toLowerCase()}/hot/${c.length}/item.htm?query=1`,
);
const CHANNELS_NUMBER = 10_000;

/** Event number `n` (0-based, before the out-of-order adjustment) of the stream `config` describes. */
export function nexmarkEvent(config: GeneratorConfig, n: number): NexmarkEvent {
  const id = adjustedEventNumber(config, n);
  const timestamp = eventTimestamp(config, id);
  const random = new JavaRandom(id + config.seed * 0x100000000);
  const rem = id % PROPORTION_DENOMINATOR;
  if (rem < PERSON_PROPORTION) return nextPerson(config, id, random, timestamp);
  if (rem < PERSON_PROPORTION + AUCTION_PROPORTION) return nextAuction(config, id, random, timestamp);
  return nextBid(config, id, random, timestamp);
}

/** Base-0 id of the last person generated at or before event `eventId`. */
export function lastBase0PersonId(eventId: number): number {
  const epoch = Math.floor(eventId / PROPORTION_DENOMINATOR);
  let offset = eventId % PROPORTION_DENOMINATOR;
  if (offset >= PERSON_PROPORTION) offset = PERSON_PROPORTION - 1;
  return epoch * PERSON_PROPORTION + offset;
}

/** Base-0 id of the last auction generated at or before event `eventId` (−1 before the first). */
export function lastBase0AuctionId(eventId: number): number {
  let epoch = Math.floor(eventId / PROPORTION_DENOMINATOR);
  let offset = eventId % PROPORTION_DENOMINATOR;
  if (offset < PERSON_PROPORTION) {
    epoch--;
    offset = AUCTION_PROPORTION - 1;
  } else if (offset >= PERSON_PROPORTION + AUCTION_PROPORTION) {
    offset = AUCTION_PROPORTION - 1;
  } else {
    offset -= PERSON_PROPORTION;
  }
  return epoch * AUCTION_PROPORTION + offset;
}

/** Beam's `nextLong(random, n)`: `nextInt(n)` below 2^31 − 1. */
function nextLong(random: JavaRandom, n: number): number {
  if (n < 0x7fffffff) return random.nextIntBounded(n);
  return Math.abs(random.nextLong() % n);
}

function nextBase0PersonId(config: GeneratorConfig, eventId: number, random: JavaRandom): number {
  const numPeople = lastBase0PersonId(eventId) + 1;
  const activePeople = Math.min(numPeople, config.numActivePeople);
  const n = nextLong(random, activePeople + PERSON_ID_LEAD);
  return numPeople - activePeople + n;
}

function nextBase0AuctionId(config: GeneratorConfig, eventId: number, random: JavaRandom): number {
  const maxAuction = lastBase0AuctionId(eventId);
  const minAuction = Math.max(maxAuction - config.numInFlightAuctions, 0);
  return minAuction + nextLong(random, maxAuction - minAuction + 1 + AUCTION_ID_LEAD);
}

function nextPrice(random: JavaRandom): number {
  return Math.round(10 ** (random.nextDouble() * 6) * 100);
}

const A = 'a'.charCodeAt(0);
const SPACE = ' '.charCodeAt(0);
/** `len` random lowercase letters, each one `special` with probability 1/13 (Beam's draws). */
function randomChars(random: JavaRandom, len: number, special: number): string {
  const codes = new Array<number>(len);
  for (let i = 0; i < len; i++) {
    codes[i] = random.nextIntBounded(13) === 0 ? special : A + random.nextIntBounded(26);
  }
  return String.fromCharCode(...codes);
}

function nextString(random: JavaRandom, maxLength: number): string {
  const len = MIN_STRING_LENGTH + random.nextIntBounded(maxLength - MIN_STRING_LENGTH);
  return randomChars(random, len, SPACE).trim();
}

function nextExtra(random: JavaRandom, currentSize: number, desiredAverageSize: number): string {
  if (currentSize > desiredAverageSize) return '';
  const remaining = desiredAverageSize - currentSize;
  const delta = Math.round(remaining * 0.2);
  const minSize = remaining - delta;
  const desiredSize = minSize + (delta === 0 ? 0 : random.nextIntBounded(2 * delta));
  return randomChars(random, desiredSize, SPACE);
}

function nextPerson(config: GeneratorConfig, eventId: number, random: JavaRandom, timestamp: number): Person {
  const id = lastBase0PersonId(eventId) + FIRST_PERSON_ID;
  const name = `${FIRST_NAMES[random.nextIntBounded(FIRST_NAMES.length)]} ${LAST_NAMES[random.nextIntBounded(LAST_NAMES.length)]}`;
  const emailAddress = `${nextString(random, 7)}@${nextString(random, 5)}.com`;
  const groups: string[] = [];
  for (let i = 0; i < 4; i++) groups.push(String(random.nextIntBounded(10000)).padStart(4, '0'));
  const creditCard = groups.join(' ');
  const city = US_CITIES[random.nextIntBounded(US_CITIES.length)];
  const state = US_STATES[random.nextIntBounded(US_STATES.length)];
  const size = 8 + name.length + emailAddress.length + creditCard.length + city.length + state.length;
  const extra = nextExtra(random, size, config.avgPersonByteSize);
  return { kind: 'person', id, name, emailAddress, creditCard, city, state, dateTime: timestamp, extra };
}

/** Beam's `nextAuctionLengthMs`: on average as long as it takes to generate `numInFlightAuctions` auctions. */
function nextAuctionLengthMs(
  config: GeneratorConfig,
  eventId: number,
  random: JavaRandom,
  timestamp: number,
): number {
  const numEventsForAuctions = Math.floor(
    (config.numInFlightAuctions * PROPORTION_DENOMINATOR) / AUCTION_PROPORTION,
  );
  const futureAuction = eventTimestamp(config, eventId + numEventsForAuctions);
  const horizonMs = futureAuction - timestamp;
  return 1 + nextLong(random, Math.max(horizonMs * 2, 1));
}

function nextAuction(
  config: GeneratorConfig,
  eventId: number,
  random: JavaRandom,
  timestamp: number,
): Auction {
  const id = lastBase0AuctionId(eventId) + FIRST_AUCTION_ID;
  let seller: number;
  if (random.nextIntBounded(config.hotSellersRatio) > 0) {
    seller = Math.floor(lastBase0PersonId(eventId) / HOT_SELLER_RATIO) * HOT_SELLER_RATIO;
  } else {
    seller = nextBase0PersonId(config, eventId, random);
  }
  seller += FIRST_PERSON_ID;
  const category = FIRST_CATEGORY_ID + random.nextIntBounded(NUM_CATEGORIES);
  const initialBid = nextPrice(random);
  const expires = timestamp + nextAuctionLengthMs(config, eventId, random, timestamp);
  const itemName = nextString(random, 20);
  const description = nextString(random, 100);
  const reserve = initialBid + nextPrice(random);
  const size = 8 + itemName.length + description.length + 8 + 8 + 8 + 8 + 8;
  const extra = nextExtra(random, size, config.avgAuctionByteSize);
  return {
    kind: 'auction',
    id,
    itemName,
    description,
    initialBid,
    reserve,
    dateTime: timestamp,
    expires,
    seller,
    category,
    extra,
  };
}

function nextBid(config: GeneratorConfig, eventId: number, random: JavaRandom, timestamp: number): Bid {
  let auction: number;
  if (random.nextIntBounded(config.hotAuctionRatio) > 0) {
    auction = Math.floor(lastBase0AuctionId(eventId) / HOT_AUCTION_RATIO) * HOT_AUCTION_RATIO;
  } else {
    auction = nextBase0AuctionId(config, eventId, random);
  }
  auction += FIRST_AUCTION_ID;
  let bidder: number;
  if (random.nextIntBounded(config.hotBiddersRatio) > 0) {
    // the second person of the batch, so hot bidders and hot sellers differ
    bidder = Math.floor(lastBase0PersonId(eventId) / HOT_BIDDER_RATIO) * HOT_BIDDER_RATIO + 1;
  } else {
    bidder = nextBase0PersonId(config, eventId, random);
  }
  bidder += FIRST_PERSON_ID;
  const price = nextPrice(random);
  let channel: string;
  let url: string;
  if (random.nextIntBounded(2) > 0) {
    const i = random.nextIntBounded(HOT_CHANNELS.length);
    channel = HOT_CHANNELS[i];
    url = HOT_URLS[i];
  } else {
    const c = random.nextIntBounded(CHANNELS_NUMBER);
    channel = `channel-${c}`;
    url = `https://www.nexmark.com/c${c % 97}/d${c % 89}/e${c % 83}/item.htm?query=1&channel_id=${c}`;
  }
  const extra = nextExtra(random, 8 + 8 + 8 + 8, config.avgBidByteSize);
  return { kind: 'bid', auction, bidder, price, channel, url, dateTime: timestamp, extra };
}
