/**
 * `weir cluster savepoint DIR --cluster URL --cluster-name NAME`: a stop-with-savepoint asked from
 * outside the job (cluster-savepoint.ts has the protocol). Reads the cluster's current assignment
 * for its run id, listens on the run's `ctl` subject, publishes `savepoint` on its `up` subject
 * and waits for the coordinator's answer (`stop` or `savepoint-failed`), then for `stopped-all`
 * (every member's sinks committed or the coordinator's bound passed). Joins and creates nothing.
 */

import { resolve } from 'node:path';
import { ClusterError } from '../errors.js';
import { checkSavepointDir } from '../state/storage/savepoint-copy.js';
import type { ClusterCheckpointRecord, CoordinatorMessage } from './cluster-checkpoints.js';
import { openCluster } from './cluster-connection.js';
import { runSubjects } from './cluster-job.js';
import type { ResolvedClusterOptions } from './cluster-options.js';
import { ASSIGNMENT_KEY } from './cluster-options.js';
import type { ClusterSavepoint, SavepointMemberMessage } from './cluster-savepoint.js';

export interface OutsideSavepoint extends ClusterSavepoint {
  /** `stopped-all` arrived and said every member's sinks committed up to the savepoint. */
  readonly sinksCommitted: boolean;
}

/**
 * @throws InvalidOptionError when `dir` is not empty; ClusterError when no job runs under the
 *   name, the coordinator refused (`savepoint-failed`: the job runs on) or did not answer within
 *   `timeoutMs`.
 */
export async function requestClusterSavepoint(
  cluster: ResolvedClusterOptions,
  dir: string,
  timeoutMs: number,
): Promise<OutsideSavepoint> {
  const path = resolve(dir);
  checkSavepointDir(path);
  const conn = await openCluster(cluster, { create: false, role: 'savepoint' });
  try {
    const entry = await conn.coordinator.get(ASSIGNMENT_KEY);
    if (entry?.operation !== 'PUT')
      throw new ClusterError(cluster.name, 'stop-with-savepoint', 'no job has been assigned under this name');
    const { run } = JSON.parse(entry!.string()) as Pick<ClusterCheckpointRecord, 'run'>;
    const subjects = runSubjects(cluster.name, run);
    const requestId = `cli-${process.pid}-${Math.floor(Math.random() * 2 ** 32).toString(36)}`;
    const decoder = new TextDecoder();
    let timer: NodeJS.Timeout | undefined;
    let sub: { unsubscribe(): void } | undefined;
    try {
      return await new Promise<OutsideSavepoint>((done, fail) => {
        let savepoint: ClusterSavepoint | null = null;
        timer = setTimeout(
          () =>
            savepoint
              ? done({ ...savepoint, sinksCommitted: false })
              : fail(
                  new ClusterError(
                    cluster.name,
                    'stop-with-savepoint',
                    `no answer from the coordinator of run ${run} within ${timeoutMs} ms (is the job running?)`,
                  ),
                ),
          timeoutMs,
        );
        sub = conn.nc.subscribe(subjects.ctl, {
          callback: (_e, msg) => {
            const m = JSON.parse(decoder.decode(msg.data)) as CoordinatorMessage;
            if (m.type === 'stop' && m.requestId === requestId)
              savepoint = { checkpointId: m.checkpointId, path: m.path };
            else if (m.type === 'savepoint-failed' && m.requestId === requestId)
              fail(new ClusterError(cluster.name, 'stop-with-savepoint', m.message));
            else if (m.type === 'stopped-all' && savepoint && m.checkpointId === savepoint.checkpointId)
              done({ ...savepoint, sinksCommitted: m.sinksCommitted });
          },
        });
        void conn.nc.flush().then(() => {
          const request: SavepointMemberMessage = {
            type: 'savepoint',
            member: requestId,
            requestId,
            dir: path,
          };
          conn.nc.publish(subjects.up, new TextEncoder().encode(JSON.stringify(request)));
        }, fail);
      });
    } finally {
      clearTimeout(timer);
      sub?.unsubscribe();
    }
  } finally {
    await conn.close();
  }
}
