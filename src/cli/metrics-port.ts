/** `weir run --metrics-port PORT`: Prometheus text of the running job at `/metrics`. */

import type { JobClient } from '../coordinator/job-client.js';
import { jobNameOf } from '../dashboard/attach-dashboard.js';
import { startMetricsEndpoint } from '../dashboard/dashboard-server.js';
import { JobMonitor } from '../dashboard/job-monitor.js';
import { InvalidOptionError } from '../errors.js';

/**
 * Serves `/metrics` for `client` on `host:port` until `close()`. A port it cannot bind cancels
 * the job and throws an {@link InvalidOptionError} naming `--metrics-port`.
 */
export async function serveMetrics(
  client: JobClient,
  port: number,
  host = '127.0.0.1',
): Promise<{ url: string; close(): Promise<void> }> {
  const monitor = new JobMonitor(client, jobNameOf(client.jobModule));
  try {
    const endpoint = await startMetricsEndpoint(monitor, { port, host });
    return { url: endpoint.url, close: () => endpoint.close().finally(() => monitor.dispose()) };
  } catch (e) {
    monitor.dispose();
    await client.cancel();
    throw new InvalidOptionError(
      '--metrics-port',
      `cannot listen on ${host}:${port}: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
}
