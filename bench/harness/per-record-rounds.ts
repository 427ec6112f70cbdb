/**
 * tinybench cases that each process a batch of records, run in rotating rounds (each round starts
 * one case later, so no case always runs first or right after another): per case and round, the
 * wall p50 and the process CPU per record. Used by the keyed-path micro-benchmarks
 * (bench/pipeline/keyed-path.ts, bench/state/keyed-steps.ts).
 */
import { Bench } from 'tinybench';

export interface BatchCase {
  readonly name: string;
  readonly run: () => void;
}

export interface PerRecordRow {
  /** Wall-time p50 per record, ns, one per round. */
  readonly p50: number[];
  /** Process CPU per record (warm-up batches included: they run the same code), ns, one per round. */
  readonly cpu: number[];
}

export async function perRecordRounds(
  cases: readonly BatchCase[],
  o: { rounds: number; iterations: number; warmup: number; recordsPerBatch: number },
): Promise<Map<string, PerRecordRow>> {
  const rows = new Map<string, PerRecordRow>();
  for (let round = 0; round < o.rounds; round++) {
    const order = cases.map((_, i) => cases[(i + round) % cases.length]);
    for (const c of order) {
      const bench = new Bench({
        iterations: o.iterations,
        time: 0,
        warmupIterations: o.warmup,
        warmupTime: 0,
      });
      bench.add(c.name, c.run);
      const cpu0 = process.cpuUsage();
      await bench.run();
      const cpu = process.cpuUsage(cpu0);
      const result = bench.tasks[0].result as { latency?: { p50?: number } };
      const row = rows.get(c.name) ?? { p50: [], cpu: [] };
      row.p50.push(((result.latency?.p50 ?? Number.NaN) * 1e6) / o.recordsPerBatch);
      row.cpu.push(((cpu.user + cpu.system) * 1000) / ((o.iterations + o.warmup) * o.recordsPerBatch));
      rows.set(c.name, row);
    }
  }
  return rows;
}
