// comlink ships its Node adapter without an `exports` map, so TypeScript cannot find the types
// for the `.mjs` path it resolves at run time; this names them (internal, not public API).
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { MessagePort } from 'node:worker_threads';
  import type { Endpoint } from 'comlink';
  export default function nodeEndpoint(port: MessagePort): Endpoint;
}
