/**
 * TaskPool keeps a listener for worker errors on every pool it created, for the pool's whole
 * life: piscina emits a worker error it cannot attribute to a task as 'error' on the pool, and
 * an 'error' without listener would exit the host process.
 */
import { describe, expect, it } from 'vitest';
import { TaskPool } from '../../../src/coordinator/scheduler.js';
import type { TaskFailureError } from '../../../src/errors.js';

describe('TaskPool worker errors', () => {
  it('routes them to the running execution, else reports them as stray, even after discard', async () => {
    const stray: TaskFailureError[] = [];
    const pool = new TaskPool(1, { onStrayError: (e) => stray.push(e) });
    const piscina = pool.acquire();
    const routed: unknown[] = [];
    pool.setWorkerErrorHandler((e) => routed.push(e));
    piscina.emit('error', new Error('while running'));
    expect(routed).toHaveLength(1);
    pool.setWorkerErrorHandler(null);
    piscina.emit('error', new Error('between attempts'));
    await pool.discard();
    // A discarded pool's errors never reach a later execution.
    const next = pool.acquire();
    pool.setWorkerErrorHandler((e) => routed.push(e));
    piscina.emit('error', new Error('after discard'));
    expect(routed).toHaveLength(1);
    expect(stray.map((e) => e.originalMessage)).toEqual(['between attempts', 'after discard']);
    pool.setWorkerErrorHandler(null);
    await pool.close();
    next.emit('error', new Error('after close'));
    expect(stray.at(-1)?.originalMessage).toBe('after close');
  });
});
