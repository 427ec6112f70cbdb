/**
 * The dashboard's HTTP server, in the job's own process (node:http, no framework):
 *
 * - `GET /`            the page (self-contained: inline CSS, JS and SVG; works offline)
 * - `GET /api/job`     the {@link JobSnapshot} as JSON
 * - `GET /api/events`  server-sent events: the snapshot once on connect, then every second
 * - `GET /metrics`     Prometheus text
 * - `POST /api/cancel`, `POST /api/stop-with-savepoint?dir=PATH`: only when a token is configured,
 *   and only with `Authorization: Bearer <token>`; otherwise 403 (no token configured) or 401.
 *
 * Cost with no page open: nothing (the monitor does its work per metrics sample, not per record;
 * the SSE timer runs only while a client is connected).
 */

import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResolvedDashboardOptions } from './dashboard-options.js';
import { dashboardPage } from './dashboard-page.js';
import type { JobMonitor } from './job-monitor.js';
import { prometheusText } from './prometheus-text.js';

/** Milliseconds between two server-sent snapshots. */
const PUSH_INTERVAL_MS = 1000;

/** Job actions the dashboard may call (the {@link JobClient} methods). */
export interface DashboardActions {
  cancel(): Promise<void>;
  stopWithSavepoint(dir: string): Promise<{ checkpointId: number; path: string }>;
}

export interface Endpoint {
  /** `http://host:port/` of the bound server. */
  readonly url: string;
  readonly port: number;
  /** Ends every event stream and closes the server; requests in flight still get their answer. */
  close(): Promise<void>;
}

export interface Dashboard extends Endpoint {
  /** What to show and what actions call; until then every request is answered 503. */
  attach(monitor: JobMonitor, actions: DashboardActions): void;
}

/**
 * Starts the server; resolves once it listens. The job is attached afterwards (so `startJob` can
 * bind the port before the job starts, and a port in use fails before any thread runs).
 */
export async function startDashboard(
  options: Pick<ResolvedDashboardOptions, 'port' | 'host' | 'token'>,
): Promise<Dashboard> {
  const streams = new Set<ServerResponse>();
  let timer: NodeJS.Timeout | null = null;
  let bound: { monitor: JobMonitor; actions: DashboardActions } | null = null;
  const push = () => {
    if (!bound) return;
    const data = `data: ${JSON.stringify(bound.monitor.snapshot())}\n\n`;
    for (const res of streams) res.write(data);
  };
  const server: Server = createServer((req, res) => {
    if (!bound) {
      send(res, 503, 'text/plain', 'dashboard: the job is starting\n');
      return;
    }
    handle(bound.monitor, bound.actions, req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', `dashboard: ${(e as Error).message}\n`);
      else res.destroy(e as Error);
    });
  });

  async function handle(
    monitor: JobMonitor,
    actions: DashboardActions,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://dashboard');
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'GET /':
      case 'GET /index.html':
        return send(
          res,
          200,
          'text/html; charset=utf-8',
          dashboardPage(monitor.job, options.token !== undefined),
        );
      case 'GET /api/job':
        return send(res, 200, 'application/json', JSON.stringify(monitor.snapshot()));
      case 'GET /metrics':
        return send(res, 200, 'text/plain; version=0.0.4; charset=utf-8', prometheusText(monitor.snapshot()));
      case 'GET /api/events': {
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-store',
          connection: 'keep-alive',
        });
        res.write(`retry: ${PUSH_INTERVAL_MS}\ndata: ${JSON.stringify(monitor.snapshot())}\n\n`);
        streams.add(res);
        if (timer === null) {
          timer = setInterval(push, PUSH_INTERVAL_MS);
          timer.unref();
        }
        req.on('close', () => {
          streams.delete(res);
          if (streams.size === 0 && timer !== null) {
            clearInterval(timer);
            timer = null;
          }
        });
        return;
      }
      case 'POST /api/cancel':
      case 'POST /api/stop-with-savepoint': {
        const denied = authorize(req, options.token);
        if (denied)
          return send(res, denied.status, 'application/json', JSON.stringify({ error: denied.error }));
        if (url.pathname === '/api/cancel') {
          // Answer first: the job's end closes this server.
          send(res, 202, 'application/json', JSON.stringify({ cancelling: true }));
          void actions.cancel();
          return;
        }
        const dir = url.searchParams.get('dir');
        if (!dir) return send(res, 400, 'application/json', JSON.stringify({ error: 'missing ?dir=PATH' }));
        try {
          const savepoint = await actions.stopWithSavepoint(dir);
          return send(res, 200, 'application/json', JSON.stringify({ savepoint }));
        } catch (e) {
          return send(res, 409, 'application/json', JSON.stringify({ error: (e as Error).message }));
        }
      }
      default:
        return send(res, 404, 'text/plain', `not found: ${route}\n`);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/`,
    port,
    attach(monitor, actions) {
      bound = { monitor, actions };
    },
    async close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      // One last snapshot, so an open page shows how the job ended.
      push();
      for (const res of streams) res.end();
      streams.clear();
      // Requests in flight (a stop-with-savepoint that ended the job) still get their answer.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
    },
  };
}

/** Null when the request may run an action; otherwise the status and why not. */
export function authorize(
  req: Pick<IncomingMessage, 'headers'>,
  token: string | undefined,
): { status: 401 | 403; error: string } | null {
  if (token === undefined) {
    return { status: 403, error: 'actions are disabled: start the dashboard with a token to enable them' };
  }
  const header = req.headers.authorization ?? '';
  const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
  const expected = Buffer.from(token);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { status: 401, error: 'missing or wrong token (Authorization: Bearer <token>)' };
  }
  return null;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * Only `GET /metrics` (Prometheus text), for `weir run --metrics-port`: a scrape target without
 * the page. Binds `host` (default 127.0.0.1; a Prometheus on another machine needs `0.0.0.0`).
 */
export async function startMetricsEndpoint(
  monitor: JobMonitor,
  options: { port: number; host: string },
): Promise<Endpoint> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://metrics').pathname;
    if (req.method === 'GET' && path === '/metrics') {
      send(res, 200, 'text/plain; version=0.0.4; charset=utf-8', prometheusText(monitor.snapshot()));
    } else send(res, 404, 'text/plain', 'only GET /metrics here\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
