/**
 * Creates the keyed state backend of each keyed operator in a task, restoring it from the
 * checkpoint's chunks when the task is deployed with restore state.
 */

import type { ExecutionPlan, JobVertex } from '../graph/execution-plan.js';
import type { KeyedBackend } from './operators/keyed-backend.js';
import type { TaskSnapshotStorage } from './snapshot-storage.js';
import type { TaskDeployment } from './task-deployment.js';

export interface KeyedBackendFactory {
  /** Reads restore chunks before the chain is built (async I/O happens here, not in `create`). */
  prepare(): Promise<void>;
  readonly create: (uid: string, operatorName: string) => KeyedBackend;
}

export function createKeyedBackendFactory(
  _d: TaskDeployment,
  _plan: ExecutionPlan,
  _vertex: JobVertex,
  _storage: TaskSnapshotStorage | null,
): KeyedBackendFactory {
  return {
    async prepare() {},
    create() {
      throw new Error('keyed state backend not wired yet');
    },
  };
}
