/**
 * The suites `weir bench` runs, in this order by default. Each is one script that accepts
 * `--quick` and `--json PATH`, prints its own tables, and writes its JSON with a `report`
 * (`harness/suite-report.ts`) to PATH.
 */

export interface SuiteEntry {
  readonly name: string;
  /** Relative to the package root. */
  readonly script: string;
  /** One line for `--help` and the README. */
  readonly what: string;
  /** Extra arguments for the script (before `--quick` / `--json`). */
  readonly args?: readonly string[];
  /**
   * Suite-specific flags `weir bench` accepts and forwards to this script only (e.g. `events`
   * for `--events N`); giving one without selecting a suite that takes it is an error.
   */
  readonly flags?: readonly string[];
}

/** Every suite-specific flag any suite takes (the runner's and `weir bench`'s parsers accept these). */
export const SUITE_FLAGS = ['queries', 'events', 'parallelism', 'checkpoint-interval'] as const;
export type SuiteFlag = (typeof SUITE_FLAGS)[number];

export const SUITES: readonly SuiteEntry[] = [
  {
    name: 'pipeline',
    script: 'bench/pipeline/run.ts',
    what: 'end-to-end throughput of the keyed pipeline: weir (p=1/2, checkpoints off/EO/ALO) vs node:stream, RxJS, worker_threads',
  },
  {
    name: 'pipeline-cpu-heavy',
    script: 'bench/pipeline/run.ts',
    args: ['--workload', 'cpu-heavy'],
    what: 'the pipeline with a CPU-heavy map (JSON parse + SHA-1, ~2 µs): weir p=1/p=2 vs a single-thread loop, node:stream, worker_threads',
  },
  {
    name: 'checkpoint',
    script: 'bench/checkpoint/run.ts',
    what: 'throughput cost of checkpoints every 10 s / 1 s / 100 ms vs none, 100 k and 1 M keys',
  },
  {
    name: 'latency',
    script: 'bench/latency/run.ts',
    what: 'end-to-end latency p50/p99/p99.9 of a two-input keyed job, exactly-once vs at-least-once',
  },
  {
    name: 'recovery',
    script: 'bench/recovery/run.ts',
    what: 'time from a worker crash to processing again, vs keyed state size',
  },
  {
    name: 'channels',
    script: 'bench/channels/run.ts',
    what: 'records/s between two worker threads: SharedArrayBuffer rings vs postMessage',
  },
  {
    name: 'state',
    script: 'bench/state/sync-pause.ts',
    what: 'heap keyed state: sync pause at the barrier and async serialization vs a deep copy',
  },
  {
    name: 'keyed-access',
    script: 'bench/state/keyed-access.ts',
    what: 'ns per record of the keyed state access (setCurrentKey + value + update) vs a plain Map',
  },
  {
    name: 'log',
    script: 'bench/log/run.ts',
    what: 'embedded log ingest: durable appends/s and p50/p99 for 1–512 concurrent appenders and 256-record batches (fsync, os) vs NATS JetStream and Redis XADD',
  },
  {
    name: 'connectors',
    script: 'bench/connectors/run.ts',
    what: 'each broker/database connector (JetStream, Redis Streams, PostgreSQL) under weir vs its bare client library, interleaved: records/s and ratio (needs the services)',
  },
  {
    name: 'nexmark',
    script: 'bench/nexmark/run.ts',
    flags: ['queries', 'events', 'parallelism', 'checkpoint-interval'],
    what: "Nexmark q0-q5, q7-q9, q11, q14, q17, q20-q22: events/s per core (whole-process CPU), exactly-once checkpoints, beside Flink 1.13's published per-core figures",
  },
];

/**
 * Which selected suite receives each suite-specific flag given: the arguments to append per
 * suite name. Throws a RangeError naming a flag that no selected suite takes.
 */
export function suiteFlagArgs(
  suites: readonly SuiteEntry[],
  given: Readonly<Partial<Record<SuiteFlag, string>>>,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [flag, value] of Object.entries(given)) {
    if (value === undefined) continue;
    const takers = suites.filter((s) => s.flags?.includes(flag));
    if (takers.length === 0) {
      const owners = SUITES.filter((s) => s.flags?.includes(flag)).map((s) => s.name);
      throw new RangeError(
        `--${flag} is a flag of the ${owners.join(', ')} suite; select it with --suite ${owners[0]}`,
      );
    }
    for (const s of takers) out.set(s.name, [...(out.get(s.name) ?? []), `--${flag}`, value]);
  }
  return out;
}

/** The entries for `names` (all when empty); throws a RangeError naming unknown suites. */
export function selectSuites(names: readonly string[]): SuiteEntry[] {
  if (names.length === 0) return [...SUITES];
  const unknown = names.filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length > 0) {
    throw new RangeError(
      `unknown suite${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the suites are ${SUITES.map((s) => s.name).join(', ')}`,
    );
  }
  return names.map((n) => SUITES.find((s) => s.name === n)!);
}
