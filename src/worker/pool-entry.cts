/**
 * The worker pool's entry file (piscina's `filename`): a CommonJS module whose only job is to load
 * the task entry, `task-entry.js`, as an ES module with `import()`.
 *
 * Why not hand piscina `task-entry.js` itself: piscina's worker loads its entry with `require()`
 * first and falls back to `import()` only when `require()` throws. A process started with a
 * `require` hook that compiles ES modules to CommonJS (tsx's `--import tsx`, which every worker
 * inherits) then loads weir's whole runtime in the worker as converted CommonJS: every binding
 * imported from another module becomes a getter call (the task loop reads layout constants and
 * calls across modules per record; measured 0.4–0.7× the records/s of the same job without the
 * hook), and the worker holds two copies of weir (the job module imports the ES one). Through
 * this file the runtime is always the ES module graph, one copy per thread, whatever hooks the
 * process has; on a plain Node it changes nothing (`require()` of weir's ES modules gives the same
 * instances as `import()`).
 */

import type { TaskDeployment, TaskResult } from '../protocol/task-deployment.js';

let runTask: ((d: TaskDeployment) => Promise<TaskResult>) | undefined;

export = async function runPoolTask(d: TaskDeployment): Promise<TaskResult> {
  if (runTask === undefined) runTask = (await import('./task-entry.js')).default;
  return runTask(d);
};
