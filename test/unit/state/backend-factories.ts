/** The keyed state backends under test, behind one factory shape, so tests run against each. */

import { HeapKeyedStateBackend } from '../../../src/state/heap-keyed-state-backend.js';
import { assignToKeyGroup, type KeyGroupRange } from '../../../src/state/key-groups.js';
import type { KeyedStateBackend } from '../../../src/state/keyed-state-backend.js';

export interface BackendOptions {
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  readonly incremental?: boolean;
  readonly clock?: () => number;
}

export type BackendFactory = (options: BackendOptions) => Promise<KeyedStateBackend>;

export const backendFactories: Record<string, BackendFactory> = {
  heap: async (o) => new HeapKeyedStateBackend(o),
};

export function keyGroupOf(key: unknown, maxParallelism: number): number {
  return assignToKeyGroup(key, maxParallelism);
}
