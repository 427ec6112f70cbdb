/**
 * What every worker thread of a job's pool receives when it starts (piscina `workerData`): the
 * settings of the thread itself, the same for all its tasks and attempts, as opposed to the
 * per-task {@link TaskDeployment}. Here because both sides read it: the pool (src/coordinator)
 * writes it, the task entry (src/worker) applies it.
 */
export interface PoolWorkerData {
  /**
   * Nice levels the thread lowers its own CPU priority by, below its creator's
   * (JobOptions.workerNice; src/worker/thread-priority.ts). 0: unchanged.
   */
  readonly workerNice: number;
}
