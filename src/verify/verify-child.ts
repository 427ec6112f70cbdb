/**
 * A child process of `weir verify` (forked by `child-run.ts`) that runs one segment of the
 * failure run, so verify can SIGKILL it: the `sigkill` failure kind. It runs the job with the
 * options it is sent and reports over IPC, as they happen, what verify needs from a process that
 * may die at any moment: attempts deployed, checkpoints completed, restarts, and every
 * `sinks.collect` delivery with its transaction (a process killed after a commit keeps nothing;
 * verify counts what reached it). When the job ends it sends the result and exits.
 */

import { startJob } from '../coordinator/job-client.js';
import type { JobOptions } from '../coordinator/job-options.js';

/** Parent → child. */
export type ToChild =
  | { readonly type: 'start'; readonly url: string; readonly options: JobOptions }
  | { readonly type: 'stop'; readonly dir: string };

/** Child → parent. */
export type FromChild =
  | { readonly type: 'deployed'; readonly attempt: number; readonly restoredFrom: number | undefined }
  | { readonly type: 'checkpoint'; readonly checkpointId: number }
  | { readonly type: 'restarting'; readonly attempt: number; readonly message: string }
  | {
      readonly type: 'collected';
      readonly sink: string;
      readonly transaction: string | null;
      readonly records: readonly unknown[];
    }
  | {
      readonly type: 'done';
      readonly status: 'finished' | 'stopped';
      readonly restarts: number;
      readonly checkpoints: number;
      readonly savepoint?: { readonly checkpointId: number; readonly path: string };
    }
  | { readonly type: 'failed'; readonly name: string; readonly message: string };

function send(m: FromChild): void {
  process.send?.(m);
}

async function run(url: string, options: JobOptions): Promise<void> {
  const client = await startJob(url, options);
  client.on('deployed', (e) => send({ type: 'deployed', attempt: e.attempt, restoredFrom: e.restoredFrom }));
  client.on('checkpoint', (c) => send({ type: 'checkpoint', checkpointId: c.checkpointId }));
  client.on('restarting', (e) => {
    const cause = (e.cause as { cause?: unknown }).cause;
    send({
      type: 'restarting',
      attempt: e.attempt,
      message: cause instanceof Error ? cause.message : e.cause.message,
    });
  });
  client.on('collected', (e) =>
    send({ type: 'collected', sink: e.sink, transaction: e.transaction, records: e.records }),
  );
  let stopping: Promise<unknown> | undefined;
  process.on('message', (m: ToChild) => {
    // The job may end before the savepoint completes: then the stop did not happen.
    if (m.type === 'stop') stopping ??= client.stopWithSavepoint(m.dir).catch(() => undefined);
  });
  const result = await client.done;
  await stopping;
  send({
    type: 'done',
    status: result.status,
    restarts: result.restarts,
    checkpoints: result.checkpoints.length,
    ...(result.savepoint ? { savepoint: { ...result.savepoint } } : {}),
  });
}

let ending = false;
// verify died (or was killed) without killing this process: the job has no one to report to.
process.on('disconnect', () => {
  if (!ending) process.exit(1);
});

process.once('message', (m: ToChild) => {
  if (m.type !== 'start') return;
  run(m.url, m.options).then(
    () => {
      ending = true;
      process.disconnect?.();
    },
    (e: unknown) => {
      ending = true;
      send({
        type: 'failed',
        name: e instanceof Error ? e.name : 'Error',
        message: e instanceof Error ? e.message : String(e),
      });
      process.exitCode = 1;
      process.disconnect?.();
    },
  );
});
