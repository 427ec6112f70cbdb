/** What one instance's heartbeat writes under `members.<instanceId>`: JSON, checked when read. */

import { decodeRunStatus, type MemberRunStatus } from './run-status.js';

export interface MemberRecord {
  readonly instanceId: string;
  readonly host: string;
  readonly pid: number;
  /** When the instance joined, ms since the epoch (its own clock). */
  readonly startedAt: number;
  /** Heartbeat counter: 0 at join, +1 per beat. */
  readonly beat: number;
  /** When this beat was sent, ms since the epoch (its own clock; readers time beats themselves). */
  readonly beatAt: number;
  /** The member's detection timeout: readers declare it gone when no beat came for this long. */
  readonly timeoutMs: number;
  /** A cluster job's member: its report of the current run (run-status.ts), resent with every beat. */
  readonly run?: MemberRunStatus;
}

export function encodeMemberRecord(r: MemberRecord): string {
  return JSON.stringify(r);
}

/** The record, or why the value is not one (a reader skips such a key and reports it). */
export function decodeMemberRecord(text: string): MemberRecord | { readonly invalid: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { invalid: `not JSON (${(e as Error).message})` };
  }
  const r = v as Record<string, unknown>;
  if (typeof v !== 'object' || v === null) return { invalid: 'not an object' };
  if (typeof r.instanceId !== 'string' || typeof r.host !== 'string')
    return { invalid: 'no instanceId or host' };
  for (const field of ['pid', 'startedAt', 'beat', 'beatAt', 'timeoutMs'] as const)
    if (typeof r[field] !== 'number' || !Number.isFinite(r[field])) return { invalid: `no numeric ${field}` };
  if (r.run !== undefined && decodeRunStatus(r.run) === null) return { invalid: 'a malformed run report' };
  return v as MemberRecord;
}
