/**
 * Importing weir loads no broker or database client: every worker thread imports weir, so a
 * client loaded at import time would be paid by every thread of every job (see
 * src/connectors/client-libraries.ts). A connector loads its client where it first connects.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const CLIENTS = /[\\/]node_modules[\\/](ioredis|pg|pg-copy-streams|@nats-io[\\/][^\\/]+)[\\/]/;

/** The client packages loaded (CommonJS cache) after running `script` in a fresh process. */
function clientsLoadedBy(script: string): string[] {
  const out = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module';
       ${script}
       const cache = createRequire(import.meta.url).cache;
       const re = ${CLIENTS};
       const names = new Set(Object.keys(cache).map((k) => k.match(re)?.[1]).filter(Boolean));
       console.log(JSON.stringify([...names].sort()));`,
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(out.trim()) as string[];
}

describe('client libraries load on first use', () => {
  it('importing weir and declaring connectors loads no client', () => {
    const loaded = clientsLoadedBy(
      `const { sources, sinks } = await import(${JSON.stringify(dist)});
       sources.jetstream({ servers: 'nats://127.0.0.1:4222', stream: 's' });
       sinks.postgres({ connection: 'postgres://root@127.0.0.1:5432/test', table: 't' });
       sinks.redisStream({ url: 'redis://127.0.0.1:6379', stream: 's' });`,
    );
    expect(loaded).toEqual([]);
  });

  it('the check can fail: a client imported by the script shows up', () => {
    expect(clientsLoadedBy(`await import('ioredis');`)).toEqual(['ioredis']);
  });
});
