/**
 * The member view's decisions, scripted on an injected clock: who joins when, who leaves when and
 * why; replayed keys wait for proof of life; duplicate deliveries refresh nothing.
 */
import { describe, expect, it } from 'vitest';
import type { MemberRecord } from '../../../src/cluster/member-record.js';
import {
  emptyMemberView,
  type MembershipChange,
  type MemberView,
  type MemberViewEvent,
  stepMemberView,
} from '../../../src/cluster/member-view.js';

const record = (instanceId: string, beat = 0, timeoutMs = 1000): MemberRecord => ({
  instanceId,
  host: 'h',
  pid: 1,
  startedAt: 0,
  beat,
  beatAt: 0,
  timeoutMs,
});
const put = (id: string, revision: number, timeoutMs = 1000): MemberViewEvent => ({
  kind: 'put',
  record: record(id, revision, timeoutMs),
  revision,
  serverTime: 0,
});

/** Runs `script` ([time, event]) and returns the changes as `join a@t` / `leave a timeout@t`. */
function run(view: MemberView, script: [number, MemberViewEvent][]): { view: MemberView; log: string[] } {
  const log: string[] = [];
  for (const [now, event] of script) {
    const { next, changes } = stepMemberView(view, event, now);
    view = next;
    for (const c of changes as MembershipChange[])
      log.push(
        c.kind === 'join'
          ? `join ${c.member.record.instanceId}@${now}`
          : `leave ${c.instanceId} ${c.reason}@${now}`,
      );
  }
  return { view, log };
}

describe('member view', () => {
  it('a key written after the start joins at once; it leaves at the first tick past its timeout', () => {
    const { view, log } = run(emptyMemberView(10), [
      [0, put('a', 11)],
      [400, put('a', 12)],
      [1400, { kind: 'tick' }], // exactly timeoutMs since the beat at 400: not yet
      [1401, { kind: 'tick' }],
    ]);
    expect(log).toEqual(['join a@0', 'leave a timeout@1401']);
    expect(view.live.size).toBe(0);
  });

  it('a replayed key (revision <= start) is pending until a newer revision, and dropped silently if none comes', () => {
    const { view, log } = run(emptyMemberView(10), [
      [0, put('dead', 3)],
      [0, put('alive', 9)],
      [300, put('alive', 9)], // redelivery of the same revision proves nothing
      [333, put('alive', 14)],
      [1100, { kind: 'tick' }],
    ]);
    expect(log).toEqual(['join alive@333']);
    expect([...view.live.keys()]).toEqual(['alive']);
    expect(view.pending.size).toBe(0);
  });

  it('a delete is a leave (left) for a live member, nothing for a pending one; an old revision is ignored', () => {
    const { log } = run(emptyMemberView(5), [
      [0, put('a', 6)],
      [0, put('p', 2)],
      [10, { kind: 'delete', instanceId: 'p', revision: 7 }],
      [20, { kind: 'delete', instanceId: 'a', revision: 4 }], // older than a's put: stale delivery
      [30, { kind: 'delete', instanceId: 'a', revision: 8 }],
    ]);
    expect(log).toEqual(['join a@0', 'leave a left@30']);
  });

  it("each member's own timeout counts, and a member that beats again after a timeout rejoins", () => {
    const { log } = run(emptyMemberView(0), [
      [0, put('fast', 1, 100)],
      [0, put('slow', 2, 5000)],
      [101, { kind: 'tick' }],
      [200, put('fast', 3, 100)],
      [4000, { kind: 'tick' }],
      [5001, { kind: 'tick' }],
    ]);
    expect(log).toEqual([
      'join fast@0',
      'join slow@0',
      'leave fast timeout@101',
      'join fast@200',
      'leave fast timeout@4000',
      'leave slow timeout@5001',
    ]);
  });
});
