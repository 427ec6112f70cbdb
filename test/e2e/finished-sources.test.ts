/**
 * Checkpoints after tasks finish (FLIP-147): jobs with more source subtasks than splits — one
 * jsonl file at parallelism 3, a sequence restored at a higher parallelism, a bounded log with
 * one partition at parallelism 2 — and a job whose whole source vertex finishes early. The
 * subtasks without input end at once; checkpoints must keep completing while the rest reads
 * (slowly), so exactly-once sinks commit before the end; a failure in that state restores
 * exactly (also in a new process at another parallelism), and finished splits stay finished: no
 * record is read twice.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { JobFailedError, openLog, startJob } from '../../dist/index.js';
import { committedJsonl, expectedSums, fixture, holdFlag } from './helpers.js';

const KEYS = 7;
const TOTAL = 4000;

let root: string;
let input: string;
/** Input values per key, in input order (the oracle). */
const valuesByKey = new Map<number, number[]>();
const allIds = Array.from({ length: TOTAL }, (_, i) => `r${i}`).sort();

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'weir-finished-sources-'));
  input = join(root, 'only.jsonl');
  const lines: string[] = [];
  for (let i = 0; i < TOTAL; i++) {
    const key = (i * 31) % KEYS;
    const value = (i * 17) % 101;
    lines.push(JSON.stringify({ key, value, id: `r${i}` }));
    valuesByKey.set(key, [...(valuesByKey.get(key) ?? []), value]);
  }
  writeFileSync(input, `${lines.join('\n')}\n`);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Sum {
  key: number;
  sum: number;
  count: number;
  id: string;
}

/** Every input record committed exactly once, and each key's running sum exact. */
function expectExactOutput(sums: readonly Sum[]): void {
  expect(sums.map((s) => s.id).sort()).toEqual(allIds);
  for (const [key, values] of valuesByKey) {
    const mine = sums.filter((s) => s.key === key).sort((a, b) => a.count - b.count);
    expect(mine.map((s) => s.count)).toEqual(values.map((_, i) => i + 1));
    expect(mine.at(-1)?.sum).toBe(values.reduce((a, b) => a + b, 0));
  }
}

let runs = 0;

describe('checkpoints after source subtasks finished (one file, parallelism 3)', () => {
  it('checkpoints keep completing, the file sink commits before the end, and a failure restores exactly', async () => {
    const out = join(root, `out-${runs++}`);
    const client = await startJob(fixture('finished-sources.mjs'), {
      parallelism: 3,
      checkpointing: { interval: 50, mode: 'exactly-once' },
      restartStrategy: { type: 'fixed-delay', attempts: 1, delay: 0 },
      // 6000/s over 3 subtask shares: the subtask with the file reads 2000 records/s.
      args: { input, out, total: String(TOTAL), rate: '6000', failure: 'throw', at: '0.5' },
    });
    let checkpointsBeforeFailure = -1;
    let committedBeforeFailure = -1;
    const completed: number[] = [];
    const restoredFrom: (number | undefined)[] = [];
    client.on('checkpoint', (c: { checkpointId: number }) => completed.push(c.checkpointId));
    client.on('restarting', () => {
      // Attempt 0 is torn down, attempt 1 not deployed yet: what is committed now was committed
      // by checkpoints of attempt 0, all taken after two of the three sources had finished.
      checkpointsBeforeFailure = completed.length;
      committedBeforeFailure = committedJsonl(out).length;
    });
    client.on('deployed', (e: { attempt: number; restoredFrom?: number }) => {
      if (e.attempt > 0) restoredFrom.push(e.restoredFrom);
    });
    const result = await client.done;
    // The sink fails only after two completed checkpoints committed records it wrote: before
    // FLIP-147 the first source subtask to end stopped periodic checkpoints and it never failed.
    expect(result.restarts).toBe(1);
    expect(checkpointsBeforeFailure).toBeGreaterThanOrEqual(2);
    expect(committedBeforeFailure).toBeGreaterThan(0);
    expect(restoredFrom).toHaveLength(1);
    expect(typeof restoredFrom[0]).toBe('number');
    expectExactOutput(committedJsonl<Sum>(out));
    expect(readdirSync(out).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('restored in a new process at parallelism 2 from a checkpoint taken after sources finished: exact output', async () => {
    const out = join(root, `out-${runs}`);
    const dir = join(root, `checkpoints-${runs++}`);
    const args = { input, out, total: String(TOTAL), rate: '6000', at: '0.5' };
    const first = await startJob(fixture('finished-sources.mjs'), {
      parallelism: 3,
      checkpointing: { interval: 50, mode: 'exactly-once', dir },
      restartStrategy: { type: 'none' },
      args: { ...args, failure: 'throw' },
    });
    await expect(first.done).rejects.toBeInstanceOf(JobFailedError);
    // Committed output of completed checkpoints: a fresh start would duplicate it.
    const committedByFirst = committedJsonl<Sum>(out);
    expect(committedByFirst.length).toBeGreaterThan(0);
    expect(committedByFirst.length).toBeLessThan(TOTAL);
    const second = await startJob(fixture('finished-sources.mjs'), {
      parallelism: 2,
      checkpointing: { interval: 50, mode: 'exactly-once', dir },
      restoreFrom: 'latest',
      args: { ...args, failure: 'none' },
    });
    const result = await second.done;
    expect(result.restarts).toBe(0);
    expect(result.checkpoints.length).toBeGreaterThan(0);
    expectExactOutput(committedJsonl<Sum>(out));
    expect(readdirSync(out).filter((n) => n.startsWith('.'))).toEqual([]);
  });
});

describe('checkpoints after source subtasks finished (a sequence restored at a higher parallelism)', () => {
  it('p=1 fails after a checkpoint; restored at p=3 two source subtasks get no split and end at once, checkpoints go on, a second failure restores exactly', async () => {
    const n = 6000;
    const keys = 10;
    const dir = join(root, `checkpoints-${runs++}`);
    const first = await startJob(fixture('checkpointed-sum.mjs'), {
      parallelism: 1,
      checkpointing: { interval: 50, mode: 'exactly-once', dir },
      restartStrategy: { type: 'none' },
      args: { n: String(n), keys: String(keys), failure: 'throw', rate: '4000', at: '0.4' },
    });
    await expect(first.done).rejects.toBeInstanceOf(JobFailedError);
    // At p=3 the one sequence split goes to subtask 0: subtasks 1 and 2 end at once. The map of
    // subtask 0 fails once its source took two snapshots — periodic ones, after the others ended.
    const second = await startJob(fixture('checkpointed-sum.mjs'), {
      parallelism: 3,
      checkpointing: { interval: 50, mode: 'exactly-once', dir },
      restoreFrom: 'latest',
      restartStrategy: { type: 'fixed-delay', attempts: 1, delay: 0 },
      args: { n: String(n), keys: String(keys), failure: 'throw', rate: '4000', at: '0.05' },
    });
    const result = await second.done;
    expect(result.restarts).toBe(1);
    const sums = result.sinks.sums as { key: number; sum: number; count: number }[];
    const expected = expectedSums(n, keys);
    for (const [key, { sum, count }] of expected) {
      // Exactly once across the restore and the restart: per key, the counts emitted by this run
      // are contiguous, each once, up to the expected total, and the final sum is exact.
      const mine = sums.filter((s) => s.key === key).sort((a, b) => a.count - b.count);
      expect(mine.length).toBeGreaterThan(0);
      const counts = mine.map((s) => s.count);
      const from = counts[0];
      expect(counts).toEqual(Array.from({ length: count - from + 1 }, (_, i) => from + i));
      expect(mine.at(-1)?.sum).toBe(sum);
    }
  });
});

describe('checkpoints after a whole source vertex finished', () => {
  for (const unaligned of [false, true]) {
    it(`${unaligned ? 'unaligned' : 'aligned'}: a finished branch and a finished union input: checkpoints go on, the collect sink commits, a failure restores exactly`, async () => {
      const n = 4000;
      const keys = 10;
      // The long source holds half-way until the failing sink was notified of 2 completed
      // checkpoints (it writes the flag): under load the input cannot end before the failure.
      const flag = holdFlag();
      const client = await startJob(fixture('finished-branch.mjs'), {
        parallelism: 2,
        checkpointing: { interval: 50, mode: 'exactly-once', unaligned },
        restartStrategy: { type: 'fixed-delay', attempts: 1, delay: 0 },
        args: {
          n: String(n),
          keys: String(keys),
          tiny: '5',
          short: '20',
          rate: '4000',
          failure: 'throw',
          flag: flag.path,
        },
      });
      onTestFinished(() => flag.dispose());
      const completed: number[] = [];
      let checkpointsBeforeFailure = -1;
      client.on('checkpoint', (c: { checkpointId: number }) => completed.push(c.checkpointId));
      client.on('restarting', () => {
        checkpointsBeforeFailure = completed.length;
      });
      const result = await client.done;
      expect(result.restarts).toBe(1);
      expect(checkpointsBeforeFailure).toBeGreaterThanOrEqual(2);
      // Exactly once: every running-sum output once, final per-key sums exact, in both branches.
      const check = (records: unknown[], total: number) => {
        const sums = records as { key: number; sum: number; count: number }[];
        const expected = expectedSums(total, keys);
        expect(sums).toHaveLength(total);
        for (const [key, { sum, count }] of expected) {
          const mine = sums.filter((s) => s.key === key).sort((a, b) => a.count - b.count);
          expect(mine.map((s) => s.count)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
          expect(mine.at(-1)?.sum).toBe(sum);
        }
      };
      check(result.sinks.sums, n);
      check(result.sinks.short, 20);
    });
  }
});

describe('checkpoints after source subtasks finished (a bounded log with fewer partitions than subtasks)', () => {
  it('one partition at parallelism 2: checkpoints go on, the file sink commits before the end, a failure restores exactly', async () => {
    const logDir = join(root, `log-${runs++}`);
    const log = openLog(logDir);
    try {
      const topic = log.topic('in', { partitions: 1 });
      const records: { key: number; value: number; id: string }[] = [];
      for (let i = 0; i < TOTAL; i++)
        records.push({ key: (i * 31) % KEYS, value: (i * 17) % 101, id: `r${i}` });
      topic.appendSync(records);
    } finally {
      await log.close();
    }
    const out = join(root, `out-${runs++}`);
    let committedBeforeFailure = -1;
    const client = await startJob(fixture('finished-sources.mjs'), {
      parallelism: 2,
      checkpointing: { interval: 50, mode: 'exactly-once' },
      restartStrategy: { type: 'fixed-delay', attempts: 1, delay: 0 },
      // 4000/s over 2 subtask shares: the subtask with the partition reads 2000 records/s.
      args: { log: logDir, out, total: String(TOTAL), rate: '4000', failure: 'throw', at: '0.5' },
    });
    client.on('restarting', () => {
      committedBeforeFailure = committedJsonl(out).length;
    });
    const result = await client.done;
    expect(result.restarts).toBe(1);
    expect(committedBeforeFailure).toBeGreaterThan(0);
    expectExactOutput(committedJsonl<Sum>(out));
  });
});
