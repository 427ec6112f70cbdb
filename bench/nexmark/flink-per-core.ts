/**
 * Flink 1.13's published Nexmark throughput per core (events/s/core), from the nexmark project's
 * results table (github.com/nexmark/nexmark README): 8 workers, RocksDB, exactly-once
 * checkpoints every 3 min, 100 M events, source at 10 M events/s; Bid 92 % / Auction 6 % /
 * Person 2 %. Queries Flink did not publish (q6, q10) are absent.
 */
export const FLINK_PER_CORE: Readonly<Record<string, number>> = {
  q0: 155_000,
  q1: 158_000,
  q2: 175_000,
  q3: 152_000,
  q4: 34_000,
  q5: 22_000,
  q7: 12_000,
  q8: 146_000,
  q9: 14_000,
  q11: 40_000,
  q12: 76_000,
  q13: 131_000,
  q14: 161_000,
  q15: 72_000,
  q16: 19_000,
  q17: 117_000,
  q18: 54_000,
  q19: 44_000,
  q20: 19_000,
  q21: 98_000,
  q22: 130_000,
};
