/**
 * The stop-with-savepoint protocol's messages on a cluster run's subjects (cluster-savepoint.ts
 * carries them out). Apart so that cluster-checkpoints.ts, whose message unions include them, does
 * not import the protocol's module, which imports the restore code, which reads the checkpoint
 * record type back from cluster-checkpoints.ts: a cycle.
 */

export type SavepointMemberMessage =
  | { readonly type: 'savepoint'; readonly member: string; readonly requestId: string; readonly dir: string }
  | {
      readonly type: 'stopped';
      readonly member: string;
      readonly checkpointId: number;
      /** Every local task's sinks committed everything up to the savepoint. */
      readonly committed: boolean;
    };

export type SavepointCoordinatorMessage =
  | { readonly type: 'savepoint-failed'; readonly requestId: string; readonly message: string }
  | {
      readonly type: 'stop';
      readonly requestId: string;
      readonly checkpointId: number;
      readonly path: string;
    }
  | {
      readonly type: 'stopped-all';
      readonly checkpointId: number;
      readonly path: string;
      readonly sinksCommitted: boolean;
    };
