/** Shared by the event-time, windows and joins e2e tests. */
/**
 * Collects, from a job client's `deployed` events, the checkpoint each restart restored from
 * (`undefined` for a restart from scratch), so a test can check that recovery used a checkpoint.
 */
export function restoredCheckpoints(client: {
  on(event: 'deployed', listener: (e: { attempt: number; restoredFrom?: number }) => void): unknown;
}): (number | undefined)[] {
  const restoredFrom: (number | undefined)[] = [];
  client.on('deployed', (e) => {
    if (e.attempt > 0) restoredFrom.push(e.restoredFrom);
  });
  return restoredFrom;
}
