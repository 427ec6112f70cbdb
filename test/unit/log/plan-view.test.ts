/**
 * `src/log/plan-view.ts`: a group's reads see its own earlier writes, snapshot reads are decoded
 * once per group, a key written several times is written once (its last value, at its first
 * write's place), and conditions are recorded once per key. Checked on a real LMDB environment,
 * and by applying the ops: the database ends exactly as writing every op in order would leave it.
 */
import { open, type RootDatabase } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { applyConditionally, PlanView } from '../../../src/log/plan-view.js';
import { tempLogDir } from './helpers.js';

describe('PlanView', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function env(): RootDatabase {
    const t = tempLogDir('plan-view');
    cleanups.push(t.remove);
    const root = open({ path: t.dir, maxDbs: 2, cache: false, eventTurnBatching: false });
    cleanups.push(() => root.close());
    return root;
  }

  it('writes each key once, with its last value, where it was first written', async () => {
    const root = env();
    const meta = root.openDB<{ end: number }, (string | number)[]>({ name: 'meta', useVersions: true });
    const data = root.openDB<string, (string | number)[] | string>({ name: 'data' });
    await meta.put([1, 0], { end: 5 }, 3);
    const view = new PlanView();
    for (let i = 0; i < 4; i++) {
      const entry = view.getEntry<{ end: number }>(meta, [1, 0]);
      expect(entry?.value.end).toBe(5 + i);
      view.require(meta, [1, 0], 3);
      view.putUnread(data, [1, 0, 5 + i], `r${5 + i}`);
      view.put(meta, [1, 0], { end: 6 + i }, (entry?.version ?? 0) + 1);
    }
    view.put(data, 'x', 'first');
    view.remove(data, 'x');
    view.put(data, 'y', 'gone');
    view.remove(data, 'y');
    view.put(data, 'y', 'back');
    // 4 records, the partition metadata once, 'x' once (removed), 'y' once (its last value).
    expect(view.ops.map((op) => (op.kind === 'put' ? [op.key, op.value] : [op.key, 'removed']))).toEqual([
      [[1, 0, 5], 'r5'],
      [[1, 0], { end: 9 }],
      [[1, 0, 6], 'r6'],
      [[1, 0, 7], 'r7'],
      [[1, 0, 8], 'r8'],
      ['x', 'removed'],
      ['y', 'back'],
    ]);
    expect(view.conditions).toHaveLength(1);
    expect(view.exists(data, 'x')).toBe(false);
    expect(view.get(data, 'y')).toBe('back');
    expect(await applyConditionally(view)).toBe(true);
    root.resetReadTxn();
    expect(meta.getEntry([1, 0])).toMatchObject({ value: { end: 9 }, version: 7 });
    const stored = new Map([...data.getRange({})].map(({ key, value }) => [JSON.stringify(key), value]));
    expect(stored).toEqual(
      new Map([
        ['[1,0,5]', 'r5'],
        ['[1,0,6]', 'r6'],
        ['[1,0,7]', 'r7'],
        ['[1,0,8]', 'r8'],
        ['"y"', 'back'],
      ]),
    );
  });

  it('decodes a snapshot entry once per group; a new view reads it again', async () => {
    const root = env();
    const meta = root.openDB<{ end: number }, string>({ name: 'meta', useVersions: true });
    await meta.put('t', { end: 1 }, 1);
    root.resetReadTxn();
    const view = new PlanView();
    const first = view.getEntry(meta, 't');
    expect(view.getEntry(meta, 't')).toBe(first);
    expect(view.getEntry(meta, 'missing')).toBeUndefined();
    await meta.put('t', { end: 2 }, 2);
    root.resetReadTxn();
    expect(new PlanView().getEntry(meta, 't')).toEqual({ value: { end: 2 }, version: 2 });
  });

  it('a condition that no longer holds writes nothing', async () => {
    const root = env();
    const meta = root.openDB<{ end: number }, string>({ name: 'meta', useVersions: true });
    await meta.put('t', { end: 1 }, 1);
    root.resetReadTxn();
    const view = new PlanView();
    const entry = view.getEntry<{ end: number }>(meta, 't');
    view.require(meta, 't', entry?.version ?? null);
    view.put(meta, 't', { end: 2 }, 2);
    view.put(meta, 't', { end: 3 }, 3);
    await meta.put('t', { end: 10 }, 5); // another writer
    expect(await applyConditionally(view)).toBe(false);
    root.resetReadTxn();
    expect(meta.getEntry('t')).toMatchObject({ value: { end: 10 }, version: 5 });
  });
});
