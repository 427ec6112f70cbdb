/**
 * `weir cluster status --cluster URL --cluster-name NAME [--json]`: the members of a cluster (id,
 * host, pid, age of the last heartbeat) with each one's subtasks (time backpressured, ring fill,
 * remote edge lag), the coordinator and its lease revision, the current assignment and the latest
 * committed checkpoint (`src/cluster/cluster-status.ts`). Exit status: 0 printed; 1 the server or the cluster cannot be
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
  "last heartbeat; a member older than its timeout is marked stale), each member's subtasks as it",
  'last published them (records in/out, share of time backpressured, and per remote edge flow the',
  'bytes sent and not yet read by the other end: its lag), the coordinator with its lease revision',
  'and epoch, the current assignment and the latest committed checkpoint. --json prints one',
  'object. Reads only: joins and creates nothing.',
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
  for (const m of status.members) {
    output.out(
      `  ${m.instanceId}  host ${m.host}  pid ${m.pid}  last heartbeat ${m.lastHeartbeatAgeMs} ms ago${m.live ? '' : `  STALE (timeout ${m.timeoutMs} ms)`}`,
    );
    for (const line of memberStatusLines(m.status)) output.out(`    ${line}`);
  }
  const c = status.coordinator;
  output.out(
    c === null
      ? 'coordinator: none'
      : `coordinator: ${c.instanceId}  lease revision ${c.leaseRevision}  epoch ${c.epoch}  renewed ${c.lastRenewalAgeMs} ms ago${c.expired ? '  EXPIRED' : ''}`,
  );
  const a = status.assignment;
  if (a === null) output.out('assignment: none');
  else {
    output.out(
      `assignment: run ${a.run}  attempt ${a.attempt}  coordinator ${a.coordinator}  ${a.restoredFrom === null ? 'fresh start' : `restored from checkpoint ${a.restoredFrom}`}`,
    );
    for (const member of a.members)
      output.out(`  ${member}: ${(a.subtasks[member] ?? []).join(' ') || '(no subtasks)'}`);
  }
  const cp = status.latestCheckpoint;
  output.out(
    cp === null
      ? 'latest checkpoint: none'
      : `latest checkpoint: ${cp.checkpointId}${cp.final ? ' (final)' : ''}  run ${cp.run}  ${cp.subtasks} subtasks  completed ${cp.completedAt} (${cp.ageMs} ms ago)`,
  );
  for (const p of status.problems) output.err(`weir cluster: ${p}`);
  return 0;
}

/** A member's published subtasks, one line each, then one line per remote edge flow. */
export function memberStatusLines(s: ClusterStatus['members'][number]['status']): string[] {
  if (s === undefined) return ['(no subtasks published)'];
  const lines = [`run ${s.run}  attempt ${s.attempt}  published ${s.ageMs} ms ago`];
  for (const t of s.subtasks) {
    const fill = [
      t.inputFill !== undefined ? `input ring ${pct(t.inputFill)}` : '',
      t.outputFill !== undefined ? `output ring ${pct(t.outputFill)}` : '',
    ].filter(Boolean);
    lines.push(
      `${t.key} ${t.name}: ${t.recordsIn} in, ${t.recordsOut} out, backpressured ${Math.round(t.backpressuredMs)} ms, idle ${Math.round(t.idleMs)} ms${fill.length ? `, ${fill.join(', ')}` : ''}`,
    );
    for (const e of t.remoteEdges ?? [])
      lines.push(
        e.direction === 'out'
          ? `  → ${e.flow}: ${e.records} records, ${e.bytes} bytes sent, lag ${e.outstandingBytes ?? 0} bytes not yet read, ${e.creditStalls ?? 0} credit stalls, ${e.resent ?? 0} resent`
          : `  ← ${e.flow}: ${e.records} records, ${e.bytes} bytes received, ${e.queuedBytes ?? 0} bytes queued unread, ${e.gaps ?? 0} gaps repaired`,
      );
  }
  return lines;
}

const pct = (x: number) => `${Math.round(x * 100)}%`;
