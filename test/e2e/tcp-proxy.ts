/**
 * A TCP proxy for simulating a network cut to a shared service without stopping it: `cut()`
 * destroys every open connection and stops listening (new connections are refused), `restore()`
 * listens again on the same port. `hold()` stops passing the server's bytes to the clients of the
 * open connections (the clients' bytes still go through): what the server sends from then on
 * until the `cut()` that follows is lost, as on a connection that died just then.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  hold(): void;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const upstreams = new Map<Socket, Socket>();
  let accepted = 0;
  let server: Server;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = createServer((client) => {
        accepted++;
        const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
        sockets.add(client);
        sockets.add(upstream);
        upstreams.set(upstream, client);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
          upstreams.delete(upstream);
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
    hold() {
      for (const [upstream, client] of upstreams) {
        upstream.unpipe(client);
        upstream.pause();
      }
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
