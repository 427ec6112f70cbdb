/**
 * StateHandles remembers the handle of the last name asked for (a function calls
 * `ctx.state.value('sum')` on every record): a repeat must return that same handle, another name
 * its own, and a name asked for as another kind must still fail, cached or not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StateAccessError } from '../../../../src/errors.js';
import { closeBackends, syncBackendFactories } from '../backend-factories.js';

const range = { start: 0, end: 127 };

afterEach(closeBackends);

describe.each(Object.entries(syncBackendFactories))('%s backend: state handles by name', (_, create) => {
  it('returns the same handle for a repeated name and separate ones for alternating names', () => {
    const b = create({ maxParallelism: 128, keyGroupRange: range });
    b.setCurrentKey('k');
    const sum = b.store.value<number>('sum');
    expect(b.store.value<number>('sum')).toBe(sum);
    // A name built at run time (not the same string object) finds the same handle.
    expect(b.store.value<number>(['s', 'u', 'm'].join(''))).toBe(sum);
    const count = b.store.value<number>('count');
    expect(count).not.toBe(sum);
    sum.update(1);
    count.update(2);
    for (let i = 0; i < 3; i++) {
      expect(b.store.value<number>('sum').value()).toBe(1);
      expect(b.store.value<number>('count').value()).toBe(2);
    }
    const items = b.store.list<number>('items');
    expect(b.store.list<number>('items')).toBe(items);
    expect(b.store.value<number>('sum')).toBe(sum);
  });

  it('refuses a name registered as another kind right after it was looked up', () => {
    const b = create({ maxParallelism: 128, keyGroupRange: range });
    b.setCurrentKey('k');
    b.store.value<number>('s');
    expect(b.store.value<number>('s')).toBeDefined(); // now the cached one
    expect(() => b.store.list<number>('s')).toThrow(StateAccessError);
    expect(() => b.store.map<string, number>('s')).toThrow(StateAccessError);
    expect(() => b.store.reducing<number>('s', (x, y) => x + y)).toThrow(StateAccessError);
    b.store.list<number>('l');
    expect(() => b.store.value<number>('l')).toThrow(StateAccessError);
  });
});
