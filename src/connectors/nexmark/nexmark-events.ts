/**
 * The Nexmark event shapes (the NEXMark paper's online auction: people, auctions, bids), as
 * plain objects with one fixed shape per `kind` so the channels' shape codec carries them.
 * Fields follow Beam's `Person`/`Auction`/`Bid` and, for a bid's `channel` and `url`, the
 * nexmark-flink project's. Times are ms since the epoch (event time).
 */

export interface Person {
  readonly kind: 'person';
  readonly id: number;
  readonly name: string;
  readonly emailAddress: string;
  readonly creditCard: string;
  readonly city: string;
  readonly state: string;
  readonly dateTime: number;
  readonly extra: string;
}

export interface Auction {
  readonly kind: 'auction';
  readonly id: number;
  readonly itemName: string;
  readonly description: string;
  readonly initialBid: number;
  readonly reserve: number;
  readonly dateTime: number;
  /** When the auction closes (event time); bids after it do not count. */
  readonly expires: number;
  readonly seller: number;
  readonly category: number;
  readonly extra: string;
}

export interface Bid {
  readonly kind: 'bid';
  readonly auction: number;
  readonly bidder: number;
  /** In cents. */
  readonly price: number;
  readonly channel: string;
  readonly url: string;
  readonly dateTime: number;
  readonly extra: string;
}

export type NexmarkEvent = Person | Auction | Bid;
