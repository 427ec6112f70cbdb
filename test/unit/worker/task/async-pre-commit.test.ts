/**
 * A committing sink's asynchronous pre-commit delays its checkpoint's acknowledgement, not the
 * task loop: records keep reaching the writer while the pre-commit is pending, and the task
 * acknowledges once it resolves. A commit that uses up its retries fails the running task.
 *
 * The task runs in this thread: a rate-limited sequence chained to a `sinks.custom` sink.
 */
import { describe, expect, it } from 'vitest';
import type { CommittingSink } from '../../../../src/api/committing-sink.js';
import { defineJob } from '../../../../src/api/define-job.js';
import { sinks, sources } from '../../../../src/connectors/index.js';
import { SinkCommitError } from '../../../../src/errors.js';
import { acked, inThreadTask } from './in-thread-task.js';

function sinkTask(sink: CommittingSink<number, unknown>) {
  const def = defineJob((env) => {
    env.fromSource(sources.sequence({ from: 0, to: 1_000_000, ratePerSec: 20_000 }), 'numbers').sinkTo(sink);
  });
  return inThreadTask(def, 'numbers -> sink (1/1)');
}

/** Resolves once `count()` reaches `n`, checked after every write (`onWrite` is called by the sink). */
function counter() {
  let n = 0;
  const waits: { at: number; resolve: () => void }[] = [];
  return {
    get n() {
      return n;
    },
    onWrite() {
      n++;
      for (let i = waits.length - 1; i >= 0; i--) {
        if (n >= waits[i].at) waits.splice(i, 1)[0].resolve();
      }
    },
    reach(at: number): Promise<void> {
      if (n >= at) return Promise.resolve();
      return new Promise((resolve) => waits.push({ at, resolve }));
    },
  };
}

describe('StreamTask with an asynchronous pre-commit', () => {
  it('keeps processing while the pre-commit is pending and acknowledges when it resolves', async () => {
    const written = counter();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let preCommitted!: (atRecord: number) => void;
    const preCommitCalled = new Promise<number>((r) => {
      preCommitted = r;
    });
    const sink = sinks.custom<number, number>({
      createWriter: () => ({
        write: () => written.onWrite(),
        async preCommit() {
          preCommitted(written.n);
          await gate;
          return written.n;
        },
      }),
      commit() {},
    });
    const { task, events, until } = sinkTask(sink as CommittingSink<number, unknown>);
    const run = task.run();
    await written.reach(10);
    task.control.triggerCheckpoint(1, Date.now(), 'checkpoint', false);
    const atBarrier = await preCommitCalled;
    // the loop goes on: records after the barrier reach the writer, no acknowledgement yet
    await written.reach(atBarrier + 50);
    expect(events.some(acked(1))).toBe(false);
    release();
    await until(acked(1));
    task.control.cancel();
    await expect(run).rejects.toThrow(/cancelled/);
  });

  it('a commit that fails past its retries fails the running task', async () => {
    const written = counter();
    const sink = sinks.custom<number, string>({
      name: 'down',
      commitRetry: { retries: 1, backoffMs: 1 },
      createWriter: () => ({ write: () => written.onWrite(), preCommit: (id) => `c${id}` }),
      commit() {
        throw new Error('unreachable database');
      },
    });
    const { task, until } = sinkTask(sink as CommittingSink<number, unknown>);
    const run = task.run();
    await written.reach(10);
    task.control.triggerCheckpoint(1, Date.now(), 'checkpoint', false);
    await until(acked(1));
    task.control.notifyCheckpointComplete(1);
    const failure = await run.then(
      () => null,
      (e: unknown) => e,
    );
    expect((failure as Error).cause).toBeInstanceOf(SinkCommitError);
    expect(String((failure as Error).message)).toMatch(/unreachable database/);
  });
});
