/**
 * `weir run`: prints the restore decisions a user must know about (DESIGN §3 "says so") on
 * stderr, so they never pass silently: the checkpoint restored, a fresh start of a
 * `--restore latest` run, and restore warnings (a fallback past damaged checkpoints, dropped
 * state, stateful operators without a uid). Other warnings are printed with `--verbose`.
 */

import type { JobClient } from '../coordinator/job-client.js';
import { type FreshStartEvent, JobWarning, type RestoredEvent } from '../coordinator/job-events.js';

export function printRestoreEvents(client: JobClient, verbose: boolean, write = console.error): void {
  client.on('restored', (e: RestoredEvent) =>
    write(`weir run: restored checkpoint ${e.checkpointId} from ${e.dir}`),
  );
  client.on('fresh-start', (e: FreshStartEvent) => write(`weir run: fresh start: ${e.message}`));
  client.on('warning', (w: unknown) => {
    if (w instanceof JobWarning) write(`weir run: warning: ${w.message}`);
    else if (verbose) write(`weir run: warning: ${w instanceof Error ? w.message : String(w)}`);
  });
}
