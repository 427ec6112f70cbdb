/**
 * `weir cluster status --cluster URL --cluster-name NAME [--json]`: the members of a cluster (id,
 * host, pid, age of the last heartbeat), the coordinator and its lease revision
 * (`src/cluster/cluster-status.ts`). Exit status: 0 printed; 1 the server or the cluster cannot be
 * read (no such cluster included); 2 usage error.
 */

import { parseArgs } from 'node:util';
import { resolveClusterOptions } from '../cluster/cluster-options.js';
import { type ClusterStatus, readClusterStatus } from '../cluster/cluster-status.js';
import { WeirError } from '../errors.js';
import type { CommandOutput } from './checkpoints-command.js';

export const CLUSTER_USAGE = 'weir cluster status --cluster URL[,URL] --cluster-name NAME [--json]';

export const CLUSTER_HELP = [
  `usage: ${CLUSTER_USAGE}`,
  '',
  'Prints the members of a weir cluster on NATS JetStream (instance id, host, pid, age of the',
  'last heartbeat; a member older than its timeout is marked stale) and the coordinator with its',
  'lease revision and epoch. --json prints one object. Reads only: joins and creates nothing.',
  'Exit codes: 0 printed, 1 the server or the cluster cannot be read, 2 usage error.',
].join('\n');

const consoleOutput: CommandOutput = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
};

export async function clusterCommand(
  args: readonly string[],
  output: CommandOutput = consoleOutput,
): Promise<number> {
  let servers: string[];
  let name: string;
  let json: boolean;
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        cluster: { type: 'string' },
        'cluster-name': { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (positionals.length !== 1 || positionals[0] !== 'status')
      throw new Error(`unknown subcommand ${JSON.stringify(positionals.join(' '))} (only "status")`);
    if (values.cluster === undefined) throw new Error('--cluster URL is required');
    if (values['cluster-name'] === undefined) throw new Error('--cluster-name NAME is required');
    servers = values.cluster.split(',');
    name = values['cluster-name'];
    json = values.json ?? false;
    resolveClusterOptions({ servers, name }, '--cluster');
  } catch (e) {
    output.err(`weir cluster: ${(e as Error).message}\nusage: ${CLUSTER_USAGE}`);
    return 2;
  }
  let status: ClusterStatus;
  try {
    status = await readClusterStatus(resolveClusterOptions({ servers, name }));
  } catch (e) {
    const message = e instanceof WeirError ? e.message : String(e);
    if (json) output.out(JSON.stringify({ cluster: name, ok: false, error: message }));
    else output.err(`weir cluster: ${message}`);
    return 1;
  }
  if (json) {
    output.out(JSON.stringify({ ok: true, ...status }));
    return 0;
  }
  output.out(`cluster ${status.cluster}: ${status.members.filter((m) => m.live).length} live member(s)`);
  for (const m of status.members)
    output.out(
      `  ${m.instanceId}  host ${m.host}  pid ${m.pid}  last heartbeat ${m.lastHeartbeatAgeMs} ms ago${m.live ? '' : `  STALE (timeout ${m.timeoutMs} ms)`}`,
    );
  const c = status.coordinator;
  output.out(
    c === null
      ? 'coordinator: none'
      : `coordinator: ${c.instanceId}  lease revision ${c.leaseRevision}  epoch ${c.epoch}  renewed ${c.lastRenewalAgeMs} ms ago${c.expired ? '  EXPIRED' : ''}`,
  );
  for (const p of status.problems) output.err(`weir cluster: ${p}`);
  return 0;
}
