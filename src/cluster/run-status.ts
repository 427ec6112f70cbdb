/**
 * A member's report of the current run, carried in its heartbeat record (`MemberRecord.run`): the
 * durable, retransmitted copy of what it also publishes on the run's `up` subject (`ready`, `ended`,
 * `done`, `failed`; cluster-checkpoints.ts).
 *
 * Why the heartbeat: core NATS is at most once, and a message published while the connection is cut
 * is gone. The heartbeat is already a KV put every `timeoutMs / 3` that every member watches, and a
 * member whose beats stop reaching the others is timed out (a restart). So the report is resent
 * with every beat at no extra message, and a coordinator that missed a message reads the fact from
 * the next beat it sees: the report arrives within one beat of the connection coming back, or the
 * member is timed out. Every field only grows during a run (a set, or false → true), so a repeat or
 * an old copy changes nothing at the coordinator (its handlers are idempotent).
 *
 * Acknowledgements and declines are not in it: they belong to one checkpoint, and a lost one makes
 * that checkpoint time out (`checkpointing.timeout`) and the next one is triggered — bounded.
 */

import type { FailureKind } from '../errors.js';
import type { MemberMessage } from './cluster-checkpoints.js';

export interface MemberRunStatus {
  /** The run this report is about (`ClusterAssignment.run`); a coordinator ignores other runs'. */
  readonly run: string;
  /** Every task of this member runs. */
  readonly ready: boolean;
  /** Tasks (keys) whose input ended. */
  readonly ended: readonly string[];
  /** Every task of this member finished. */
  readonly done: boolean;
  /** The member's execution failed by itself (a task's error), with its message and kind. */
  readonly failed?: { readonly message: string; readonly kind: FailureKind };
}

export function initialRunStatus(run: string): MemberRunStatus {
  return { run, ready: false, ended: [], done: false };
}

/** The messages the report stands for, for the coordinator's (idempotent) handlers. */
export function runStatusMessages(member: string, status: MemberRunStatus): MemberMessage[] {
  const out: MemberMessage[] = [];
  if (status.ready) out.push({ type: 'ready', member });
  for (const task of status.ended) out.push({ type: 'ended', member, task });
  if (status.done) out.push({ type: 'done', member });
  if (status.failed) out.push({ type: 'failed', member, ...status.failed });
  return out;
}

/** Checks a report read from another member's record (JSON from the wire): the report, or null. */
export function decodeRunStatus(v: unknown): MemberRunStatus | null {
  if (typeof v !== 'object' || v === null) return null;
  const s = v as Record<string, unknown>;
  if (typeof s.run !== 'string' || typeof s.ready !== 'boolean' || typeof s.done !== 'boolean') return null;
  if (!Array.isArray(s.ended) || !s.ended.every((t) => typeof t === 'string')) return null;
  if (s.failed !== undefined) {
    const f = s.failed as Record<string, unknown>;
    if (typeof f !== 'object' || f === null || typeof f.message !== 'string') return null;
    if (f.kind !== 'task' && f.kind !== 'fatal' && f.kind !== 'decline') return null;
  }
  return s as unknown as MemberRunStatus;
}
