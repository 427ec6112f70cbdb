/**
 * The probe sink stamps receive time, attempt and the last checkpoint it pre-committed, and
 * crashes (process.exit, spied here) only in the planned subtask on
 * attempt 0, only after a checkpoint completed, writing its crash report first.
 */

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Sink, SinkContext } from '../../../src/api/source.js';
import { probeSink } from '../../../src/cli/demo-probe-sink.js';
import type { ProbeStamp } from '../../../src/cli/demo-records.js';

type Rec = { seq: number } & Partial<ProbeStamp>;

function harness(attempt: number, subtaskIndex: number, file: string, restoredCheckpointId?: number) {
  const delivered: { records: unknown[]; tx: string | null }[] = [];
  const written: Rec[] = [];
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
        preCommit: () => [],
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
  return { writer: sink.createWriter(ctx), delivered, written };
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
    expect(existsSync(file)).toBe(false);
  });

  it('crashes in the planned subtask on attempt 0 only once a checkpoint completed', () => {
    const file = crashFile();
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => {
      throw new Exited();
    });
    const { writer, written } = harness(0, 0, file);
    for (let i = 0; i < 5; i++) writer.write({ seq: i }); // past afterRecords, but no checkpoint yet
    expect(exit).not.toHaveBeenCalled();
    writer.notifyCheckpointComplete?.(1);
    expect(() => writer.write({ seq: 5 })).toThrow(Exited);
    expect(exit).toHaveBeenCalledWith(1);
    expect(written.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]); // the crashing record is not written
    const report = JSON.parse(readFileSync(file, 'utf8'));
    expect(report).toMatchObject({ subtask: 0, recordsReceived: 6, checkpointsCompleted: 1 });
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
    expect(exit).not.toHaveBeenCalled();
  });
});
