/**
 * The probe sink stamps receive time, attempt and the last checkpoint it pre-committed, and
 * crashes (process.exit, spied here) only in the planned subtask on attempt 0, only at a barrier
 * after enough records and a completed checkpoint, after the inner sink pre-committed, writing its
 * crash report first.
 */

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Sink, SinkContext } from '../../../src/api/source.js';
import { probeSink } from '../../../src/demo/demo-probe-sink.js';
import type { ProbeStamp } from '../../../src/demo/demo-records.js';

type Rec = { seq: number } & Partial<ProbeStamp>;

function harness(attempt: number, subtaskIndex: number, file: string, restoredCheckpointId?: number) {
  const delivered: { records: unknown[]; tx: string | null }[] = [];
  const written: Rec[] = [];
  const preCommitted: number[] = [];
  const inner: Sink<Rec & ProbeStamp> = {
    type: 'fake',
    name: 'fake',
    createWriter(ctx) {
      const open: unknown[] = [];
      return {
        write(v) {
          written.push(v);
          open.push(v);
        },
        preCommit: (id) => {
          preCommitted.push(id);
          return [];
        },
        notifyCheckpointComplete: (id) => ctx.deliver('fake', open.splice(0), `tx${id}`),
      };
    },
  };
  const ctx: SinkContext = {
    subtaskIndex,
    parallelism: 2,
    attempt,
    operatorName: 'probe',
    checkpointingMode: 'exactly-once',
    restoredState: undefined,
    restoredCheckpointId,
    deliver: (_name, records, tx) => delivered.push({ records, tx }),
  };
  const sink = probeSink<Rec>(inner, { telemetry: null, crash: { subtask: 0, afterRecords: 3, file } });
  return { writer: sink.createWriter(ctx), delivered, written, preCommitted };
}

class Exited extends Error {}

const dirs: string[] = [];
function crashFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'weir-probe-'));
  dirs.push(dir);
  return join(dir, 'crash.json');
}

describe('probeSink', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('stamps receive time, attempt and the checkpoint each record was sealed after', () => {
    const file = crashFile();
    const { writer, delivered, written } = harness(1, 0, file, 4);
    const before = performance.timeOrigin + performance.now();
    writer.write({ seq: 1 });
    writer.write({ seq: 2 });
    writer.preCommit?.(7);
    writer.write({ seq: 3 });
    expect(written.map((r) => r.attempt)).toEqual([1, 1, 1]);
    expect(written.map((r) => r.sealedAfter)).toEqual([4, 4, 7]);
    expect(written.every((r) => r.receivedAt! >= before)).toBe(true);
    writer.notifyCheckpointComplete?.(7);
    expect(delivered).toHaveLength(1);
    expect(delivered[0].tx).toBe('tx7');
    // attempt 1: never crashes, however many records
    for (let i = 0; i < 10; i++) writer.write({ seq: 10 + i });
    writer.preCommit?.(8);
    expect(existsSync(file)).toBe(false);
  });

  it('crashes in the planned subtask on attempt 0 at the first barrier after enough records and a completed checkpoint', () => {
    const file = crashFile();
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => {
      throw new Exited();
    });
    const { writer, written, preCommitted } = harness(0, 0, file);
    writer.write({ seq: 0 });
    writer.preCommit?.(1); // a barrier, but too few records and no completed checkpoint
    for (let i = 1; i < 5; i++) writer.write({ seq: i }); // past afterRecords: no crash between barriers
    writer.preCommit?.(2); // enough records, but no checkpoint completed yet
    expect(exit).not.toHaveBeenCalled();
    writer.notifyCheckpointComplete?.(1);
    writer.write({ seq: 5 });
    expect(exit).not.toHaveBeenCalled();
    expect(() => writer.preCommit?.(3)).toThrow(Exited);
    expect(exit).toHaveBeenCalledWith(1);
    expect(preCommitted).toEqual([1, 2, 3]); // the inner sink pre-committed before the crash
    expect(written.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    const report = JSON.parse(readFileSync(file, 'utf8'));
    expect(report).toMatchObject({ subtask: 0, recordsReceived: 6, checkpointsCompleted: 1, atBarrierOf: 3 });
    expect(typeof report.at).toBe('number');
  });

  it('does not crash in another subtask', () => {
    const file = crashFile();
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => {
      throw new Exited();
    });
    const { writer } = harness(0, 1, file);
    writer.notifyCheckpointComplete?.(1);
    for (let i = 0; i < 10; i++) writer.write({ seq: i });
    writer.preCommit?.(2);
    expect(exit).not.toHaveBeenCalled();
  });
});
