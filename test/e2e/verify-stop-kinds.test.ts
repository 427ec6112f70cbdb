// `verifyJob` with the stop failure kinds: `savepoint` (stop-with-savepoint, a new run resumes
// from it) and `rescale` (the same at another parallelism). A correct job passes with the stops
// fired and its outputs over all runs exact (sinks.collect across clients: no commit-on-restore
// repeats a committed savepoint); a sink that writes before the checkpoint completed is caught
// with duplicates (records written after the savepoint barrier are written again by the resumed
// run), naming the sink. Seeds are chosen so that the first stop comes after the first completed
// checkpoint, which the fixtures' gated source always reaches; tests wait on verifyJob only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type VerifyReport, verifyJob } from '../../dist/index.js';
import { fixture } from './helpers.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function passed(report: VerifyReport, out: string): void {
  expect(report.verdict).toBe('pass');
  if (report.verdict === 'non-deterministic') throw new Error('unreachable');
  expect(report.failures.length).toBe(2);
  expect(report.failures[0].fired).toBe(true);
  const stops = report.timeline.filter((e) => e.kind === 'stopped');
  expect(stops.length).toBe(report.failures.filter((f) => f.fired).length);
  // Every run after a stop deployed from that savepoint.
  for (const s of stops) {
    if (s.kind !== 'stopped') continue;
    expect(report.timeline).toContainEqual(
      expect.objectContaining({ kind: 'deployed', attempt: s.attempt + 1, restoredFrom: s.checkpointId }),
    );
  }
  const bySink = new Map(report.sinks.map((s) => [s.sink, s]));
  for (const name of ['collect:sums', `sink: file:${out}`]) {
    expect(bySink.get(name)?.status).toBe('ok');
    expect(bySink.get(name)?.difference).toMatchObject({
      referenceRecords: 3000,
      actualRecords: 3000,
      lostCount: 0,
      duplicateCount: 0,
    });
  }
}

describe('verifyJob: savepoint and rescale failures', () => {
  it('passes a correct job stopped with savepoints and resumed (sinks.collect and sinks.file)', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-verify-savepoint-'));
    const out = path.join(dir, 'out');
    const report = await verifyJob(fixture('verify-correct.mjs'), {
      kinds: ['savepoint'],
      failures: 2,
      seed: 3,
      args: { out },
    });
    passed(report, out);
    if (report.verdict === 'non-deterministic') throw new Error('unreachable');
    expect(report.failures.every((f) => f.kind === 'savepoint')).toBe(true);
  }, 300_000);

  it('passes a correct job rescaled 1 -> 2 -> 1 through savepoints', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-verify-rescale-'));
    const out = path.join(dir, 'out');
    const report = await verifyJob(fixture('verify-correct.mjs'), {
      kinds: ['rescale'],
      failures: 2,
      seed: 4,
      args: { out },
    });
    passed(report, out);
    if (report.verdict === 'non-deterministic') throw new Error('unreachable');
    expect(report.failures.map((f) => (f.kind === 'rescale' ? f.parallelism : 0))).toEqual([2, 1]);
    expect(report.timeline).toContainEqual(
      expect.objectContaining({ kind: 'stopped', attempt: 0, parallelism: 2 }),
    );
  }, 300_000);

  it.each([
    ['savepoint', 3],
    ['rescale', 4],
  ] as const)(
    'catches a sink that writes before the checkpoint completes under %s: duplicates, naming the sink',
    async (kind, seed) => {
      dir = mkdtempSync(path.join(tmpdir(), `weir-verify-eager-${kind}-`));
      const report = await verifyJob(fixture('verify-eager-sink.mjs'), {
        kinds: [kind],
        failures: 2,
        seed,
        args: { out: path.join(dir, 'eager.jsonl') },
      });
      expect(report.verdict).toBe('fail');
      if (report.verdict === 'non-deterministic') throw new Error('unreachable');
      expect(report.failures[0].fired).toBe(true);
      expect(report.sinks).toHaveLength(1);
      const [sink] = report.sinks;
      expect(sink).toMatchObject({ sink: 'sink: eager-file', type: 'custom', status: 'differs' });
      expect(sink.difference!.duplicateCount).toBeGreaterThan(0);
      expect(sink.difference!.lostCount).toBe(0);
    },
    300_000,
  );
});
