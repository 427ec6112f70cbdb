/**
 * What both ends of a remote edge keep running besides their protocol: the subscription to the
 * subject they read, a periodic timer (the sender's resync check, the receiver's overdue-resume
 * and idle-credit check), and a watch of the connection's status that reports a reconnect (the
 * sender then publishes `sync`, the receiver opens a new generation). One place, so the two ends
 * start and stop them the same way.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';

export interface RemoteEdgeLinkHandlers {
  /** A message on the subscribed subject. */
  readonly onMessage: (data: Uint8Array) => void;
  /** The subscription failed (the client reports it once). */
  readonly onError: (error: Error) => void;
  /** Every `periodMs`. */
  readonly onTimer: () => void;
  /** The connection came back after a cut: messages may have been lost either way. */
  readonly onReconnect: () => void;
}

export class RemoteEdgeLink {
  readonly #subscription: Subscription;
  readonly #timer: NodeJS.Timeout;
  readonly #status: AsyncIterator<unknown>;
  #closed = false;

  constructor(nc: NatsConnection, subject: string, periodMs: number, handlers: RemoteEdgeLinkHandlers) {
    this.#subscription = nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error !== null) handlers.onError(error);
        else handlers.onMessage(msg.data);
      },
    });
    this.#timer = setInterval(handlers.onTimer, periodMs);
    this.#timer.unref();
    this.#status = nc.status()[Symbol.asyncIterator]();
    void this.#watchStatus(handlers.onReconnect);
  }

  /** Unsubscribes and stops the timer and the watch (idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscription.unsubscribe();
    clearInterval(this.#timer);
    void this.#status.return?.();
  }

  async #watchStatus(onReconnect: () => void): Promise<void> {
    for (;;) {
      const next = await this.#status.next();
      if (next.done === true || this.#closed) return;
      if ((next.value as { type?: string }).type === 'reconnect') onReconnect();
    }
  }
}
