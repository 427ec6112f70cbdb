/** What one instance's heartbeat writes under `members.<instanceId>`: JSON, checked when read. */

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
  return v as MemberRecord;
}
