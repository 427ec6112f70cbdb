/**
 * What the multi-process cluster e2e tests (cluster-job, cluster-join, cluster-control,
 * cluster-savepoint) hear from their child instances over IPC, and the run's NATS subjects some of
 * them listen to: one log that wakes its waiters on every message, and fails a wait at once when
 * an instance reported a fatal message (an error, an exit without a result, …) instead of letting
 * it run into vitest's timeout.
 */
import type { RunningSum } from './helpers.js';

/** One IPC message of an instance (test/fixtures/cluster/*-instance.mjs); fields by kind. */
export interface InstanceMessage {
  kind:
    | 'started'
    | 'deployed'
    | 'checkpoint'
    | 'result'
    | 'error'
    | 'exit'
    | 'collected'
    | 'restarting'
    | 'savepoint'
    | 'savepoint-error'
    | 'restored'
    | 'fresh-start'
    | 'warning';
  attempt?: number;
  restoredFrom?: number | null;
  transaction?: string | null;
  records?: RunningSum[];
  restarts?: number;
  checkpointId?: number;
  checkpoints?: number;
  status?: string;
  sinks?: Record<string, RunningSum[]>;
  path?: string;
  savepoint?: { checkpointId: number; path: string } | null;
  name?: string;
  /** `fresh-start`: its reason; `warning`: its details' kind. */
  reason?: string;
  message?: string;
  stack?: string;
}

export class InstanceLog {
  readonly messages: (InstanceMessage & { instance: number })[] = [];
  /** Messages heard on the run's subjects (tests that subscribe to them). */
  readonly control: { subject: string; m: Record<string, unknown> }[] = [];
  #waiters: (() => void)[] = [];
  failure: string | null = null;
  /** Whether an `error` message fails the waits (a test that expects errors turns it off). */
  failOnError = true;

  /** `fatal`: kinds besides `exit` that fail the waits (`error` only while {@link failOnError}). */
  constructor(readonly fatal: readonly InstanceMessage['kind'][] = ['error']) {}

  add(instance: number, m: InstanceMessage): void {
    this.messages.push({ ...m, instance });
    if (m.kind === 'exit' || (this.fatal.includes(m.kind) && (m.kind !== 'error' || this.failOnError)))
      this.failure = `instance ${instance}: ${m.stack ?? m.message}`;
    this.#wake();
  }

  addControl(subject: string, m: Record<string, unknown>): void {
    this.control.push({ subject, m });
    this.#wake();
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  async until(what: string, pred: () => boolean): Promise<void> {
    while (!pred()) {
      if (this.failure !== null)
        throw new Error(`an instance failed while waiting for ${what}: ${this.failure}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Calls `f` at the next message (whatever it is). */
  onNext(f: () => void): void {
    this.#waiters.push(f);
  }

  of(kind: InstanceMessage['kind'], instance?: number) {
    return this.messages.filter(
      (m) => m.kind === kind && (instance === undefined || m.instance === instance),
    );
  }
}
