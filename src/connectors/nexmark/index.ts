// The Nexmark benchmark's event stream: the source, its event shapes and the pure generator.

export { lastBase0AuctionId, lastBase0PersonId, nexmarkEvent } from './event-generator.js';
export {
  adjustedEventNumber,
  eventTimestamp,
  type GeneratorConfig,
  generatorConfig,
  maxOutOfOrderness,
  type NexmarkOptions,
} from './generator-config.js';
export { JavaRandom } from './java-random.js';
export type { Auction, Bid, NexmarkEvent, Person } from './nexmark-events.js';
export { initialNexmarkSplit, type NexmarkSplit, nexmark } from './nexmark-source.js';
