/**
 * The demo's measuring sink stage: wraps the real sink and, per record, stamps the receive time
 * and the attempt (the end of the end-to-end latency), reports throughput over the telemetry
 * channel, and, when a crash is planned, kills its worker thread at the first checkpoint barrier
 * after enough records passed AND at least one checkpoint completed in this subtask — so
 * recovery always has a checkpoint to restore from. It dies right after the inner sink
 * pre-committed, before it acknowledges: the checkpoint can never complete, and the crash lands
 * in the window that tells the modes apart (the file sink under at-least-once has already made
 * the part visible, under exactly-once the part is only pending and is discarded on restore).
 * The crash time is written to a file first: a dying worker's memory is lost.
 *
 * It also stamps the last checkpoint it pre-committed before each record (`sealedAfter`): the
 * inner sink (the file sink) makes a record visible at the first checkpoint after that one (under
 * exactly-once when the checkpoint completes, under at-least-once at its barrier), which lets the
 * main thread compute when each record became visible without the runtime's help.
 */

import { writeFileSync } from 'node:fs';
import {
  type CommittingSink,
  type CommittingSinkWriter,
  isCommittingSink,
  type SinkWriterContext,
} from '../api/committing-sink.js';
import type { Sink, SinkContext, SinkWriter } from '../api/source.js';
import type { ProbeStamp } from './demo-records.js';
import { type TelemetryPoster, wallClockMs } from './demo-telemetry.js';

export interface CrashPlan {
  /** Sink subtask that crashes (on attempt 0 only). */
  readonly subtask: number;
  /**
   * Records that subtask receives before it crashes, at the next barrier (if a checkpoint has
   * completed by then).
   */
  readonly afterRecords: number;
  /** Where the crashing worker writes its {@link CrashReport} just before it exits. */
  readonly file: string;
}

export interface CrashReport {
  /** Wall-clock ms of the crash. */
  readonly at: number;
  readonly subtask: number;
  readonly recordsReceived: number;
  /** Checkpoints this subtask had seen complete when it crashed (≥ 1 by construction). */
  readonly checkpointsCompleted: number;
  /** The checkpoint whose barrier it crashed at (pre-committed, never acknowledged). */
  readonly atBarrierOf: number;
}

export interface ProbeOptions {
  readonly telemetry: TelemetryPoster | null;
  readonly crash: CrashPlan | null;
}

/** Wraps a committing sink (the file sink): the probe stamps and counts what its writer gets. */
export function probeSink<T extends object>(
  inner: CommittingSink<T & ProbeStamp, unknown>,
  options: ProbeOptions,
): CommittingSink<T, unknown>;
export function probeSink<T extends object>(inner: Sink<T & ProbeStamp>, options: ProbeOptions): Sink<T>;
export function probeSink<T extends object>(
  inner: Sink<T & ProbeStamp> | CommittingSink<T & ProbeStamp, unknown>,
  options: ProbeOptions,
): Sink<T> | CommittingSink<T, unknown> {
  if (isCommittingSink(inner))
    return committingProbeSink<T>(inner as CommittingSink<T & ProbeStamp, unknown>, options);
  return {
    type: `probe(${inner.type})`,
    name: inner.name,
    createWriter(ctx: SinkContext): SinkWriter<T> {
      return new ProbeWriter<T>(inner.createWriter(ctx), ctx, options);
    },
  };
}

function committingProbeSink<T extends object>(
  inner: CommittingSink<T & ProbeStamp, unknown>,
  options: ProbeOptions,
): CommittingSink<T, unknown> {
  return {
    ...inner,
    type: `probe(${inner.type})`,
    createWriter(ctx: SinkWriterContext): CommittingSinkWriter<T, unknown> {
      const w = inner.createWriter(ctx);
      const p = new ProbeWriter<T>({ write: (v) => w.write(v) }, ctx, options);
      return {
        write: (v) => p.write(v),
        preCommit(checkpointId) {
          const c = w.preCommit(checkpointId);
          p.preCommit(checkpointId); // may end the thread: after the inner sink pre-committed
          return c;
        },
        notifyCheckpointComplete(checkpointId) {
          p.notifyCheckpointComplete(checkpointId);
          w.notifyCheckpointComplete?.(checkpointId);
        },
        finish() {
          p.finish();
          return w.finish?.();
        },
        abort: () => w.abort?.(),
        close: () => w.close?.(),
      };
    },
  };
}

class ProbeWriter<T extends object> implements SinkWriter<T> {
  readonly #inner: SinkWriter<T & ProbeStamp>;
  readonly #ctx: Pick<SinkContext, 'subtaskIndex' | 'attempt' | 'restoredCheckpointId'>;
  readonly #telemetry: TelemetryPoster | null;
  /** Armed only on attempt 0 in the planned subtask. */
  readonly #crash: CrashPlan | null;
  #received = 0;
  #unreported = 0;
  #checkpointsCompleted = 0;
  #sealedAfter: number;

  constructor(
    inner: SinkWriter<T & ProbeStamp>,
    ctx: Pick<SinkContext, 'subtaskIndex' | 'attempt' | 'restoredCheckpointId'>,
    options: ProbeOptions,
  ) {
    this.#inner = inner;
    this.#ctx = ctx;
    this.#sealedAfter = ctx.restoredCheckpointId ?? 0;
    this.#telemetry = options.telemetry;
    const c = options.crash;
    this.#crash = c && ctx.attempt === 0 && ctx.subtaskIndex === c.subtask ? c : null;
  }

  write(value: T): void {
    const now = wallClockMs();
    const stamped = value as T & ProbeStamp;
    stamped.receivedAt = now;
    stamped.attempt = this.#ctx.attempt;
    stamped.sealedAfter = this.#sealedAfter;
    this.#received++;
    this.#unreported++;
    if (this.#telemetry?.due(now)) this.#report(now);
    this.#inner.write(stamped);
  }

  preCommit(checkpointId: number): unknown[] {
    const state = this.#inner.preCommit?.(checkpointId) ?? [];
    this.#sealedAfter = checkpointId;
    if (this.#crash && this.#checkpointsCompleted > 0 && this.#received >= this.#crash.afterRecords) {
      this.#die(this.#crash, wallClockMs(), checkpointId);
    }
    return state;
  }

  notifyCheckpointComplete(checkpointId: number): void {
    this.#checkpointsCompleted++;
    this.#inner.notifyCheckpointComplete?.(checkpointId);
  }

  notifyCheckpointAborted(checkpointId: number): void {
    this.#inner.notifyCheckpointAborted?.(checkpointId);
  }

  finish(): void {
    this.#report(wallClockMs());
    this.#inner.finish?.();
  }

  close(): void {
    this.#inner.close?.();
  }

  #report(now: number): void {
    if (!this.#telemetry) return;
    this.#telemetry.post({
      kind: 'sink',
      subtask: this.#ctx.subtaskIndex,
      attempt: this.#ctx.attempt,
      records: this.#unreported,
      t: now,
    });
    this.#unreported = 0;
  }

  #die(plan: CrashPlan, now: number, checkpointId: number): never {
    this.#report(now);
    const report: CrashReport = {
      at: now,
      subtask: this.#ctx.subtaskIndex,
      recordsReceived: this.#received,
      checkpointsCompleted: this.#checkpointsCompleted,
      atBarrierOf: checkpointId,
    };
    writeFileSync(plan.file, JSON.stringify(report));
    // process.exit in a worker thread ends that thread only: the runtime sees a dead task.
    process.exit(1);
  }
}
