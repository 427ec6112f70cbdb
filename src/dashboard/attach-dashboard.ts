/** Connects a started dashboard server to a job's client and closes it when the job ends. */

import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobClient } from '../coordinator/job-client.js';
import type { ResolvedDashboardOptions } from './dashboard-options.js';
import type { Dashboard } from './dashboard-server.js';
import { JobMonitor } from './job-monitor.js';

/** The job's name from its module URL: `examples/keyed-sum.ts` → `keyed-sum`. */
export function jobNameOf(moduleUrl: string): string {
  const path = moduleUrl.startsWith('file:') ? fileURLToPath(moduleUrl) : moduleUrl;
  const file = basename(path);
  return file.slice(0, file.length - extname(file).length) || 'job';
}

/**
 * Serves the dashboard of `client` until its `done` settles (a last snapshot goes to open pages
 * first). Synchronous: call it right after creating the client, before its first event.
 */
export function attachDashboard(
  dashboard: Dashboard,
  client: JobClient,
  options: ResolvedDashboardOptions,
  moduleUrl: string,
): void {
  const monitor = new JobMonitor(client, options.job ?? jobNameOf(moduleUrl));
  dashboard.attach(monitor, {
    cancel: () => client.cancel(),
    stopWithSavepoint: (dir) => client.stopWithSavepoint(dir),
  });
  client.dashboardUrl = dashboard.url;
  const close = () => {
    void dashboard.close().finally(() => monitor.dispose());
  };
  client.done.then(close, close);
}
