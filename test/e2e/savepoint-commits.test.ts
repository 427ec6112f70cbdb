/**
 * stopWithSavepoint lets the committing sinks commit the savepoint before it stops the tasks:
 * once it resolved, the committed output is exactly what the savepoint covers. A run restored
 * from the savepoint then commits nothing of checkpoints <= the savepoint (commit-on-restore
 * finds it all done) and the two runs' output together is exact.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobWarning, runJob, startJob } from '../../dist/index.js';
import { committedJsonl, expectExactRunningSums, fixture, whenHeld } from './helpers.js';

type Row = { key: number; count: number; sum: number };
const N = 6000;
const KEYS = 10;
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const expectExact = (rows: readonly Row[]): void => expectExactRunningSums(rows, N, KEYS);

/** The slow sink's committed files, by name: `part-<writer subtask>-<checkpoint id>.json`. */
function committedParts(out: string): Map<string, { checkpointId: number; rows: Row[] }> {
  const parts = new Map<string, { checkpointId: number; rows: Row[] }>();
  if (!existsSync(out)) return parts;
  for (const f of readdirSync(out)) {
    const m = /^part-\d+-(\d+)\.json$/.exec(f);
    if (!m) continue;
    const rows = JSON.parse(readFileSync(path.join(out, f), 'utf8')) as Row[];
    parts.set(f, { checkpointId: Number(m[1]), rows });
  }
  return parts;
}

async function startAndStop(
  job: string,
  out: string,
  extra: { timeout?: number; commitDelay?: string } = {},
) {
  // Every reader holds for good half-way (and says so in `dir`), so the savepoint is taken
  // mid-stream however loaded the machine (never refused because the input ended first). No
  // periodic checkpoint comes first (interval 10 min): the savepoint's own transaction holds every
  // record of the run, never one an ordinary checkpoint already took.
  const client = await startJob(fixture(job), {
    parallelism: 2,
    checkpointing: { interval: 600_000, dir: path.join(dir, 'run1'), timeout: extra.timeout ?? 600_000 },
    args: {
      n: String(N),
      keys: String(KEYS),
      out,
      rate: '3000',
      commitDelay: extra.commitDelay ?? '300',
      holdAt: '0.5',
      heldDir: dir,
    },
  });
  const warnings: JobWarning[] = [];
  client.on('warning', (w) => {
    if (w instanceof JobWarning && w.kind === 'savepoint-commits-pending') warnings.push(w);
  });
  await whenHeld(dir, 2, client.done);
  const savepoint = await client.stopWithSavepoint(path.join(dir, 'savepoint'));
  return { client, savepoint, warnings };
}

function restoreAndFinish(job: string, out: string) {
  return runJob(fixture(job), {
    parallelism: 2,
    restoreFrom: path.join(dir, 'savepoint'),
    checkpointing: { interval: 100, dir: path.join(dir, 'run2') },
    args: { n: String(N), keys: String(KEYS), out, rate: '6000', commitDelay: '0' },
  });
}

describe('stopWithSavepoint commits the savepoint before it stops', () => {
  it('sinks.custom with a slow commit: the output committed when it resolves is what the savepoint covers', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-savepoint-commits-'));
    const out = path.join(dir, 'out');
    const { client, savepoint, warnings } = await startAndStop('slow-commit-sink.mjs', out);
    // Read at once: a commit still running (or left to a restore) would be missing here.
    const atStop = committedParts(out);
    const id = savepoint.checkpointId;
    expect([...atStop.values()].every((p) => p.checkpointId <= id)).toBe(true);
    // The savepoint's own records (the first half, taken while the readers held) are committed.
    expect([...atStop.values()].some((p) => p.checkpointId === id)).toBe(true);
    expect([...atStop.values()].flatMap((p) => p.rows)).toHaveLength(N / 2);
    expect(warnings).toEqual([]);
    const first = await client.done;
    expect(first.status).toBe('stopped');
    // Nothing committed after the stop resolved either.
    expect([...committedParts(out).keys()].sort()).toEqual([...atStop.keys()].sort());

    const second = await restoreAndFinish('slow-commit-sink.mjs', out);
    expect(second.status).toBe('finished');
    const all = committedParts(out);
    // Commit-on-restore of the savepoint added nothing: it was all committed at the stop.
    const covered = [...all].filter(([, p]) => p.checkpointId <= id).map(([f]) => f);
    expect(covered.sort()).toEqual([...atStop.keys()].sort());
    for (const [f, p] of atStop) expect(all.get(f)?.rows).toEqual(p.rows);
    expectExact([...all.values()].flatMap((p) => p.rows));
  });

  it('sinks.file: no pending part of the savepoint or earlier is left when it resolves', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-savepoint-commits-'));
    const out = path.join(dir, 'out');
    const { client, savepoint, warnings } = await startAndStop('keyed-count-to-files.mjs', out);
    const id = savepoint.checkpointId;
    const pendingUpTo = (names: string[]) =>
      names.filter((f) => {
        const m = /\.pending-(\d+)$/.exec(f);
        return m !== null && Number(m[1]) <= id;
      });
    expect(pendingUpTo(readdirSync(out))).toEqual([]);
    expect(committedJsonl<Row>(out)).toHaveLength(N / 2);
    expect(warnings).toEqual([]);
    expect((await client.done).status).toBe('stopped');

    const second = await restoreAndFinish('keyed-count-to-files.mjs', out);
    expect(second.status).toBe('finished');
    const all = committedJsonl<Row>(out);
    expectExact(all);
  });

  it('commits that outlast the checkpoint timeout: it stops anyway with a warning, and a restore commits them', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-savepoint-commits-'));
    const out = path.join(dir, 'out');
    // Every commit of run 1 takes 10 minutes: none finishes before the 15 s checkpoint timeout.
    // (15 s, not less: the savepoint's own barriers must complete within it on a loaded machine,
    // else stopWithSavepoint fails instead of warning.)
    const { client, savepoint, warnings } = await startAndStop('slow-commit-sink.mjs', out, {
      timeout: 15_000,
      commitDelay: '600000',
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0].details).toEqual({
      kind: 'savepoint-commits-pending',
      checkpointId: savepoint.checkpointId,
      reason: 'timeout',
    });
    expect((await client.done).status).toBe('stopped');
    expect(committedParts(out).size).toBe(0);

    const second = await restoreAndFinish('slow-commit-sink.mjs', out);
    expect(second.status).toBe('finished');
    const all = committedParts(out);
    // Commit-on-restore wrote the savepoint's committables (its own included).
    expect([...all.values()].some((p) => p.checkpointId === savepoint.checkpointId)).toBe(true);
    expectExact([...all.values()].flatMap((p) => p.rows));
    // Two runs, the first waiting out a 15 s checkpoint timeout: 60 s was too little under load.
  }, 180_000);
});
