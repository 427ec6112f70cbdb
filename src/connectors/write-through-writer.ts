/**
 * The at-least-once (and no-checkpointing) writer of the service sinks (JetStream, Redis Streams,
 * PostgreSQL): records are buffered into chunks and each full chunk is sent at once, chunks one
 * after another in order, without blocking `write`. Nothing waits for a checkpoint: what a crash
 * loses is re-sent by the replay, so duplicates are possible and loss is not.
 *
 * Contract:
 * - `preCommit` sends the open chunk and resolves once every chunk sent so far is acknowledged by
 *   the service, so a checkpoint covers only acknowledged writes; it rejects with the first send
 *   failure (the task fails and replays from the last checkpoint).
 * - After a failure, later chunks are not sent and `write` throws it: writes past a failed chunk
 *   would reorder the output.
 * Cost: one array push per record; one send per `chunkSize` records.
 */

import type { CommittingSinkWriter } from '../api/committing-sink.js';

export abstract class WriteThroughWriter<T, Item> implements CommittingSinkWriter<T, undefined> {
  #pending: Item[] = [];
  /** Every chunk sent so far, in order; settles when the last one did. Never rejects. */
  #chain: Promise<void>;
  /** The first send failure (or the failure of `ready`); set once. */
  #failure: unknown;

  /** @param ready settles when the connection is usable; its rejection is the first failure. */
  constructor(
    readonly chunkSize: number,
    ready: Promise<unknown> = Promise.resolve(),
  ) {
    this.#chain = ready.then(
      () => undefined,
      (error: unknown) => {
        this.#failure ??= error;
      },
    );
  }

  /** The item sent for `record` (encoded, mapped to a row, …). Throws on a record it cannot take. */
  protected abstract item(record: T): Item;
  /** Sends one chunk; resolves once the service acknowledged all of it. */
  protected abstract send(chunk: Item[]): Promise<void>;
  /** The typed error a failed send becomes. */
  protected abstract sendError(error: unknown): unknown;
  /** Closes the client; called once every chunk settled. */
  protected abstract closeClient(): Promise<void>;
  /** Chunk rewrite before sending (e.g. keep the last row per upsert key); identity by default. */
  protected compact(chunk: Item[]): Item[] {
    return chunk;
  }

  write(record: T): void {
    if (this.#failure !== undefined) throw this.#failure;
    this.#pending.push(this.item(record));
    if (this.#pending.length >= this.chunkSize) this.#flush();
  }

  async preCommit(): Promise<undefined> {
    this.#flush();
    await this.#chain;
    if (this.#failure !== undefined) throw this.#failure;
    return undefined;
  }

  finish(): void {
    this.#flush();
  }

  async close(): Promise<void> {
    await this.#chain;
    await this.closeClient();
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    const chunk = this.compact(this.#pending);
    this.#pending = [];
    this.#chain = this.#chain.then(async () => {
      if (this.#failure !== undefined) return;
      try {
        await this.send(chunk);
      } catch (error) {
        this.#failure ??= this.sendError(error);
      }
    });
  }
}
