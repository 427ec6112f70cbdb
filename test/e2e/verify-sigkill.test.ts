// `weir verify --kinds sigkill`: the process running the job is SIGKILLed 1-3 checkpoints into
// an attempt and a new process restores the latest retained checkpoint. A correct job passes
// through the CLI (--json on stdout stays clean although the job runs in child processes), with
// the kills fired, every restore from a checkpoint at least as new as the last one seen, and (with
// --key) each key's records in the reference's order; a sink
// that writes before the checkpoint completes is caught with duplicates, and an operator that
// keeps its state in a plain variable (lost with the process, while the source rewinds) with
// changed records, each naming the sink. Seeds are chosen so that the first kill comes after the
// first completed checkpoint, which the fixtures' gated source always reaches; with args.hold the
// source of the failure run's first attempt holds the end of its input until the kill lands, so the
// kill fires however slowly verify reacts (see verify-gated-source.mjs). The tests wait on the
// command's end or verifyJob only.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type VerifyReport, verifyJob } from '../../dist/index.js';
import { weirToEnd } from './cli-process.js';
import { fixture } from './helpers.js';

let dir: string | undefined;

/** A new temporary directory (removed after the test) with an empty `hold` directory in it. */
function tempDir(prefix: string): { dir: string; hold: string } {
  dir = mkdtempSync(path.join(tmpdir(), prefix));
  const hold = path.join(dir, 'hold');
  mkdirSync(hold);
  return { dir, hold };
}

afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('weir verify: sigkill failures', () => {
  it('passes a correct job SIGKILLed and restored from its latest checkpoint (CLI, --json)', async () => {
    const { dir, hold } = tempDir('weir-verify-sigkill-');
    const out = path.join(dir, 'out');
    const r = await weirToEnd([
      'verify',
      fixture('verify-correct.mjs'),
      '--arg',
      `out=${out}`,
      '--arg',
      `hold=${hold}`,
      '--kinds',
      'sigkill',
      '--failures',
      '2',
      '--seed',
      '3',
      '--key',
      'key',
      '--json',
    ]);
    expect(r.stderr).not.toMatch(/could not verify/);
    const report = JSON.parse(r.stdout) as VerifyReport;
    expect(report.verdict).toBe('pass');
    expect(r.code).toBe(0);
    if (report.verdict === 'non-deterministic') throw new Error('unreachable');
    expect(report.failures.map((f) => f.kind)).toEqual(['sigkill', 'sigkill']);
    expect(report.failures[0].fired).toBe(true);
    const kills = report.timeline.filter((e) => e.kind === 'killed');
    expect(kills.length).toBe(report.failures.filter((f) => f.fired).length);
    for (const k of kills) {
      if (k.kind !== 'killed') continue;
      // Killed after a completed checkpoint: the next process restored that one or a newer one.
      expect(k.lastCheckpointId).toBeDefined();
      const next = report.timeline.find((e) => e.kind === 'deployed' && e.attempt === k.attempt + 1);
      expect(next).toBeDefined();
      if (next?.kind !== 'deployed') throw new Error('unreachable');
      expect(next.restoredFrom).toBeGreaterThanOrEqual(k.lastCheckpointId ?? 0);
    }
    const bySink = new Map(report.sinks.map((s) => [s.sink, s]));
    // --key key: each key's running sums also came in the reference's order, across the kills.
    expect(report.options.key).toBe('key');
    expect(bySink.get('collect:sums')?.sequence).toBeUndefined();
    for (const name of ['collect:sums', `sink: file:${out}`]) {
      expect(bySink.get(name)?.status).toBe('ok');
      expect(bySink.get(name)?.difference).toMatchObject({
        referenceRecords: 3000,
        actualRecords: 3000,
        lostCount: 0,
        duplicateCount: 0,
      });
    }
  }, 300_000);

  it('catches a sink that writes before the checkpoint completes: duplicates, naming the sink', async () => {
    const { dir, hold } = tempDir('weir-verify-sigkill-eager-');
    const report = await verifyJob(fixture('verify-eager-sink.mjs'), {
      kinds: ['sigkill'],
      failures: 1,
      seed: 3,
      args: { out: path.join(dir, 'eager.jsonl'), hold },
    });
    expect(report.verdict).toBe('fail');
    if (report.verdict === 'non-deterministic') throw new Error('unreachable');
    expect(report.failures[0]).toMatchObject({ kind: 'sigkill', fired: true });
    expect(report.sinks).toHaveLength(1);
    const [sink] = report.sinks;
    expect(sink).toMatchObject({ sink: 'sink: eager-file', type: 'custom', status: 'differs' });
    expect(sink.difference!.duplicateCount).toBeGreaterThan(0);
    expect(sink.difference!.lostCount).toBe(0);
  }, 300_000);

  it('catches an operator keeping state in a plain variable: changed records after the restore, naming the sink', async () => {
    // Seed 11: the kill comes after the attempt's second checkpoint. The first is often taken
    // before the source's first poll on a loaded machine (restoring it is a fresh start, which
    // hides the bug); the second follows the records emitted since, so the restored process
    // lacks sums the checkpoint assumed, and the gated source still holds input to replay.
    const { hold } = tempDir('weir-verify-sigkill-plain-');
    const report: VerifyReport = await verifyJob(fixture('verify-plain-state.mjs'), {
      args: { hold },
      kinds: ['sigkill'],
      failures: 1,
      seed: 11,
    });
    expect(report.verdict).toBe('fail');
    if (report.verdict === 'non-deterministic') throw new Error('unreachable');
    expect(report.failures[0]).toMatchObject({ kind: 'sigkill', fired: true });
    const [sink] = report.sinks;
    expect(sink).toMatchObject({ sink: 'collect:sums', type: 'collect', status: 'differs' });
    // Sums restarted from 0 after the restore: values the reference never had, in place of its own.
    expect(sink.difference!.unexpectedCount).toBeGreaterThan(0);
    expect(sink.difference!.lostCount).toBeGreaterThan(0);
  }, 300_000);
});
