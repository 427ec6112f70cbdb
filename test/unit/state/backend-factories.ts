/** The keyed state backends under test, behind one factory shape, so tests run against each. */

import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';
import { assignToKeyGroup, type KeyGroupRange } from '../../../src/state/key-groups.js';
import type { KeyedStateBackend } from '../../../src/state/keyed-state-backend.js';
import { LmdbKeyedStateBackend } from '../../../src/state/lmdb/lmdb-keyed-state-backend.js';

export interface BackendOptions {
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  readonly incremental?: boolean;
  readonly fullEvery?: number;
  readonly clock?: () => number;
}

export type SyncBackendFactory = (options: BackendOptions) => KeyedStateBackend;
export type BackendFactory = (options: BackendOptions) => Promise<KeyedStateBackend>;

const open = new Set<KeyedStateBackend>();

function tracked(create: SyncBackendFactory): SyncBackendFactory {
  return (o) => {
    const b = create(o);
    open.add(b);
    return b;
  };
}

/**
 * Synchronous factories; every backend they create is closed by {@link closeBackends}. The lmdb
 * one uses small cache and write-back bounds so that tests exercise eviction and write-back.
 */
export const syncBackendFactories: Record<string, SyncBackendFactory> = {
  heap: tracked((o) => new HeapKeyedStateBackend(o)),
  lmdb: tracked((o) => new LmdbKeyedStateBackend({ ...o, maxPendingWrites: 7, maxCachedEntries: 13 })),
};

export const backendFactories: Record<string, BackendFactory> = Object.fromEntries(
  Object.entries(syncBackendFactories).map(([name, f]) => [name, async (o: BackendOptions) => f(o)]),
);

/** Closes every backend the factories created (call from afterEach). */
export async function closeBackends(): Promise<void> {
  const all = [...open];
  open.clear();
  await Promise.all(all.map((b) => b.close()));
}

export function keyGroupOf(key: unknown, maxParallelism: number): number {
  return assignToKeyGroup(key, maxParallelism);
}
