/** The `dashboard` job option (DESIGN.md §6): where the job's process serves its web dashboard. */

import { checkKnownKeys, type KeyTable } from '../coordinator/option-keys.js';
import { InvalidOptionError } from '../errors.js';

const DASHBOARD_OPTION_KEYS: KeyTable<DashboardOptions> = { port: true, host: true, token: true, job: true };

export interface DashboardOptions {
  /** TCP port; 0 (the default) picks a free one (see `JobClient.dashboardUrl`). */
  readonly port?: number;
  /** Interface to bind. Default `127.0.0.1`: only this machine can see the job. */
  readonly host?: string;
  /**
   * Enables the actions (cancel, stop with savepoint): a request must carry this token as
   * `Authorization: Bearer <token>`. Without it the dashboard is read-only.
   */
  readonly token?: string;
  /** Job name in the page title and the `job` label of `/metrics`. Default: the module's file name. */
  readonly job?: string;
}

export interface ResolvedDashboardOptions {
  readonly port: number;
  readonly host: string;
  readonly token: string | undefined;
  readonly job: string | undefined;
}

/** Checks `dashboard`; `undefined` or `false` means no dashboard, `true` the defaults. */
export function resolveDashboardOptions(
  o: DashboardOptions | boolean | undefined,
): ResolvedDashboardOptions | null {
  if (o === undefined || o === false) return null;
  if (o === true) return { port: 0, host: '127.0.0.1', token: undefined, job: undefined };
  if (typeof o !== 'object' || o === null) {
    throw new InvalidOptionError('dashboard', `must be an object or a boolean, got ${JSON.stringify(o)}`);
  }
  checkKnownKeys(o, 'dashboard', DASHBOARD_OPTION_KEYS);
  const port = o.port ?? 0;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidOptionError(
      'dashboard.port',
      `must be an integer in [0, 65535], got ${JSON.stringify(port)}`,
    );
  }
  const host = o.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.length === 0) {
    throw new InvalidOptionError('dashboard.host', `must be a non-empty string, got ${JSON.stringify(host)}`);
  }
  if (o.token !== undefined && (typeof o.token !== 'string' || o.token.length < 8)) {
    throw new InvalidOptionError('dashboard.token', 'must be a string of at least 8 characters');
  }
  if (o.job !== undefined && (typeof o.job !== 'string' || o.job.length === 0)) {
    throw new InvalidOptionError('dashboard.job', `must be a non-empty string, got ${JSON.stringify(o.job)}`);
  }
  return { port, host, token: o.token, job: o.job };
}
