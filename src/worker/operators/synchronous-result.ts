/**
 * The check that a user function did not return a Promise (an `async` function, or one that
 * returns `fetch(...)`): weir calls user functions synchronously between two records, so a
 * promise's value, and anything the function emits after its first `await`, would be lost.
 *
 * Cost: one property read and one `typeof` on the returned value, only where weir uses the
 * value or (for `process`-like functions) expects none. Primitives read `then` through their
 * wrapper's prototype, which V8 inlines.
 */

import { AsyncUserFunctionError } from '../../errors.js';

/**
 * Returns `result` unless it is a thenable; then throws {@link AsyncUserFunctionError} (fatal:
 * the job ends without restarts). A native Promise gets a rejection handler first: the attempt
 * fails with the thenable error, and the promise's own later rejection (a consequence) must not
 * surface as an unhandled rejection that kills the worker and hides the real cause.
 */
export function synchronousResult<R>(result: R, operator: string | undefined, functionKind: string): R {
  if (typeof (result as { then?: unknown } | null | undefined)?.then === 'function')
    throwThenable(result, operator, functionKind);
  return result;
}

/**
 * The rare path of {@link synchronousResult}, a function of its own so the check stays small
 * enough for TurboFan to inline into every operator on the record path (it is called per record).
 */
function throwThenable(result: unknown, operator: string | undefined, functionKind: string): never {
  if (result instanceof Promise) result.then(undefined, ignoreConsequence);
  throw new AsyncUserFunctionError(operator, functionKind);
}

/** The attempt already failed with AsyncUserFunctionError; this rejection adds nothing. */
function ignoreConsequence(_reason: unknown): void {}
