/**
 * ClusterCheckpoints.triggerSavepoint (stop-with-savepoint of a cluster job, the coordinator's
 * decisions): the savepoint is the next checkpoint, typed `savepoint`, committed before
 * `complete`, and nothing is triggered after it; a decline lets periodic checkpoints go on.
 */
import { describe, expect, it } from 'vitest';
import {
  type ClusterCheckpointRecord,
  ClusterCheckpoints,
  type CoordinatorMessage,
} from '../../../src/cluster/cluster-checkpoints.js';

const TASKS = ['0/0', '0/1', '1/0', '1/1'];
const SOURCES = ['0/0', '0/1'];
const state = { operators: [] };

function setup() {
  const published: CoordinatorMessage[] = [];
  const failed: string[] = [];
  const committed: ClusterCheckpointRecord[] = [];
  let clock = 0;
  const cp = new ClusterCheckpoints({
    run: 'r1',
    members: ['a', 'b'],
    tasks: TASKS,
    sources: SOURCES,
    timeoutMs: 1000,
    publish: (m) => published.push(m),
    commit: async (r) => {
      committed.push(r);
      return { state: 'committed' };
    },
    onFailed: (m) => failed.push(m),
    onFinished: () => undefined,
    now: () => clock,
  });
  cp.onMessage({ type: 'ready', member: 'a' });
  cp.onMessage({ type: 'ready', member: 'b' });
  const ackAll = (id: number) => {
    for (const task of TASKS)
      cp.onMessage({ type: 'ack', member: 'a', checkpointId: id, task, state, bytes: 1 });
  };
  return { cp, published, committed, failed, ackAll, advance: (ms: number) => (clock += ms) };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('ClusterCheckpoints: stop-with-savepoint', () => {
  it('after the pending checkpoint, triggers a savepoint, resolves once it committed, then triggers nothing', async () => {
    const s = setup();
    s.cp.tick(); // periodic 1 pending
    const savepoint = s.cp.triggerSavepoint();
    expect(s.published).toHaveLength(1); // waits for checkpoint 1
    s.ackAll(1);
    await flush();
    expect(s.published.at(-1)).toEqual(
      expect.objectContaining({ type: 'trigger', checkpointId: 2, savepoint: true, tasks: SOURCES }),
    );
    s.ackAll(2);
    const record = await savepoint;
    expect(record.checkpointId).toBe(2);
    expect(s.committed.map((r) => r.checkpointId)).toEqual([1, 2]);
    expect(s.published.at(-1)).toEqual({ type: 'complete', checkpointId: 2 });
    const before = s.published.length;
    s.advance(5000);
    s.cp.tick();
    for (const task of TASKS) s.cp.onMessage({ type: 'ended', member: 'a', task });
    s.cp.tick();
    expect(s.published).toHaveLength(before); // no periodic, no final checkpoint after the savepoint
    await expect(s.cp.triggerSavepoint()).rejects.toThrow(/under way/);
  });

  it('a declined savepoint rejects and periodic checkpoints go on', async () => {
    const s = setup();
    const savepoint = s.cp.triggerSavepoint();
    expect(s.published.at(-1)).toEqual(
      expect.objectContaining({ type: 'trigger', checkpointId: 1, savepoint: true }),
    );
    s.cp.onMessage({ type: 'decline', member: 'a', checkpointId: 1, task: '1/0', message: 'no' });
    await expect(savepoint).rejects.toThrow(/savepoint 1 aborted/);
    s.cp.tick();
    expect(s.published.at(-1)).toEqual(expect.objectContaining({ type: 'trigger', checkpointId: 2 }));
    expect(s.published.at(-1)).not.toHaveProperty('savepoint');
  });

  it('refuses once every input ended (the final checkpoint ends the job)', async () => {
    const s = setup();
    for (const task of TASKS) s.cp.onMessage({ type: 'ended', member: 'a', task });
    await expect(s.cp.triggerSavepoint()).rejects.toThrow(/final checkpoint/);
  });

  it('a member leaving after the savepoint committed fails nothing; one leaving before it fails the run', async () => {
    const s = setup();
    const savepoint = s.cp.triggerSavepoint();
    s.ackAll(1);
    await savepoint;
    s.cp.onMessage({ type: 'left', member: 'b' }); // it stopped with the savepoint
    expect(s.failed).toEqual([]);
    expect(s.published.map((m) => m.type)).not.toContain('fail');

    const t = setup();
    void t.cp.triggerSavepoint().catch(() => undefined);
    t.cp.onMessage({ type: 'left', member: 'b' });
    expect(t.failed).toEqual([expect.stringMatching(/left the cluster before its part of the run ended/)]);
  });
});
