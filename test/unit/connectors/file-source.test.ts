import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PollResult, Sink, SinkContext, SinkWriter, SourceReader } from '../../../src/api/source.js';
import type { DeadLetter } from '../../../src/connectors/dead-letter.js';
import { file as fileSink } from '../../../src/connectors/file-sink.js';
import { type FileSourceOptions, file } from '../../../src/connectors/file-source.js';
import { FileSourceError, InvalidOptionError, MalformedRecordError } from '../../../src/errors.js';
import { redistributeOperatorState } from '../../../src/state/redistribute-operator-state.js';
import { SourceOperator } from '../../../src/worker/operators/source-operator.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'weir-file-source-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const ctx = (subtaskIndex = 0, parallelism = 1, restoredState?: readonly unknown[]) => ({
  subtaskIndex,
  parallelism,
  attempt: 0,
  operatorName: 'files',
  restoredState,
});

/** Polls until end (or `limit` polls), returning the records. */
function drain<T>(reader: SourceReader<T>, max = 1000, limit = 100000): { records: T[]; last: PollResult } {
  const records: T[] = [];
  const out = { collect: (v: T) => records.push(v) };
  let last: PollResult = { state: 'more' };
  for (let i = 0; i < limit; i++) {
    const before = records.length;
    last = reader.poll(out, max);
    expect(records.length - before).toBeLessThanOrEqual(max);
    if (last.state !== 'more') break;
  }
  return { records, last };
}

function write(name: string, text: string | Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe('sources.file: bounded reading', () => {
  it('reads every file in path order, at most `max` records per poll', () => {
    write('b.jsonl', '{"f":"b","i":0}\n{"f":"b","i":1}\n');
    write('a.jsonl', '{"f":"a","i":0}\r\n\r\n   \n{"f":"a","i":1}');
    write('c.txt', 'not matched');
    const src = file({ glob: join(dir, '*.jsonl'), format: 'jsonl' });
    expect(src.bounded).toBe(true);
    const { records, last } = drain(src.createReader(ctx()), 1);
    expect(last.state).toBe('end');
    expect(records).toEqual([
      { f: 'a', i: 0 },
      { f: 'a', i: 1 },
      { f: 'b', i: 0 },
      { f: 'b', i: 1 },
    ]);
  });

  it("lines: empty lines are records (''), CRLF is stripped, a final line without newline is emitted", () => {
    const p = write('x.txt', 'one\r\n\ntwo\r\nthree');
    expect(drain(file({ path: p, format: 'lines' }).createReader(ctx())).records).toEqual([
      'one',
      '',
      'two',
      'three',
    ]);
  });

  it('deals files round-robin to subtasks by sorted path', () => {
    const paths = ['3', '1', '2', '0'].map((n) => write(`${n}.txt`, `${n}\n`));
    const src = file({ paths, format: 'lines' });
    expect(drain(src.createReader(ctx(0, 2))).records).toEqual(['0', '2']);
    expect(drain(src.createReader(ctx(1, 2))).records).toEqual(['1', '3']);
    expect(drain(src.createReader(ctx(2, 5))).records).toEqual(['2']);
    expect(drain(src.createReader(ctx(4, 5))).records).toEqual([]);
  });

  it('csv with a header gives objects; quoted newlines, quotes, delimiters and CRLF are exact', () => {
    const p = write('t.csv', 'id;text\r\n1;"two\r\nlines"\r\n\r\n2;"say ""hi""; ok"\r\n3;é€');
    const src = file({ path: p, format: 'csv', csv: { header: true, delimiter: ';' } });
    expect(drain(src.createReader(ctx())).records).toEqual([
      { id: '1', text: 'two\r\nlines' },
      { id: '2', text: 'say "hi"; ok' },
      { id: '3', text: 'é€' },
    ]);
    const raw = file({ path: p, format: 'csv', csv: { delimiter: ';' } });
    expect(drain(raw.createReader(ctx())).records[0]).toEqual(['id', 'text']);
  });

  it('a missing file and a glob without matches are typed errors naming them', () => {
    const missing = join(dir, 'nope.jsonl');
    const r = file({ path: missing, format: 'jsonl' }).createReader(ctx());
    expect(() => drain(r)).toThrow(FileSourceError);
    expect(() => drain(file({ path: missing, format: 'jsonl' }).createReader(ctx()))).toThrow(
      `${missing}: does not exist`,
    );
    expect(() => file({ glob: join(dir, '*.none'), format: 'lines' }).createReader(ctx())).toThrow(
      'matches no file',
    );
  });

  it('checks options up front', () => {
    const bad: unknown[] = [
      { format: 'jsonl' },
      { path: 'a', paths: ['b'], format: 'jsonl' },
      { path: 'a', format: 'xml' },
      { path: 'a', format: 'jsonl', csv: { header: true } },
      { path: 'a', format: 'csv', csv: { delimiter: '"' } },
      { path: 'a', format: 'csv', csv: { delimiter: ',,' } },
      { path: 'a', format: 'jsonl', onError: 'ignore' },
      { path: 'a', format: 'jsonl', deadLetter: fileSink({ dir, format: 'jsonl' }) },
      { path: 'a', format: 'jsonl', onError: 'skip', deadLetter: {} },
    ];
    for (const o of bad) expect(() => file(o as FileSourceOptions)).toThrow(InvalidOptionError);
  });
});

describe('sources.file: positions', () => {
  it('a restore from any snapshot, at any parallelism, resumes every file exactly (seeded)', () => {
    const lines = (f: number, n: number) =>
      Array.from({ length: n }, (_, i) => JSON.stringify({ f, i, s: 'é'.repeat(i % 5) })).join(i2(f));
    const i2 = (f: number) => (f % 2 === 0 ? '\n' : '\r\n');
    const paths = [0, 1, 2, 3, 4].map((f) =>
      write(`f${f}.jsonl`, lines(f, 40 + f * 13) + (f === 3 ? '' : '\n')),
    );
    const all = paths.flatMap((_, f) => Array.from({ length: 40 + f * 13 }, (_, i) => `${f}/${i}`)).sort();
    const src = file<{ f: number; i: number }>({ paths, format: 'jsonl' });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.integer({ min: 1, max: 37 }), { minLength: 1, maxLength: 8 }),
        (p1, p2, polls) => {
          // first run: poll each subtask a few times, then snapshot and "fail"
          const emitted: string[] = [];
          const states: unknown[][] = [];
          for (let s = 0; s < p1; s++) {
            const reader = src.createReader(ctx(s, p1));
            const out = { collect: (v: { f: number; i: number }) => emitted.push(`${v.f}/${v.i}`) };
            for (const max of polls) reader.poll(out, max);
            states.push(reader.snapshotState(1));
            reader.close?.();
          }
          // restore at p2 and read to the end
          const shares = redistributeOperatorState(states, p2, 'even-split');
          for (let s = 0; s < p2; s++) {
            const { records } = drain(src.createReader(ctx(s, p2, shares[s])), 7);
            for (const v of records) emitted.push(`${v.f}/${v.i}`);
          }
          expect(emitted.sort()).toEqual(all);
        },
      ),
      { numRuns: 60, seed: 42 },
    );
  });

  it('csv positions keep the header and count physical lines', () => {
    const p = write('h.csv', 'a,b\n1,"x\ny"\n2,z\n');
    const src = file({ path: p, format: 'csv', csv: { header: true } });
    const r = src.createReader(ctx());
    const got: unknown[] = [];
    r.poll({ collect: (v) => got.push(v) }, 1);
    expect(got).toEqual([{ a: '1', b: 'x\ny' }]);
    const state = r.snapshotState(1);
    expect(state).toEqual([{ file: p, offset: 12, line: 3, header: ['a', 'b'] }]);
    expect(drain(src.createReader(ctx(0, 1, state))).records).toEqual([{ a: '2', b: 'z' }]);
  });
});

describe('sources.file: malformed input', () => {
  const cases: [string, FileSourceOptions['format'], string | Uint8Array, number, RegExp, unknown[]][] = [
    ['invalid JSON', 'jsonl', '{"a":1}\n{"a":\n{"a":3}\n', 2, /invalid JSON/, [{ a: 1 }, { a: 3 }]],
    [
      'invalid UTF-8',
      'lines',
      new Uint8Array([0x61, 0x0a, 0xff, 0xfe, 0x0a, 0x62, 0x0a]),
      2,
      /invalid UTF-8/,
      ['a', 'b'],
    ],
    [
      'a quote in an unquoted field',
      'csv',
      'a,b\nx"y,1\nc,d\n',
      2,
      /quote inside unquoted field 1/,
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    ],
    [
      'text after a closing quote',
      'csv',
      'a,b\n"x"y,1\nc,d\n',
      2,
      /after the closing quote/,
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    ],
    [
      'an unterminated quote at end of file',
      'csv',
      'a,b\n1,"x\ny',
      2,
      /unterminated quoted field/,
      [['a', 'b']],
    ],
  ];
  for (const [what, format, text, line, reason, good] of cases) {
    it(`${what}: 'fail' names file, line and reason; 'skip' counts and dead-letters it`, () => {
      const p = write(`bad.${format}`, text);
      let err: unknown;
      try {
        drain(file({ path: p, format }).createReader(ctx()));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(MalformedRecordError);
      expect(err).toMatchObject({ file: p, line, reason: expect.stringMatching(reason) });
      expect((err as Error).message).toMatch(
        new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${line}: malformed record: `),
      );

      const letters: DeadLetter[] = [];
      const src = file({ path: p, format, onError: 'skip' });
      const reader = src.createReader({
        ...ctx(),
        deadLetters: { collect: (d: DeadLetter) => letters.push(d) },
      });
      expect(drain(reader).records).toEqual(good);
      expect(reader.metrics?.()).toMatchObject({ skippedLines: 1, records: good.length });
      expect(letters).toHaveLength(1);
      expect(letters[0]).toMatchObject({ file: p, line, reason: expect.stringMatching(reason) });
    });
  }

  it('a csv row whose field count differs from the header is malformed; a bad header always fails', () => {
    const p = write('n.csv', 'a,b\n1,2\n1,2,3\n4,5\n');
    expect(() => drain(file({ path: p, format: 'csv', csv: { header: true } }).createReader(ctx()))).toThrow(
      `${p}:3: malformed record: expected 2 fields (as the header), got 3`,
    );
    const skip = file({ path: p, format: 'csv', csv: { header: true }, onError: 'skip' }).createReader(ctx());
    expect(drain(skip).records).toEqual([
      { a: '1', b: '2' },
      { a: '4', b: '5' },
    ]);
    const h = write('h.csv', 'a,"b\n1,2\n');
    const bad = file({ path: h, format: 'csv', csv: { header: true }, onError: 'skip' }).createReader(ctx());
    expect(() => drain(bad)).toThrow(/:1: malformed record: header: unterminated/);
  });
});

describe('sources.file: follow', () => {
  it('tails files: idle at the end, a partial line waits for its newline, new bytes are picked up', () => {
    const p = write('log.txt', 'a\nb');
    const src = file({ path: p, format: 'lines', follow: true });
    expect(src.bounded).toBe(false);
    const r = src.createReader(ctx());
    const got: string[] = [];
    const out = { collect: (v: unknown) => got.push(v as string) };
    let res = r.poll(out, 100);
    while (res.state === 'more') res = r.poll(out, 100);
    expect(res.state).toBe('idle');
    expect(got).toEqual(['a']);
    appendFileSync(p, 'c\nd');
    while (r.poll(out, 100).state === 'more');
    expect(got).toEqual(['a', 'bc']);
    expect(r.snapshotState(1)).toEqual([{ file: p, offset: 5, line: 2 }]);
    appendFileSync(p, '\n');
    while (r.poll(out, 100).state === 'more');
    expect(got).toEqual(['a', 'bc', 'd']);
    r.close?.();
  });

  it('follows several files round-robin; a CSV record open in quotes waits for its end', () => {
    const a = write('a.csv', 'x,"1\n');
    const b = write('b.csv', 'y,2\n');
    const r = file({ paths: [a, b], format: 'csv', follow: true }).createReader(ctx());
    const got: unknown[] = [];
    const out = { collect: (v: unknown) => got.push(v) };
    const settle = () => {
      let res = r.poll(out, 1);
      while (res.state === 'more') res = r.poll(out, 1);
      return res.state;
    };
    expect(settle()).toBe('idle');
    expect(got).toEqual([['y', '2']]);
    appendFileSync(a, 'more"\n');
    appendFileSync(b, 'z,3\n');
    expect(settle()).toBe('idle');
    expect(got).toHaveLength(3);
    expect(got).toContainEqual(['x', '1\nmore']);
    expect(got).toContainEqual(['z', '3']);
    expect(r.snapshotState(1)).toEqual([
      { file: a, offset: 11, line: 2 },
      { file: b, offset: 8, line: 2 },
    ]);
    r.close?.();
  });

  it('a truncated or vanished file is a typed error naming it', () => {
    const p = write('t.txt', 'a\nb\n');
    const r = file({ path: p, format: 'lines', follow: true }).createReader(ctx());
    const out = { collect: () => {} };
    while (r.poll(out, 10).state === 'more');
    truncateSync(p, 1);
    expect(() => r.poll(out, 10)).toThrow(`file source: ${p}: was truncated while followed`);
    const q = write('v.txt', 'a\n');
    const r2 = file({ path: q, format: 'lines', follow: true }).createReader(ctx());
    while (r2.poll(out, 10).state === 'more');
    unlinkSync(q);
    expect(() => r2.poll(out, 10)).toThrow(`file source: ${q}: vanished while followed`);
    r.close?.();
    r2.close?.();
  });

  it('restoring at a position beyond the end of a file is a typed error', () => {
    const p = write('s.txt', 'a\n');
    const r = file({ path: p, format: 'lines' }).createReader(ctx(0, 1, [{ file: p, offset: 10, line: 3 }]));
    expect(() => drain(r)).toThrow(/shorter than the restored position 10/);
  });
});

/** A sink that records its writers' calls. */
function recordingSink(): { sink: Sink<DeadLetter>; calls: string[]; written: DeadLetter[] } {
  const calls: string[] = [];
  const written: DeadLetter[] = [];
  const sink: Sink<DeadLetter> = {
    type: 'recording',
    name: 'dead',
    createWriter(c: SinkContext): SinkWriter<DeadLetter> {
      calls.push(`create ${JSON.stringify(c.restoredState)}`);
      return {
        write: (d) => written.push(d),
        preCommit: (id) => {
          calls.push(`preCommit ${id}`);
          return [`sealed-${id}`];
        },
        notifyCheckpointComplete: (id) => calls.push(`complete ${id}`),
        notifyCheckpointAborted: (id) => calls.push(`aborted ${id}`),
        finish: () => calls.push('finish'),
        close: () => calls.push('close'),
      };
    },
  };
  return { sink, calls, written };
}

const sinkContext = (
  restoredState: readonly unknown[] | undefined,
  mode: SinkContext['checkpointingMode'] = 'exactly-once',
  restoredCheckpointId?: number,
): SinkContext => ({
  ...ctx(),
  checkpointingMode: mode,
  restoredState,
  restoredCheckpointId,
  deliver: () => {
    throw new Error('not a collect sink');
  },
});

describe('SourceOperator with a dead-letter sink', () => {
  it('drives the sink with the source and keeps its entries apart in the snapshot', async () => {
    const p = write('d.jsonl', '1\nx\n2\n');
    const { sink, calls, written } = recordingSink();
    const src = file({ path: p, format: 'jsonl', onError: 'skip', deadLetter: sink });
    const out: unknown[] = [];
    const op = new SourceOperator(
      1,
      'files',
      'u',
      ctx(),
      { collect: (v) => out.push(v) },
      src,
      undefined,
      (r) => sinkContext(r),
    );
    while (op.poll(10).state === 'more');
    expect(out).toEqual([1, 2]);
    expect(written).toEqual([
      { file: p, line: 2, reason: expect.stringMatching(/^invalid JSON/), text: 'x' },
    ]);
    const snap = { operatorState: await op.snapshotState(7).operatorState };
    expect(snap.operatorState).toEqual([
      { file: p, offset: 6, line: 3 },
      { deadLetterSinkState: 'sealed-7' },
    ]);
    op.notifyCheckpointAborted(6);
    op.notifyCheckpointComplete(7);
    op.finish();
    op.close();
    expect(op.counters()).toMatchObject({ skippedLines: 1 });
    expect(calls).toEqual(['create undefined', 'preCommit 7', 'aborted 6', 'complete 7', 'finish', 'close']);

    // restore: the source gets its own entries, the sink its unwrapped ones
    const { sink: sink2, calls: calls2 } = recordingSink();
    const src2 = file({ path: p, format: 'jsonl', onError: 'skip', deadLetter: sink2 });
    const op2 = new SourceOperator(
      1,
      'files',
      'u',
      ctx(),
      { collect: () => {} },
      src2,
      snap.operatorState,
      (r) => sinkContext(r),
    );
    expect(calls2).toEqual(['create ["sealed-7"]']);
    expect(op2.poll(10).state).toBe('end');
  });

  it('dead letters go through a transactional file sink exactly once across a restore', async () => {
    const p = write('e.jsonl', 'bad1\n1\nbad2\n2\nbad3\n');
    const dlDir = join(dir, 'dead');
    const mk = (restored?: readonly unknown[], id?: number) =>
      new SourceOperator(
        1,
        'files',
        'u',
        ctx(),
        { collect: () => {} },
        file({
          path: p,
          format: 'jsonl',
          onError: 'skip',
          deadLetter: fileSink({ dir: dlDir, format: 'jsonl' }),
        }),
        restored,
        (r) => sinkContext(r, 'exactly-once', id),
      );
    const op = mk();
    op.open();
    op.poll(2); // bad1, 1, bad2, 2 consumed (two records emitted)
    const snap = await op.snapshotState(1).operatorState; // seals bad1 and bad2
    op.poll(10); // bad3 into a new in-progress part
    // failure before checkpoint 1's notification: restore from checkpoint 1
    const op2 = mk(snap, 1);
    op2.open(); // commits the restored dead letters (bad1, bad2) again
    while (op2.poll(10).state === 'more');
    op2.finish();
    const snap2 = await op2.snapshotState(2).operatorState;
    op2.notifyCheckpointComplete(2);
    await op2.settle();
    op2.close();
    expect(snap2.filter((e) => 'deadLetterSinkState' in (e as object))).toHaveLength(1);
    const files = readdirSync(dlDir);
    expect(files.every((f) => f.endsWith('.jsonl') && !f.startsWith('.'))).toBe(true);
    const lines = files
      .flatMap((f) => readFileSync(join(dlDir, f), 'utf8').trim().split('\n'))
      .map((l) => JSON.parse(l).text);
    expect(lines.sort()).toEqual(['bad1', 'bad2', 'bad3']);
  });

  it('refuses restored dead-letter entries when the source no longer has a dead-letter sink', () => {
    const p = write('f.jsonl', '1\n');
    expect(
      () =>
        new SourceOperator(
          1,
          'files',
          'u',
          ctx(),
          { collect: () => {} },
          file({ path: p, format: 'jsonl' }),
          [{ deadLetterSinkState: 'x' }],
          (r) => sinkContext(r),
        ),
    ).toThrow(/no longer names a deadLetter sink/);
  });
});
