import { describe, expect, it } from 'vitest';
import {
  type ClusterCheckpointRecord,
  ClusterCheckpoints,
  type ClusterCommitOutcome,
  type CoordinatorMessage,
  type MemberMessage,
} from '../../../src/cluster/cluster-checkpoints.js';
import {
  commitWithinLimit,
  RECORD_HEADROOM_BYTES,
  recordLimit,
} from '../../../src/cluster/cluster-record-limit.js';
import { seededRandom } from '../../../src/verify/failure-schedule.js';

const TASKS = ['0/0', '0/1', '1/0', '1/1'];
const SOURCES = ['0/0', '0/1'];
const MEMBERS = ['a', 'b'];
const memberOf = (t: string) => (t.endsWith('/0') ? 'a' : 'b');
const state = { operators: [] };
const COMMITTED: ClusterCommitOutcome = { state: 'committed' };

function setup(
  o: { commit?: (r: ClusterCheckpointRecord) => Promise<ClusterCommitOutcome>; timeoutMs?: number } = {},
) {
  const published: CoordinatorMessage[] = [];
  const committed: ClusterCheckpointRecord[] = [];
  const events: string[] = [];
  let clock = 0;
  const cp = new ClusterCheckpoints({
    run: 'r1',
    members: MEMBERS,
    tasks: TASKS,
    sources: SOURCES,
    timeoutMs: o.timeoutMs ?? 1000,
    publish: (m) => published.push(m),
    commit:
      o.commit ??
      (async (r) => {
        committed.push(r);
        return COMMITTED;
      }),
    onFailed: (m) => events.push(`failed: ${m}`),
    onFinished: () => events.push('finished'),
    now: () => clock,
  });
  return {
    cp,
    published,
    committed,
    events,
    advance: (ms: number) => {
      clock += ms;
    },
    send: (m: MemberMessage) => cp.onMessage(m),
    ack: (id: number, task: string) =>
      cp.onMessage({ type: 'ack', member: memberOf(task), checkpointId: id, task, state, bytes: 10 }),
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('ClusterCheckpoints', () => {
  it('triggers only once every member is ready; completes after the fenced commit, then publishes complete', async () => {
    const s = setup();
    s.cp.tick();
    s.send({ type: 'ready', member: 'a' });
    s.cp.tick();
    expect(s.published).toEqual([]);
    s.send({ type: 'ready', member: 'b' });
    s.cp.tick();
    expect(s.published).toEqual([
      expect.objectContaining({ type: 'trigger', checkpointId: 1, final: false, tasks: SOURCES }),
    ]);
    s.cp.tick(); // one at a time
    expect(s.published).toHaveLength(1);
    for (const t of TASKS.slice(0, 3)) s.ack(1, t);
    s.ack(2, '1/1'); // not the pending one
    s.ack(1, '1/0'); // twice
    await flush();
    expect(s.committed).toEqual([]);
    s.ack(1, '1/1');
    await flush();
    expect(s.committed).toEqual([expect.objectContaining({ run: 'r1', checkpointId: 1, final: false })]);
    expect(Object.keys(s.committed[0].tasks).sort()).toEqual([...TASKS].sort());
    expect(s.published.at(-1)).toEqual({ type: 'complete', checkpointId: 1 });
  });

  it('a refused commit (the fence) publishes no complete and fails the job on every member', async () => {
    const s = setup({
      commit: async () => {
        throw new Error('superseded');
      },
    });
    for (const m of MEMBERS) s.send({ type: 'ready', member: m });
    s.cp.tick();
    for (const t of TASKS) s.ack(1, t);
    await flush();
    expect(s.published.some((m) => m.type === 'complete')).toBe(false);
    expect(s.published.at(-1)).toEqual(expect.objectContaining({ type: 'fail', member: 'coordinator' }));
    expect(s.events).toEqual([expect.stringMatching(/checkpoint 1 not committed: superseded/)]);
  });

  it('a commit aborted before its commit point (its chunks were discarded) aborts the checkpoint; the next one follows', async () => {
    let refuse = true;
    const committed: number[] = [];
    const s = setup({
      commit: async (r) => {
        if (refuse) return { state: 'aborted', reason: 'chunk c-1 it references was discarded' };
        committed.push(r.checkpointId);
        return COMMITTED;
      },
    });
    for (const m of MEMBERS) s.send({ type: 'ready', member: m });
    s.cp.tick();
    for (const t of TASKS) s.ack(1, t);
    await flush();
    expect(s.published.at(-1)).toEqual({
      type: 'abort',
      checkpointId: 1,
      reason: 'chunk c-1 it references was discarded',
    });
    expect(s.published.some((m) => m.type === 'complete' || m.type === 'fail')).toBe(false);
    expect(s.events).toEqual([]);
    expect(s.cp.completed).toEqual([]);
    expect(s.cp.pendingId).toBeNull();
    refuse = false;
    s.cp.tick();
    expect(s.published.at(-1)).toEqual(expect.objectContaining({ type: 'trigger', checkpointId: 2 }));
    for (const t of TASKS) s.ack(2, t);
    await flush();
    expect(committed).toEqual([2]);
    expect(s.published.at(-1)).toEqual({ type: 'complete', checkpointId: 2 });
  });

  it('a record over the limit is not committed: the abort carries rebase, names the sizes and what to change; a short one commits', async () => {
    const written: number[] = [];
    const warnings: string[] = [];
    // The limit sits between the records of checkpoints 1 and 2: checkpoint 2 names a longer chain.
    let handles = 1;
    const chain = () => ({
      operators: [
        {
          operatorUid: 'sum',
          keyedState: Array.from({ length: handles }, (_, i) => ({ chunkId: `c-${i}`, checkpointId: i })),
        },
      ],
    });
    const limit = 1400;
    const s = setup({
      commit: (r) =>
        commitWithinLimit(
          r,
          limit,
          async () => {
            written.push(r.checkpointId);
            return COMMITTED;
          },
          (m) => warnings.push(m),
        ),
    });
    const ackAll = (id: number) => {
      for (const t of TASKS)
        s.send({
          type: 'ack',
          member: memberOf(t),
          checkpointId: id,
          task: t,
          state: chain() as never,
          bytes: 1,
        });
    };
    for (const m of MEMBERS) s.send({ type: 'ready', member: m });
    s.cp.tick();
    ackAll(1);
    await flush();
    expect(written).toEqual([1]);
    handles = 8;
    s.cp.tick();
    ackAll(2);
    await flush();
    expect(written).toEqual([1]);
    const abort = s.published.at(-1);
    expect(abort).toMatchObject({ type: 'abort', checkpointId: 2, rebase: true });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/checkpoint 2: its record is \d+ bytes, over the limit of 1400 bytes/);
    expect(warnings[0]).toMatch(/checkpointing\.fullEvery.*maxParallelism.*max_payload/);
    expect(s.events).toEqual([]);
    expect(s.cp.completed).toEqual([1]);
    // The tasks re-based: the next record is short again and commits.
    handles = 1;
    s.cp.tick();
    ackAll(3);
    await flush();
    expect(written).toEqual([1, 3]);
    expect(s.published.at(-1)).toEqual({ type: 'complete', checkpointId: 3 });
  });

  it('recordLimit: the server max_payload less the headroom, lowered by maxRecordBytes', () => {
    expect(recordLimit(1024 * 1024)).toBe(1024 * 1024 - RECORD_HEADROOM_BYTES);
    expect(recordLimit(undefined)).toBe(1024 * 1024 - RECORD_HEADROOM_BYTES);
    expect(recordLimit(64 * 1024, 4096)).toBe(4096);
    expect(recordLimit(8192, 1_000_000)).toBe(8192 - RECORD_HEADROOM_BYTES);
  });

  it('a decline or a timeout aborts; a member failure fails every member', () => {
    const s = setup({ timeoutMs: 50 });
    for (const m of MEMBERS) s.send({ type: 'ready', member: m });
    s.cp.tick();
    s.send({ type: 'decline', member: 'a', checkpointId: 1, task: '1/0', message: 'no' });
    expect(s.published.at(-1)).toEqual(expect.objectContaining({ type: 'abort', checkpointId: 1 }));
    s.cp.tick();
    expect(s.published.at(-1)).toEqual(expect.objectContaining({ type: 'trigger', checkpointId: 2 }));
    s.advance(51);
    s.cp.tick();
    expect(s.published.at(-1)).toEqual(expect.objectContaining({ type: 'abort', checkpointId: 2 }));
    s.send({ type: 'failed', member: 'b', message: 'boom' });
    expect(s.published.at(-1)).toEqual({ type: 'fail', member: 'b', message: 'instance b failed: boom' });
    expect(s.events).toEqual(['failed: instance b failed: boom']);
    s.cp.tick();
    expect(s.published.at(-1)?.type).toBe('fail');
  });

  it('seeded orders: every task ends; a late trigger for a task that ended during a checkpoint; final on all tasks; finished once every member is done', async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rand = seededRandom(seed);
      const s = setup();
      for (const m of MEMBERS) s.send({ type: 'ready', member: m });
      const ended = new Set<string>();
      const acked = new Map<number, Set<string>>();
      let done = false;
      for (let step = 0; step < 400 && !done; step++) {
        const r = rand();
        const pending = s.cp.pendingId;
        if (r < 0.3) s.cp.tick();
        else if (r < 0.45 && ended.size < TASKS.length) {
          const t = TASKS.filter((x) => !ended.has(x))[Math.floor(rand() * (TASKS.length - ended.size))];
          ended.add(t);
          s.send({ type: 'ended', member: memberOf(t), task: t });
        } else if (pending !== null) {
          const got = acked.get(pending) ?? new Set();
          acked.set(pending, got);
          const t = TASKS[Math.floor(rand() * TASKS.length)];
          got.add(t);
          s.ack(pending, t);
          await flush();
        }
        const last = s.published.at(-1);
        if (last?.type === 'complete' && s.committed.at(-1)?.final) done = true;
      }
      // Drive it to the end: ack whatever is pending until the final one completed.
      for (const t of TASKS) if (!ended.has(t)) s.send({ type: 'ended', member: memberOf(t), task: t });
      for (let i = 0; i < 10 && !s.committed.at(-1)?.final; i++) {
        s.cp.tick();
        const id = s.cp.pendingId;
        if (id !== null) for (const t of TASKS) s.ack(id, t);
        await flush();
      }
      const final = s.committed.at(-1)!;
      expect(final.final).toBe(true);
      const trigger = s.published.find((m) => m.type === 'trigger' && m.checkpointId === final.checkpointId);
      expect(trigger).toEqual(expect.objectContaining({ final: true, tasks: TASKS }));
      // Committed ids increase; each was completed after its commit; no trigger after the final.
      const ids = s.committed.map((c) => c.checkpointId);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      const completes = s.published.filter((m) => m.type === 'complete').map((m) => m.checkpointId);
      expect(completes).toEqual(ids);
      const finalAt = s.published.findIndex(
        (m) => m.type === 'complete' && m.checkpointId === final.checkpointId,
      );
      expect(s.published.slice(finalAt + 1).filter((m) => m.type === 'trigger')).toEqual([]);
      // Periodic triggers never name a task that had not ended, apart from sources.
      for (const m of s.published)
        if (m.type === 'trigger' && !m.final)
          for (const t of m.tasks) expect(SOURCES.includes(t) || t.startsWith('1/')).toBe(true);
      expect(s.events).toEqual([]);
      s.send({ type: 'done', member: 'a' });
      expect(s.events).toEqual([]);
      s.send({ type: 'done', member: 'b' });
      expect(s.events).toEqual(['finished']);
    }
  });

  it('a task that ends while it still owes the pending checkpoint is triggered directly', () => {
    const s = setup();
    for (const m of MEMBERS) s.send({ type: 'ready', member: m });
    s.cp.tick();
    s.ack(1, '1/0');
    s.send({ type: 'ended', member: 'a', task: '1/0' }); // acked already: no trigger
    expect(s.published.filter((m) => m.type === 'trigger')).toHaveLength(1);
    s.send({ type: 'ended', member: 'b', task: '1/1' });
    expect(s.published.at(-1)).toEqual(
      expect.objectContaining({ type: 'trigger', checkpointId: 1, tasks: ['1/1'] }),
    );
  });
});

describe('ClusterCheckpoints: member failures and graceful leaves', () => {
  it('a member’s failure goes to onMemberFailed once (the message and its heartbeat repeat)', () => {
    const failed: string[] = [];
    const cp = new ClusterCheckpoints({
      run: 'r1',
      members: MEMBERS,
      tasks: TASKS,
      sources: SOURCES,
      timeoutMs: 1000,
      publish: () => undefined,
      commit: async () => COMMITTED,
      onFailed: (m) => failed.push(`job: ${m}`),
      onFinished: () => undefined,
      onMemberFailed: (member, message, kind) => failed.push(`${member}: ${message} (${kind})`),
    });
    cp.onMessage({ type: 'failed', member: 'b', message: 'boom' });
    cp.onMessage({ type: 'failed', member: 'b', message: 'boom' });
    cp.onMessage({ type: 'failed', member: 'a', message: 'bad', kind: 'fatal' });
    expect(failed).toEqual(['b: boom (task)', 'a: bad (fatal)']);
  });

  it('a member that left before its part ended fails the run; after the final commit it counts as done', async () => {
    const early = setup();
    for (const m of MEMBERS) early.send({ type: 'ready', member: m });
    early.send({ type: 'left', member: 'b' });
    expect(early.events).toEqual([expect.stringMatching(/failed: instance b left the cluster before/)]);
    expect(early.published.at(-1)).toEqual(expect.objectContaining({ type: 'fail', member: 'b' }));

    const late = setup();
    for (const m of MEMBERS) late.send({ type: 'ready', member: m });
    for (const t of TASKS) late.send({ type: 'ended', member: memberOf(t), task: t });
    const final = late.published.at(-1) as { checkpointId: number; final: boolean };
    expect(final.final).toBe(true);
    for (const t of TASKS) late.ack(final.checkpointId, t);
    // Its `done` was lost; it read the committed record and left before the commit returned here.
    late.send({ type: 'left', member: 'b' });
    late.send({ type: 'done', member: 'a' });
    await flush();
    late.send({ type: 'done', member: 'a' }); // repeated by a heartbeat
    expect(late.events).toEqual(['finished']);
  });
});

describe('ClusterCheckpoints.memberLost (a member timed out after the final checkpoint)', () => {
  async function finalCompleted() {
    const s = setup();
    for (const m of MEMBERS) s.send({ type: 'ready', member: m });
    for (const t of TASKS) s.send({ type: 'ended', member: memberOf(t), task: t });
    const final = s.published.at(-1) as { checkpointId: number };
    for (const t of TASKS) s.ack(final.checkpointId, t);
    await flush();
    return s;
  }

  it('fails the job unless the member had reported done', async () => {
    const s = await finalCompleted();
    s.send({ type: 'done', member: 'a' });
    s.cp.memberLost('a', 'a lost');
    expect(s.events).toEqual([]);
    s.cp.memberLost('b', 'b lost');
    expect(s.events).toEqual(['failed: b lost']);
  });

  it('changes nothing once the job finished', async () => {
    const s = await finalCompleted();
    for (const m of MEMBERS) s.send({ type: 'done', member: m });
    s.cp.memberLost('b', 'b lost');
    s.cp.fail('late');
    expect(s.events).toEqual(['finished']);
  });
});
