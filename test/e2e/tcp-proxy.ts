/**
 * A TCP proxy for simulating a network cut to a shared service without stopping it: `cut()`
 * destroys every open connection and stops listening (new connections are refused), `restore()`
 * listens again on the same port.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  let server: Server;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = createServer((client) => {
        accepted++;
        const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
        sockets.add(client);
        sockets.add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : port);
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      sockets.clear();
      server.close(() => resolve());
    });
  const port = await listen(0);
  let open = true;
  return {
    port,
    get accepted() {
      return accepted;
    },
    async cut() {
      if (!open) return;
      open = false;
      await stop();
    },
    async restore() {
      if (open) return;
      await listen(port);
      open = true;
    },
    async close() {
      if (open) await stop();
      open = false;
    },
  };
}
