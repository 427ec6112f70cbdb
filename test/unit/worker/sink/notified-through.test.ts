import { describe, expect, it } from 'vitest';
import { SinkOperator } from '../../../../src/worker/operators/sink-operator.js';
import { NotifiedThrough } from '../../../../src/worker/sink/notified-through.js';

/** Settles pending promise reactions, so a waiter that should not have resolved shows it. */
const flush = () => new Promise((r) => setImmediate(r));

describe('NotifiedThrough', () => {
  it('resolves a waiter once a notification for its id or a later one returned', async () => {
    const t = new NotifiedThrough();
    const results: [string, boolean][] = [];
    void t.awaitCommitted(3).then((ok) => results.push(['3', ok]));
    void t.awaitCommitted(5).then((ok) => results.push(['5', ok]));
    t.notified(2);
    await flush();
    expect(results).toEqual([]);
    t.notified(4); // commits 3 (and every older sealed transaction), not 5
    await flush();
    expect(results).toEqual([['3', true]]);
    t.notified(7);
    await flush();
    expect(results).toEqual([
      ['3', true],
      ['5', true],
    ]);
    expect(await t.awaitCommitted(7)).toBe(true);
  });

  it('an older notification after a newer one changes nothing', async () => {
    const t = new NotifiedThrough();
    t.notified(5);
    t.notified(2);
    expect(await t.awaitCommitted(5)).toBe(true);
  });

  it('close answers waiters false and later callers false, but keeps what was committed', async () => {
    const t = new NotifiedThrough();
    t.notified(1);
    const waiting = t.awaitCommitted(2);
    t.close();
    expect(await waiting).toBe(false);
    expect(await t.awaitCommitted(3)).toBe(false);
    expect(await t.awaitCommitted(1)).toBe(true);
  });
});

describe('SinkOperator.awaitCommitted (legacy writers commit in notifyCheckpointComplete)', () => {
  function operator(notify: (id: number) => void) {
    return new SinkOperator(0, 'sink', 'sink:sink:0', {} as never, {
      write() {},
      notifyCheckpointComplete: notify,
    });
  }

  it('is true only after the writer handled the notification', async () => {
    const seen: number[] = [];
    const op = operator((id) => seen.push(id));
    let answered: boolean | undefined;
    void op.awaitCommitted(4).then((ok) => {
      answered = ok;
    });
    await flush();
    expect(answered).toBeUndefined();
    op.notifyCheckpointComplete(4);
    await flush();
    expect(seen).toEqual([4]);
    expect(answered).toBe(true);
  });

  it('a writer whose notification throws has not committed: closing answers false', async () => {
    const op = operator(() => {
      throw new Error('commit failed');
    });
    const waiting = op.awaitCommitted(1);
    expect(() => op.notifyCheckpointComplete(1)).toThrow('commit failed');
    op.close();
    expect(await waiting).toBe(false);
  });
});
