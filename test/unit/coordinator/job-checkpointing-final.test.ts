/**
 * The final checkpoint of a bounded job across a restart, driven through JobCheckpointing with
 * fake tasks (a recording control port per task) and a fake client: task events in a chosen
 * order, including events of a failed attempt's tasks that arrive after the next attempt
 * attached. Real checkpoint storage (a temporary directory), no workers.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { JobCheckpointing } from '../../../src/coordinator/job-checkpointing.js';
import type { JobClient } from '../../../src/coordinator/job-client.js';
import { resolveJobOptions } from '../../../src/coordinator/job-options.js';
import type { DeployedTask, Execution } from '../../../src/coordinator/scheduler.js';
import type { TaskFailureError } from '../../../src/errors.js';
import type { TaskEvent } from '../../../src/protocol/task-deployment.js';

interface Trigger {
  readonly task: string;
  readonly checkpointId: number;
  readonly final: boolean;
}

/** One attempt's tasks: a source `0/0` and a sink `1/0`, recording the triggers they get. */
class FakeExecution {
  readonly triggers: Trigger[] = [];
  readonly completed: number[] = [];
  readonly tasks: DeployedTask[];
  constructor(readonly attempt: number) {
    this.tasks = [0, 1].map((vertexId) => {
      const key = `${vertexId}/0`;
      return {
        id: { vertexId, subtaskIndex: 0 },
        key,
        label: `task ${key} (attempt ${attempt})`,
        isSource: vertexId === 0,
        vertex: {} as DeployedTask['vertex'],
        control: {
          triggerCheckpoint: async (checkpointId: number, _ts: number, _type: string, final: boolean) => {
            this.triggers.push({ task: key, checkpointId, final });
          },
          notifyCheckpointComplete: async (checkpointId: number) => {
            this.completed.push(checkpointId);
          },
          notifyCheckpointAborted: async () => undefined,
        } as unknown as DeployedTask['control'],
      };
    });
  }
  get asExecution(): Execution {
    return this as unknown as Execution;
  }
  finals(): Trigger[] {
    return this.triggers.filter((t) => t.final);
  }
}

/** The part of JobClient that JobCheckpointing uses, recording warnings and failures. */
class FakeClient {
  readonly options = resolveJobOptions({
    // No periodic checkpoint; declined ones do not fail the attempt through the failure manager.
    checkpointing: { interval: 600_000, tolerableFailures: 100 },
  });
  readonly plan = { maxParallelism: 128, vertices: [] };
  readonly warnings: unknown[] = [];
  readonly failures: TaskFailureError[] = [];
  readonly checkpoints: number[] = [];
  handler: ((task: DeployedTask, event: TaskEvent) => void) | null = null;
  setCheckpointEventHandler(h: ((task: DeployedTask, event: TaskEvent) => void) | null): void {
    this.handler = h;
  }
  /** What the real client does with every task event: hand it to the current handler, if any. */
  deliver(task: DeployedTask, event: TaskEvent): void {
    this.handler?.(task, event);
  }
  warn(e: unknown): void {
    this.warnings.push(e);
  }
  failExecution(e: TaskFailureError): void {
    this.failures.push(e);
  }
  #onCheckpoint: (() => void) | undefined;
  recordCheckpoint(c: { checkpointId: number }): void {
    this.checkpoints.push(c.checkpointId);
    this.#onCheckpoint?.();
  }
  /** Resolves once a checkpoint completed (its metadata committed). */
  checkpointCompleted(): Promise<void> {
    return new Promise((resolve) => {
      this.#onCheckpoint = resolve;
    });
  }
  emit(): boolean {
    return true;
  }
  log(): void {}
  get asClient(): JobClient {
    return this as unknown as JobClient;
  }
}

const inputEnded: TaskEvent = { kind: 'input-ended' };
const ack = (checkpointId: number): TaskEvent => ({
  kind: 'acknowledge',
  checkpointId,
  state: { operators: [] },
  metrics: { alignmentDurationMs: 0, syncDurationMs: 0, asyncDurationMs: 0, bytes: 0 },
});

/** Lets promise callbacks (rejections, retries) and a storage commit run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

let open: JobCheckpointing | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function start(): Promise<{ client: FakeClient; jc: JobCheckpointing }> {
  const client = new FakeClient();
  const jc = await JobCheckpointing.open(client.asClient);
  open = jc;
  return { client, jc };
}

describe('final checkpoint across a restart', () => {
  it("a failed attempt's pending final checkpoint is not retried on the restored attempt; its own end of input triggers it once", async () => {
    const { client, jc } = await start();
    const first = new FakeExecution(0);
    jc.attach(first.asExecution);
    for (const t of first.tasks) client.deliver(t, inputEnded);
    expect(first.finals().map((t) => t.task)).toEqual(['0/0', '1/0']);
    const staleId = first.finals()[0].checkpointId;

    // The attempt fails while its final checkpoint waits for acknowledgements.
    await jc.detach();
    const second = new FakeExecution(1);
    jc.attach(second.asExecution);
    await settle();
    // Nothing of the first attempt's final checkpoint reaches the second attempt or fails it.
    expect(second.triggers).toEqual([]);
    expect(client.failures).toEqual([]);
    expect(client.warnings).toEqual([]);

    // A late acknowledgement of the stale checkpoint changes nothing.
    client.deliver(second.tasks[0], ack(staleId));
    client.deliver(second.tasks[1], inputEnded);
    expect(second.finals()).toEqual([]);
    client.deliver(second.tasks[0], inputEnded);
    const finals = second.finals();
    expect(finals.map((t) => t.task)).toEqual(['0/0', '1/0']);
    const finalId = finals[0].checkpointId;
    expect(finalId).toBeGreaterThan(staleId);
    const done = client.checkpointCompleted();
    for (const t of second.tasks) client.deliver(t, ack(finalId));
    await done;
    await settle();
    expect(client.checkpoints).toEqual([finalId]);
    expect(second.completed).toEqual([finalId, finalId]);
    expect(second.finals()).toHaveLength(2); // triggered once, on each task
    expect(client.failures).toEqual([]);
  });

  it("events of the failed attempt's tasks after the restored attempt attached do not count toward its end of input", async () => {
    const { client, jc } = await start();
    const first = new FakeExecution(0);
    jc.attach(first.asExecution);
    client.deliver(first.tasks[0], inputEnded);
    await jc.detach();
    const second = new FakeExecution(1);
    jc.attach(second.asExecution);
    client.deliver(second.tasks[0], inputEnded);
    // The first attempt's sink reports its end late (same task key as the second's sink).
    client.deliver(first.tasks[1], inputEnded);
    client.deliver(first.tasks[1], { kind: 'finished', metrics: [] });
    await settle();
    expect(second.triggers).toEqual([]);
    client.deliver(second.tasks[1], inputEnded);
    expect(second.finals().map((t) => t.task)).toEqual(['0/0', '1/0']);
    const finalId = second.finals()[0].checkpointId;
    const done = client.checkpointCompleted();
    for (const t of second.tasks) client.deliver(t, ack(finalId));
    await done;
    expect(client.checkpoints).toEqual([finalId]);
    expect(client.failures).toEqual([]);
  });

  it('a rejected final checkpoint is retried on the same attempt, and the attempt fails after the third', async () => {
    const { client, jc } = await start();
    const only = new FakeExecution(0);
    jc.attach(only.asExecution);
    for (const t of only.tasks) client.deliver(t, inputEnded);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const finals = only.finals();
      expect(finals).toHaveLength(2 * attempt);
      client.deliver(only.tasks[1], {
        kind: 'decline',
        checkpointId: finals.at(-1)!.checkpointId,
        reason: 'declined',
        message: `no (${attempt})`,
      });
      await settle();
    }
    expect(only.finals()).toHaveLength(6);
    expect(client.warnings).toHaveLength(2);
    expect(client.failures).toHaveLength(1);
    expect(client.failures[0].message).toMatch(/final checkpoint failed: .*no \(3\)/);
  });
});
