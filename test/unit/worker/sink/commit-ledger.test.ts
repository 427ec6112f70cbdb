// The committing sink's bookkeeping as scripted sequences of events, plus a seeded randomized
// run checking the invariants over many interleavings.
import { describe, expect, it } from 'vitest';
import {
  type CommitLedger,
  type CommitRetryPolicy,
  commitRetryDelay,
  committablesFor,
  committedThrough,
  emptyLedger,
  idle,
  type LedgerEffect,
  type LedgerEvent,
  step,
} from '../../../../src/worker/sink/commit-ledger.js';

const POLICY: CommitRetryPolicy = { retries: 2, backoffMs: 10, maxBackoffMs: 15 };

function script(
  start: CommitLedger,
  events: LedgerEvent[],
): { ledger: CommitLedger; effects: LedgerEffect[][] } {
  let ledger = start;
  const effects: LedgerEffect[][] = [];
  for (const e of events) {
    const r = step(ledger, e, POLICY);
    ledger = r.next;
    effects.push(r.effects);
  }
  return { ledger, effects };
}

const started = (checkpointId: number): LedgerEvent => ({ kind: 'pre-commit-started', checkpointId });
// `sealed(id)` seals `c<id>`; `sealed(id, undefined)` seals nothing to commit.
const sealed = (checkpointId: number, ...committable: [unknown?]): LedgerEvent => ({
  kind: 'pre-committed',
  checkpointId,
  subtaskIndex: 0,
  committable: committable.length > 0 ? committable[0] : `c${checkpointId}`,
});
const complete = (checkpointId: number): LedgerEvent => ({ kind: 'checkpoint-complete', checkpointId });
const commitIds = (effects: LedgerEffect[]) =>
  effects.flatMap((e) => (e.kind === 'commit' ? [e.entry.checkpointId] : []));

describe('commit ledger: exactly-once', () => {
  it('commits a committable only after its checkpoint completed, then forgets it', () => {
    const { ledger, effects } = script(emptyLedger('exactly-once'), [started(1), sealed(1), complete(1)]);
    expect(commitIds(effects[1])).toEqual([]); // pre-committed: stored, not committed
    expect(commitIds(effects[2])).toEqual([1]);
    expect(committablesFor(ledger, 1)).toHaveLength(1); // still listed while the commit runs
    const after = step(ledger, { kind: 'commit-succeeded' }, POLICY).next;
    expect(committablesFor(after, 5)).toEqual([]);
    expect(idle(after)).toBe(true);
  });

  it('a snapshot lists uncommitted committables of its checkpoint and earlier ones only', () => {
    const { ledger } = script(emptyLedger('exactly-once'), [
      started(1),
      sealed(1),
      started(2),
      started(3),
      sealed(3),
    ]);
    // checkpoint 2 still sealing, 3 resolved first: the snapshot of 1 must not list 3
    expect(committablesFor(ledger, 1).map((e) => e.checkpointId)).toEqual([1]);
    expect(committablesFor(ledger, 3).map((e) => e.checkpointId)).toEqual([1, 3]);
  });

  it('an aborted checkpoint rolls forward: the next completion commits both, in order, one at a time', () => {
    const { ledger: l0, effects } = script(emptyLedger('exactly-once'), [
      started(1),
      sealed(1),
      started(2),
      sealed(2),
      complete(2),
    ]);
    expect(commitIds(effects[4])).toEqual([1]);
    const r1 = step(l0, { kind: 'commit-succeeded' }, POLICY);
    expect(commitIds(r1.effects)).toEqual([2]);
    const r = step(r1.next, { kind: 'commit-succeeded' }, POLICY);
    expect(r.effects).toEqual([]);
    expect(r.next.pending).toEqual([]);
  });

  it('nothing to commit (undefined committable) leaves nothing pending', () => {
    const { ledger, effects } = script(emptyLedger('exactly-once'), [
      started(1),
      sealed(1, undefined),
      complete(1),
    ]);
    expect(effects.flat()).toEqual([]);
    expect(idle(ledger)).toBe(true);
  });

  it('restored committables are committed at once, in checkpoint and writer order, before new ones', () => {
    const restored: LedgerEvent = {
      kind: 'restored',
      checkpointId: 7,
      entries: [
        { checkpointId: 7, subtaskIndex: 1, committable: 'b7', restored: true },
        { checkpointId: 6, subtaskIndex: 2, committable: 'c6', restored: true },
        { checkpointId: 7, subtaskIndex: 0, committable: 'a7', restored: true },
      ],
    };
    const { ledger, effects } = script(emptyLedger('exactly-once'), [restored, started(8), sealed(8)]);
    expect(effects[0]).toEqual([
      {
        kind: 'commit',
        entry: { checkpointId: 6, subtaskIndex: 2, committable: 'c6', restored: true },
        retry: 0,
      },
    ]);
    expect(ledger.pending.map((e) => e.committable)).toEqual(['c6', 'a7', 'b7', 'c8']);
    // the snapshot of checkpoint 8 still lists the restored ones until they are committed
    expect(committablesFor(ledger, 8)).toHaveLength(4);
  });

  it('a restored checkpoint holding a later committable is a violation', () => {
    expect(() =>
      step(
        emptyLedger('exactly-once'),
        {
          kind: 'restored',
          checkpointId: 3,
          entries: [{ checkpointId: 4, subtaskIndex: 0, committable: 1, restored: true }],
        },
        POLICY,
      ),
    ).toThrow(/later checkpoint 4/);
  });

  it('pre-commits out of order are a violation', () => {
    const { ledger } = script(emptyLedger('exactly-once'), [started(2)]);
    expect(() => step(ledger, started(2), POLICY)).toThrow(/out of order/);
    expect(() => step(ledger, sealed(5), POLICY)).toThrow(/without a pre-commit/);
  });
});

describe('commit ledger: committedThrough (stop-with-savepoint)', () => {
  it('holds once nothing of checkpoints <= id is sealing, pending or in flight; later ones do not count', () => {
    let { ledger } = script(emptyLedger('exactly-once'), [started(1), sealed(1), started(2)]);
    expect(committedThrough(ledger, 0)).toBe(true);
    expect(committedThrough(ledger, 1)).toBe(false); // 1 pending, not yet complete
    ledger = script(ledger, [sealed(2), complete(2)]).ledger; // commits 1 (in flight)
    expect(committedThrough(ledger, 1)).toBe(false); // in flight is still pending
    ledger = step(ledger, { kind: 'commit-succeeded' }, POLICY).next; // 2 starts
    expect(committedThrough(ledger, 1)).toBe(true);
    expect(committedThrough(ledger, 2)).toBe(false);
    ledger = script(ledger, [started(3)]).ledger;
    ledger = step(ledger, { kind: 'commit-succeeded' }, POLICY).next;
    expect(committedThrough(ledger, 2)).toBe(true); // 3 is sealing, but after 2
    expect(committedThrough(ledger, 3)).toBe(false);
  });
});

describe('commit ledger: retries', () => {
  it('retries with doubling, capped backoff, then gives up', () => {
    expect([1, 2, 3].map((r) => commitRetryDelay(POLICY, r))).toEqual([10, 15, null]);
    let { ledger } = script(emptyLedger('exactly-once'), [started(1), sealed(1), complete(1)]);
    const seen: LedgerEffect[] = [];
    for (const e of [
      { kind: 'commit-failed', error: 'x' },
      { kind: 'retry-due' },
      { kind: 'commit-failed', error: 'y' },
      { kind: 'retry-due' },
      { kind: 'commit-failed', error: 'z' },
    ] as LedgerEvent[]) {
      const r = step(ledger, e, POLICY);
      ledger = r.next;
      seen.push(...r.effects);
    }
    expect(seen.map((e) => (e.kind === 'commit' ? `commit#${e.retry}` : e.kind))).toEqual([
      'schedule-retry',
      'commit#1',
      'schedule-retry',
      'commit#2',
      'give-up',
    ]);
    expect(seen.at(-1)).toMatchObject({ kind: 'give-up', tries: 3, error: 'z' });
  });

  it('no other commit starts while a retry is pending', () => {
    const { ledger } = script(emptyLedger('exactly-once'), [
      started(1),
      sealed(1),
      started(2),
      sealed(2),
      complete(2),
      { kind: 'commit-failed', error: 'x' },
    ]);
    expect(step(ledger, complete(3), POLICY).effects).toEqual([]);
  });
});

describe('commit ledger: at-least-once and no checkpointing', () => {
  it('at-least-once commits once pre-committed, but never past an earlier pre-commit still sealing', () => {
    const { effects } = script(emptyLedger('at-least-once'), [started(1), started(2), sealed(2), sealed(1)]);
    expect(commitIds(effects[2])).toEqual([]); // 1 still sealing: committing 2 first could skip 1
    expect(commitIds(effects[3])).toEqual([1]);
  });

  it('without checkpointing the end-of-input pre-commit (id 0) commits at once', () => {
    const { effects } = script(emptyLedger('none'), [started(0), sealed(0, 'all')]);
    expect(commitIds(effects[1])).toEqual([0]);
  });
});

describe('commit ledger: seeded random interleavings', () => {
  it('exactly-once invariants hold', () => {
    let seed = 0xc0ffee;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let run = 0; run < 200; run++) {
      let ledger = emptyLedger('exactly-once');
      let nextId = 1;
      const sealing: number[] = [];
      const committed: number[] = [];
      let completed = 0;
      let acked = 0; // highest checkpoint whose every pre-commit up to it resolved (may complete)
      let inFlight: number | null = null;
      let retryPending = false;
      const apply = (e: LedgerEvent) => {
        const r = step(ledger, e, POLICY);
        ledger = r.next;
        for (const f of r.effects) {
          if (f.kind === 'commit') {
            expect(f.entry.checkpointId).toBeLessThanOrEqual(completed);
            inFlight = f.entry.checkpointId;
          }
          if (f.kind === 'schedule-retry') retryPending = true;
          if (f.kind === 'give-up') throw new Error('unexpected give-up');
        }
      };
      for (let i = 0; i < 60; i++) {
        const x = rnd();
        if (x < 0.25 && nextId < 30) {
          sealing.push(nextId);
          apply(started(nextId++));
        } else if (x < 0.5 && sealing.length > 0) {
          const id = sealing.splice(Math.floor(rnd() * sealing.length), 1)[0];
          apply(sealed(id, rnd() < 0.2 ? undefined : id));
          const minSealing = Math.min(...sealing, nextId);
          acked = Math.max(acked, minSealing - 1);
        } else if (x < 0.65 && acked > completed) {
          completed = acked - Math.floor(rnd() * (acked - completed));
          apply(complete(completed));
        } else if (x < 0.85 && inFlight !== null && !retryPending) {
          if (rnd() < 0.2 && (ledger.inFlight?.retry ?? 0) < POLICY.retries) {
            apply({ kind: 'commit-failed', error: 'flaky' });
          } else {
            committed.push(inFlight);
            inFlight = null;
            apply({ kind: 'commit-succeeded' });
          }
        } else if (retryPending) {
          retryPending = false;
          apply({ kind: 'retry-due' });
        }
        // snapshots never list a later checkpoint's committable
        for (const e of committablesFor(ledger, completed))
          expect(e.checkpointId).toBeLessThanOrEqual(completed);
      }
      // commits ran in checkpoint order, each once
      expect(committed).toEqual([...committed].sort((a, b) => a - b));
      expect(new Set(committed).size).toBe(committed.length);
      // a committed checkpoint is never listed again
      for (const e of ledger.pending) expect(committed).not.toContain(e.checkpointId);
    }
  });
});
