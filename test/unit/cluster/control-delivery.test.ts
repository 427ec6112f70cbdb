/**
 * A cluster run's control protocol under scripted message loss and duplication: the coordinator's
 * `ClusterCheckpoints` and two members, each a small model of `cluster-job.ts`'s member side, on a
 * simulated clock. Every `up` and `ctl` message is dropped or delivered twice at random (seeded);
 * the members repeat their reports in heartbeats (run-status.ts, themselves lossy) and read the
 * committed checkpoint record back (run-control.ts). Every schedule must end (the final checkpoint
 * committed, every member done) within a bound, never fail, and commit increasing ids. The same
 * schedules without the two durable paths must leave some runs hanging: what the paths fix.
 */
import { describe, expect, it } from 'vitest';
import {
  type ClusterCheckpointRecord,
  ClusterCheckpoints,
  type CoordinatorMessage,
  type MemberMessage,
} from '../../../src/cluster/cluster-checkpoints.js';
import {
  initialRunControl,
  noteComplete,
  type RunControlState,
  reconcileRunControl,
} from '../../../src/cluster/run-control.js';
import {
  initialRunStatus,
  type MemberRunStatus,
  runStatusMessages,
} from '../../../src/cluster/run-status.js';
import { seededRandom } from '../../../src/verify/failure-schedule.js';

const MEMBERS = ['a', 'b'];
const TASKS_OF: Record<string, string[]> = { a: ['0/0', '1/0'], b: ['0/1', '1/1'] };
const TASKS = Object.values(TASKS_OF).flat();
const SOURCES = ['0/0', '0/1'];
const PERIODIC = 3; // checkpoints before the sources end
const BEAT_MS = 100;
const TIMEOUT_MS = 500;
const BOUND_MS = 60_000;

interface Member {
  readonly id: string;
  status: MemberRunStatus;
  control: RunControlState;
  /** Checkpoint ids whose trigger reached this member. */
  readonly triggered: Set<number>;
  finalComplete: boolean;
}

/** One run; resolves with what happened by the bound. */
async function simulate(seed: number, durable: boolean, loss = 0.3, dup = 0.2) {
  const random = seededRandom(seed);
  let clock = 0;
  const committed: ClusterCheckpointRecord[] = [];
  let record: ClusterCheckpointRecord | null = null;
  const events: string[] = [];
  const queue: { at: number; run: () => void }[] = [];
  const later = (delay: number, run: () => void) => queue.push({ at: clock + delay, run });
  /** Delivers `m` 0, 1 or 2 times, each after a random delay. */
  const lossy = (run: () => void) => {
    if (random() < loss) return;
    later(1 + Math.floor(random() * 20), run);
    if (random() < dup) later(1 + Math.floor(random() * 40), run);
  };
  const members: Member[] = MEMBERS.map((id) => ({
    id,
    status: initialRunStatus('r'),
    control: initialRunControl,
    triggered: new Set(),
    finalComplete: false,
  }));
  const cp = new ClusterCheckpoints({
    run: 'r',
    members: MEMBERS,
    tasks: TASKS,
    sources: SOURCES,
    timeoutMs: TIMEOUT_MS,
    publish: (m) => {
      for (const member of members) lossy(() => onCtl(member, m));
    },
    commit: async (r) => {
      committed.push(r);
      record = r;
      return { state: 'committed' };
    },
    onFailed: (m) => events.push(`failed: ${m}`),
    onFinished: () => events.push('finished'),
    now: () => clock,
  });
  const up = (m: MemberMessage) => lossy(() => cp.onMessage(m));
  const report = (member: Member, next: MemberRunStatus) => {
    member.status = next;
  };
  const complete = (member: Member, checkpointId: number) => {
    if (checkpointId === committed.find((r) => r.final)?.checkpointId && !member.finalComplete) {
      member.finalComplete = true;
      up({ type: 'done', member: member.id });
      report(member, { ...member.status, done: true });
    }
  };
  const onCtl = (member: Member, m: CoordinatorMessage) => {
    switch (m.type) {
      case 'trigger':
        member.triggered.add(m.checkpointId);
        // Barriers cross members: a task acknowledges once every member's sources were triggered.
        if (members.every((x) => x.triggered.has(m.checkpointId)))
          for (const x of members)
            for (const task of TASKS_OF[x.id])
              up({
                type: 'ack',
                member: x.id,
                checkpointId: m.checkpointId,
                task,
                state: { operators: [] },
                bytes: 1,
              });
        return;
      case 'complete': {
        const c = noteComplete(member.control, m.checkpointId);
        member.control = c.next;
        if (c.action) complete(member, m.checkpointId);
        return;
      }
      default:
        return;
    }
  };
  // Deploy: every member reports ready.
  for (const member of members) {
    up({ type: 'ready', member: member.id });
    report(member, { ...member.status, ready: true });
  }
  let sourcesEnded = false;
  let nextBeat = 0;
  let nextTick = 0;
  while (clock < BOUND_MS && !events.length) {
    if (clock >= nextTick) {
      nextTick += 50;
      if (durable)
        for (const member of members) {
          // The member reads the committed record back (run-control.ts).
          const r = reconcileRunControl(member.control, {
            self: member.id,
            run: 'r',
            lineage: 'r',
            coordinator: 'a',
            assignmentRun: 'r',
            checkpoint: record,
            outcome: null,
            leaseHeld: member.id === 'a',
          });
          member.control = r.next;
          for (const a of r.actions) if (a.kind === 'complete') complete(member, a.checkpointId);
        }
      cp.tick();
    }
    if (clock >= nextBeat) {
      nextBeat += BEAT_MS;
      // Heartbeats: each one may be lost too; the next one repeats the report.
      if (durable)
        for (const member of members)
          lossy(() => {
            for (const m of runStatusMessages(member.id, member.status)) cp.onMessage(m);
          });
    }
    if (!sourcesEnded && committed.length >= PERIODIC) {
      sourcesEnded = true;
      for (const member of members)
        for (const task of TASKS_OF[member.id]) {
          up({ type: 'ended', member: member.id, task });
          report(member, { ...member.status, ended: [...member.status.ended, task] });
        }
    }
    clock += 1;
    for (const e of queue.filter((q) => q.at <= clock)) {
      queue.splice(queue.indexOf(e), 1);
      e.run();
    }
    await Promise.resolve(); // the commit's continuation
  }
  return { events, committed, clock };
}

describe('control messages under loss and duplication (run-status.ts, run-control.ts)', () => {
  it('every seeded schedule ends, exact: final committed, every member done, increasing ids, no failure', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const { events, committed } = await simulate(seed, true);
      expect(events, `seed ${seed}`).toEqual(['finished']);
      const ids = committed.map((r) => r.checkpointId);
      expect(ids, `seed ${seed}`).toEqual([...ids].sort((x, y) => x - y));
      expect(new Set(ids).size).toBe(ids.length);
      expect(committed.at(-1)?.final, `seed ${seed}`).toBe(true);
    }
  });

  it('the same schedules without the heartbeat reports and the record reads: some runs never end', async () => {
    let hung = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const { events } = await simulate(seed, false);
      expect(events.filter((e) => e.startsWith('failed'))).toEqual([]);
      if (events.length === 0) hung++;
    }
    expect(hung).toBeGreaterThan(0);
  });

  it('without loss, only duplicates: ends the same way', async () => {
    for (let seed = 1; seed <= 10; seed++)
      expect((await simulate(seed, true, 0, 0.5)).events, `seed ${seed}`).toEqual(['finished']);
  });
});
