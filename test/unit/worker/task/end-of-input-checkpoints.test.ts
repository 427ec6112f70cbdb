/**
 * A task whose input ended serves every checkpoint trigger, but only the coordinator's `final`
 * one lets it exit. A periodic trigger sent before the coordinator saw `input-ended` used to be
 * taken for the final checkpoint: the task exited after it completed, and the real final
 * checkpoint then waited (until its timeout) for a task that was gone.
 *
 * The task runs in this thread: a source that ends at once, chained to a discard sink.
 */
import { describe, expect, it } from 'vitest';
import { defineJob } from '../../../../src/api/define-job.js';
import { sinks, sources } from '../../../../src/connectors/index.js';
import { acked, inThreadTask } from './in-thread-task.js';

function endedSourceTask() {
  const def = defineJob((env) => {
    env.fromSource(sources.sequence({ from: 0, to: 0 }), 'empty').sinkTo(sinks.discard());
  });
  return inThreadTask(def, 'empty (1/1)');
}

describe('StreamTask after end of input', () => {
  it('acknowledges a periodic checkpoint and stays alive; exits once the final checkpoint completed', async () => {
    const { task, events, until } = endedSourceTask();
    let exited = false;
    const run = task.run().then((m) => {
      exited = true;
      return m;
    });
    await until((e) => e.kind === 'input-ended');

    task.control.triggerCheckpoint(4, Date.now(), 'checkpoint', false);
    await until(acked(4));
    task.control.notifyCheckpointComplete(4);
    await new Promise((r) => setTimeout(r, 50));
    expect(exited).toBe(false);

    task.control.triggerCheckpoint(5, Date.now(), 'checkpoint', true);
    await until(acked(5));
    expect(exited).toBe(false);
    task.control.notifyCheckpointComplete(5);
    await run;
    expect(exited).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(['input-ended', 'acknowledge', 'acknowledge', 'finished']);
  });

  it('ignores a trigger for a checkpoint it already took (a late trigger after its barrier) or an older one', async () => {
    const { task, events, until } = endedSourceTask();
    const run = task.run();
    await until((e) => e.kind === 'input-ended');
    task.control.triggerCheckpoint(4, Date.now(), 'checkpoint', false);
    task.control.triggerCheckpoint(4, Date.now(), 'checkpoint', false);
    task.control.triggerCheckpoint(3, Date.now(), 'checkpoint', false);
    task.control.triggerCheckpoint(5, Date.now(), 'checkpoint', true);
    await until(acked(5));
    task.control.notifyCheckpointComplete(5);
    await run;
    const acks = events.flatMap((e) => (e.kind === 'acknowledge' ? [e.checkpointId] : []));
    expect(acks.sort((a, b) => a - b)).toEqual([4, 5]);
  });
});
