/**
 * The main thread's end of a task's control port, wrapped so that every message posted to the
 * task also rings the task's doorbell with the control flag set (doorbell.ts, `ringControl`).
 *
 * Why: an idle consumer task may park with a blocking `Atomics.wait` (stream-task.ts, "Waiting"),
 * which holds its event loop still, so a MessagePort message alone would wait for the park's
 * timeout. Posting first and ringing second is the order the doorbell's protocol needs: when the
 * task wakes and sees the flag, the message is already in its port, and one turn of its event loop
 * delivers it. Cost: one atomic store, one atomic add and a load per control message; a notify
 * syscall only when the task sleeps.
 */
import type { Endpoint } from 'comlink';
import type { Doorbell } from '../channels/doorbell.js';

export function ringingEndpoint(endpoint: Endpoint, doorbell: Doorbell): Endpoint {
  return {
    postMessage(message, transfer) {
      endpoint.postMessage(message, transfer);
      doorbell.ringControl();
    },
    addEventListener: endpoint.addEventListener.bind(endpoint),
    removeEventListener: endpoint.removeEventListener.bind(endpoint),
    ...(endpoint.start ? { start: endpoint.start.bind(endpoint) } : {}),
  };
}
