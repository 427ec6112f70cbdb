/** Starts a job's dashboard next to its client and closes it when the job ends. */

import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobClient } from '../coordinator/job-client.js';
import type { ResolvedDashboardOptions } from './dashboard-options.js';
import { startDashboard } from './dashboard-server.js';
import { JobMonitor } from './job-monitor.js';

/** The job's name from its module URL: `examples/keyed-sum.ts` → `keyed-sum`. */
export function jobNameOf(moduleUrl: string): string {
  const path = moduleUrl.startsWith('file:') ? fileURLToPath(moduleUrl) : moduleUrl;
  const file = basename(path);
  return file.slice(0, file.length - extname(file).length) || 'job';
}

/**
 * Serves the dashboard of `client` until its `done` settles (a last snapshot goes to open pages
 * first). Resolves with the bound URL.
 */
export async function attachDashboard(
  client: JobClient,
  options: ResolvedDashboardOptions,
  moduleUrl: string,
): Promise<string> {
  const monitor = new JobMonitor(client, options.job ?? jobNameOf(moduleUrl));
  const dashboard = await startDashboard(
    monitor,
    { cancel: () => client.cancel(), stopWithSavepoint: (dir) => client.stopWithSavepoint(dir) },
    options,
  );
  const close = () => {
    void dashboard.close().finally(() => monitor.dispose());
  };
  client.done.then(close, close);
  return dashboard.url;
}
