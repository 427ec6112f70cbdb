/**
 * Parking a thread on an int32 word of a SharedArrayBuffer, synchronously or asynchronously.
 *
 * Roles: whoever parks is the only thread that parks on that word (one waiter per word, by
 * protocol: the consumer on its doorbell, the writer on its ring's writer-waiting flag).
 * Layout: none of its own; callers pass the word (see layout.ts).
 * Publish order / staleness: `Atomics.wait(words, i, expected)` compares and sleeps atomically
 * with respect to `Atomics.notify`, so a waker that changes the word and then notifies can never
 * be missed. The callers' flag protocols rely on exactly that.
 */

export type ParkOutcome = 'ok' | 'not-equal' | 'timed-out';

type WaitAsyncResult =
  | { async: false; value: 'not-equal' | 'timed-out' }
  | { async: true; value: Promise<'ok' | 'timed-out'> };
type WaitAsyncFn = (words: Int32Array, index: number, value: number, timeoutMs?: number) => WaitAsyncResult;

// `Atomics.waitAsync` is in Node >= 16 but not in TypeScript's ES2023 lib.
const waitAsync: WaitAsyncFn | undefined = (Atomics as unknown as { waitAsync?: WaitAsyncFn }).waitAsync;

/** Largest delay a Node timer accepts; the keep-alive interval never fires in practice. */
const KEEP_ALIVE_MS = 2 ** 31 - 1;
const noop = (): void => {};

/** Blocks the calling thread while `words[index] === expected`, up to `timeoutMs`. Cost: a futex syscall. */
export function parkSync(
  words: Int32Array,
  index: number,
  expected: number,
  timeoutMs = Infinity,
): ParkOutcome {
  return Atomics.wait(words, index, expected, timeoutMs);
}

/**
 * Resolves once `words[index] !== expected` is observed or a notify arrives (or the timeout).
 *
 * A pending `Atomics.waitAsync` does not keep a worker's event loop alive, so while it is pending
 * we hold a referenced interval timer; without it a worker whose only pending work is this wait
 * would exit. Allocation: one promise and one timer per park (parks are rare: only when idle or
 * backpressured).
 */
export async function parkAsync(
  words: Int32Array,
  index: number,
  expected: number,
  timeoutMs = Infinity,
): Promise<ParkOutcome> {
  if (waitAsync === undefined) throw new Error('Atomics.waitAsync is not available in this runtime');
  const result = waitAsync(words, index, expected, timeoutMs);
  if (!result.async) return result.value;
  const keepAlive = setInterval(noop, KEEP_ALIVE_MS);
  try {
    return await result.value;
  } finally {
    clearInterval(keepAlive);
  }
}
