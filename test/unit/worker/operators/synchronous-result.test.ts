import { describe, expect, it } from 'vitest';
import { AsyncUserFunctionError } from '../../../../src/errors.js';
import { synchronousResult } from '../../../../src/worker/operators/synchronous-result.js';

describe('synchronousResult', () => {
  it('passes every non-thenable through unchanged', () => {
    // biome-ignore lint/suspicious/noThenProperty: the point of the test: a `then` that is not a function
    const obj = { then: 'not a function' };
    for (const v of [undefined, null, 0, '', false, 42n, obj, [1], new Map()]) {
      expect(synchronousResult(v, 'op', 'map function')).toBe(v);
    }
  });

  it('throws a fatal AsyncUserFunctionError for a Promise and for any thenable', () => {
    // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable is what the check must catch
    const thenable = { then: () => undefined };
    for (const v of [Promise.resolve(1), thenable, (async () => 1)()]) {
      let error: unknown;
      try {
        synchronousResult(v, 'enrich', 'map function');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AsyncUserFunctionError);
      expect(error).toMatchObject({ operator: 'enrich', functionKind: 'map function', failureKind: 'fatal' });
      expect((error as Error).message).toMatch(/^map function of operator "enrich" returned a Promise/);
      expect((error as Error).message).toContain('stream.mapAsync(fn, { capacity, timeoutMs, ordered })');
    }
  });

  it("a rejected promise's own rejection does not surface as an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const failing = (async () => {
        throw new Error('inside the async function');
      })();
      expect(() => synchronousResult(failing, 'op', 'process function')).toThrow(AsyncUserFunctionError);
      // Unhandled rejections are reported once the microtask queue drains, before the next macrotask.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
