import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckpointingMode } from '../../../src/api/source.js';
import {
  commitPendingPart,
  type FilePendingPart,
  type FileSinkOptions,
  file,
  isStray,
  parseStagedName,
} from '../../../src/connectors/file-sink.js';
import { FileSinkError, InvalidOptionError } from '../../../src/errors.js';
import { redistributeOperatorState } from '../../../src/state/redistribute-operator-state.js';
import { committablesIn, SinkHarness } from './committing-sink-harness.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'weir-file-sink-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Ctx {
  subtaskIndex?: number;
  parallelism?: number;
  attempt?: number;
  mode?: CheckpointingMode;
  restoredState?: readonly unknown[];
  restoredCheckpointId?: number;
}

/** The file sink driven through the committing-sink operator, as a task drives it. */
function writer(c: Ctx = {}, options: Partial<FileSinkOptions> = {}): SinkHarness<unknown> {
  return new SinkHarness(file({ dir, format: 'jsonl', ...options } as FileSinkOptions), {
    ...c,
    operatorName: 'out',
  });
}

/** The pending parts a checkpoint's operator state holds (every uncommitted committable). */
const parts = (state: readonly unknown[]): FilePendingPart[] =>
  committablesIn(state).flatMap((c) => c.committable as FilePendingPart[]);

/** The cause of what `fn` throws (the operator wraps errors in a UserCodeError naming itself). */
function causeOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return (e as Error).cause;
  }
  throw new Error('expected a throw');
}

const committed = () =>
  readdirSync(dir)
    .filter((f) => !f.startsWith('.'))
    .sort();
const staged = () =>
  readdirSync(dir)
    .filter((f) => f.startsWith('.'))
    .sort();
/** Records in committed files, in file (name) order. */
const output = () =>
  committed().flatMap((f) =>
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l)),
  );

describe('sinks.file: exactly-once (two-phase commit)', () => {
  it('nothing is visible before the checkpoint completes; commit renames to the final name', async () => {
    const w = writer();
    w.write({ a: 1 });
    w.write({ a: 2 });
    expect(committed()).toEqual([]);
    expect(staged()).toHaveLength(1);
    expect(staged()[0]).toMatch(/^\.part-0-0-[0-9a-f]{8}-0\.jsonl\.inprogress$/);
    const state = parts(await w.preCommit(1));
    expect(state).toHaveLength(1);
    expect(state[0].checkpointId).toBe(1);
    expect(state[0].pending).toMatch(/\.jsonl\.pending-1$/);
    expect(staged()).toEqual([state[0].pending]);
    expect(committed()).toEqual([]);
    await w.complete(1);
    expect(committed()).toEqual([state[0].final]);
    expect(state[0].final).toMatch(/^part-0-0-[0-9a-f]{8}-0\.jsonl$/);
    expect(staged()).toEqual([]);
    expect(output()).toEqual([{ a: 1 }, { a: 2 }]);
    // an empty interval seals nothing
    expect(parts(await w.preCommit(2))).toEqual([]);
    await w.close();
  });

  it('rolls over by records and bytes; rolled parts wait for the barrier', async () => {
    const w = writer({}, { rollover: { maxRecords: 2 } });
    for (let i = 0; i < 5; i++) w.write(i);
    expect(committed()).toEqual([]);
    const state = parts(await w.preCommit(1));
    expect(state.map((p) => p.final.split('-').at(-1))).toEqual(['0.jsonl', '1.jsonl', '2.jsonl']);
    await w.complete(1);
    expect(output()).toEqual([0, 1, 2, 3, 4]);
    const b = writer({}, { rollover: { maxBytes: 10 } });
    for (let i = 0; i < 6; i++) b.write('abcd'); // 7 bytes per line: a new part every 2 lines
    expect(parts(await b.preCommit(2)).length).toBe(3);
  });

  it('an aborted checkpoint keeps its parts pending; the next completed one commits them', async () => {
    const w = writer();
    w.write('x');
    await w.preCommit(1);
    w.op.notifyCheckpointAborted(1);
    w.write('y');
    const state = parts(await w.preCommit(2));
    expect(state.map((p) => p.checkpointId)).toEqual([1, 2]);
    await w.complete(1);
    expect(output()).toEqual(['x']);
    await w.complete(2);
    expect(output()).toEqual(['x', 'y']);
    expect(staged()).toEqual([]);
  });

  it('finish does not commit (the final checkpoint does)', async () => {
    const w = writer();
    w.write(1);
    w.finish();
    expect(committed()).toEqual([]);
    await w.preCommit(3);
    await w.complete(3);
    expect(output()).toEqual([1]);
  });

  it('commit is idempotent; a part lost before commit is a typed error', async () => {
    const w = writer();
    w.write(1);
    const [part] = parts(await w.preCommit(1));
    expect(commitPendingPart(dir, part)).toBe('committed');
    expect(commitPendingPart(dir, part)).toBe('already-committed');
    await w.complete(1); // the writer's own commit of an already committed part
    expect(output()).toEqual([1]);
    const lost: FilePendingPart = {
      pending: '.part-0-0-00000000-9.jsonl.pending-1',
      final: 'part-0-0-00000000-9.jsonl',
      checkpointId: 1,
    };
    expect(() => commitPendingPart(dir, lost)).toThrow(FileSinkError);
    expect(() => commitPendingPart(dir, lost)).toThrow(/its records are lost/);
    writeFileSync(join(dir, lost.pending), 'a');
    writeFileSync(join(dir, lost.final), 'b');
    expect(() => commitPendingPart(dir, lost)).toThrow(/already exists/);
  });

  it('restore commits the restored parts and sweeps in-progress and later pending parts', async () => {
    const a = writer();
    a.write('c1');
    const s1 = await a.preCommit(1); // checkpoint 1 completes, but its notification is lost
    a.write('c2');
    await a.preCommit(2); // checkpoint 2 never completes
    a.write('open');
    expect(staged()).toHaveLength(3);
    // attempt 1 restores checkpoint 1
    const b = writer({ attempt: 1, restoredState: s1, restoredCheckpointId: 1 });
    await b.drain(); // the runtime commits the restored checkpoint's parts again
    expect(staged()).toEqual([]);
    expect(output()).toEqual(['c1']);
    b.write('c2');
    await b.preCommit(3);
    await b.complete(3);
    expect(output()).toEqual(['c1', 'c2']);
    expect(committed().every((f) => /^part-0-[01]-[0-9a-f]{8}-\d+\.jsonl$/.test(f))).toBe(true);
  });

  it('restore after the part was committed (notification arrived) commits nothing twice', async () => {
    const a = writer();
    a.write('c1');
    const s1 = await a.preCommit(1);
    await a.complete(1);
    const b = writer({ attempt: 1, restoredState: s1, restoredCheckpointId: 1 });
    await b.drain();
    expect(b.failures).toEqual([]);
    expect(output()).toEqual(['c1']);
  });

  it('rescale 3 -> 1 and 1 -> 2: restored parts are committed once, every stray is swept, current files are not', async () => {
    const ws = [0, 1, 2].map((i) => writer({ subtaskIndex: i, parallelism: 3 }));
    for (const [i, w] of ws.entries()) w.write(`s${i}`);
    const states = await Promise.all(ws.map((w) => w.preCommit(5)));
    for (const [i, w] of ws.entries()) w.write(`late${i}`);
    for (const w of ws) await w.preCommit(6);
    for (const [i, w] of ws.entries()) w.write(`open${i}`);
    const [share] = redistributeOperatorState(states, 1, 'even-split');
    const one = writer({ attempt: 1, parallelism: 1, restoredState: share, restoredCheckpointId: 5 });
    await one.drain();
    expect(staged()).toEqual([]);
    expect(output().sort()).toEqual(['s0', 's1', 's2']);
    one.write('n0');
    const s7 = await one.preCommit(7);
    one.write('n1');
    // 1 -> 2: subtask 0 starts writing before subtask 1 starts; subtask 1 must not touch its files
    const shares = redistributeOperatorState([s7], 2, 'even-split');
    const z = writer({
      attempt: 2,
      subtaskIndex: 0,
      parallelism: 2,
      restoredState: shares[0],
      restoredCheckpointId: 7,
    });
    await z.drain();
    z.write('z');
    const zs = staged();
    expect(zs).toHaveLength(1);
    await writer({
      attempt: 2,
      subtaskIndex: 1,
      parallelism: 2,
      restoredState: shares[1],
      restoredCheckpointId: 7,
    }).drain();
    expect(staged()).toEqual(zs);
    expect(output().sort()).toEqual(['n0', 's0', 's1', 's2']);
  });
});

describe('sinks.file: without exactly-once', () => {
  for (const mode of ['at-least-once', 'none'] as const) {
    it(`${mode}: commits at every barrier, rollover and at finish`, async () => {
      const w = writer({ mode }, { rollover: { maxRecords: 3 } });
      for (let i = 0; i < 4; i++) w.write(i);
      expect(output()).toEqual([0, 1, 2]);
      expect(parts(await w.preCommit(1))).toEqual([]);
      expect(output()).toEqual([0, 1, 2, 3]);
      w.write(4);
      w.finish();
      expect(output()).toEqual([0, 1, 2, 3, 4]);
      expect(staged()).toEqual([]);
    });
  }

  it('a restarted writer sweeps the in-progress part of the failed attempt', async () => {
    const a = writer({ mode: 'at-least-once' });
    a.write(1);
    writer({ mode: 'at-least-once', attempt: 1, restoredState: [], restoredCheckpointId: 4 });
    expect(staged()).toEqual([]);
  });
});

describe('sinks.file: csv and options', () => {
  it('writes the header in every part and quotes fields', async () => {
    const w = writer(
      { mode: 'none' },
      { format: 'csv', csv: { header: ['id', 'text'] }, rollover: { maxRecords: 1 } },
    );
    w.write({ id: 1, text: 'a,"b"' });
    w.write([2, 'line\nbreak']);
    w.finish();
    const files = committed();
    expect(files.every((f) => f.endsWith('.csv'))).toBe(true);
    expect(files.map((f) => readFileSync(join(dir, f), 'utf8'))).toEqual([
      'id,text\n1,"a,""b"""\n',
      'id,text\n2,"line\nbreak"\n',
    ]);
  });

  it('a record it cannot encode is a typed error', async () => {
    const w = writer({ mode: 'none' }, { format: 'csv' });
    expect(() => w.write({ a: 1 })).toThrow(/needs csv.header/);
    expect(causeOf(() => writer({ mode: 'none' }).write(undefined))).toBeInstanceOf(FileSinkError);
  });

  it('checks options up front', async () => {
    const bad: unknown[] = [
      { format: 'jsonl' },
      { dir, format: 'lines' },
      { dir, format: 'jsonl', csv: {} },
      { dir, format: 'csv', csv: { header: [] } },
      { dir, format: 'jsonl', rollover: { maxBytes: 0 } },
      { dir, format: 'jsonl', rollover: { maxRecords: 1.5 } },
      { dir, format: 'jsonl', prefix: '../x' },
    ];
    for (const o of bad) expect(() => file(o as FileSinkOptions)).toThrow(InvalidOptionError);
  });
});

describe('staged names and the sweep rule', () => {
  it('parses staged names of its own prefix and extension only', async () => {
    expect(parseStagedName('.part-3-1-0a0b0c0d-7.jsonl.inprogress', 'part', 'jsonl')).toEqual({
      subtaskIndex: 3,
      checkpointId: undefined,
    });
    expect(parseStagedName('.part-3-1-0a0b0c0d-7.jsonl.pending-12', 'part', 'jsonl')).toEqual({
      subtaskIndex: 3,
      checkpointId: 12,
    });
    expect(parseStagedName('.part-3-1-0a0b0c0d-7.csv.pending-12', 'part', 'jsonl')).toBeNull();
    expect(parseStagedName('.dead-3-1-0a0b0c0d-7.jsonl.pending-12', 'part', 'jsonl')).toBeNull();
    expect(parseStagedName('part-3-1-0a0b0c0d-7.jsonl', 'part', 'jsonl')).toBeNull();
  });

  it('isStray: own index, or index >= parallelism for subtask 0; pending only after the restored checkpoint', async () => {
    const restored = { restored: true, restoredCheckpointId: 5 };
    const inProgress = (i: number) => ({ subtaskIndex: i, checkpointId: undefined });
    const pending = (i: number, c: number) => ({ subtaskIndex: i, checkpointId: c });
    expect(isStray(inProgress(1), 1, 2, restored)).toBe(true);
    expect(isStray(inProgress(1), 0, 2, restored)).toBe(false);
    expect(isStray(inProgress(2), 0, 2, restored)).toBe(true);
    expect(isStray(inProgress(2), 1, 2, restored)).toBe(false);
    expect(isStray(pending(1, 5), 1, 2, restored)).toBe(false);
    expect(isStray(pending(1, 6), 1, 2, restored)).toBe(true);
    expect(isStray(pending(3, 6), 0, 2, restored)).toBe(true);
    expect(isStray(pending(3, 4), 0, 2, restored)).toBe(false);
    expect(isStray(pending(0, 4), 0, 2, { restored: false, restoredCheckpointId: undefined })).toBe(true);
    expect(isStray(pending(0, 9), 0, 2, { restored: true, restoredCheckpointId: undefined })).toBe(false);
    expect(existsSync(dir)).toBe(true);
  });
});
