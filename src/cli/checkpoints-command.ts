/**
 * `weir checkpoints DIR [--json]`: lists the retained (committed) checkpoints of a checkpoint
 * directory — id, trigger time, full or incremental, bytes needed to restore and bytes written by
 * the checkpoint itself, chunks, operators — and verifies every chunk's size and checksum.
 *
 * Exit status: 0 when every checkpoint verifies (or there is none yet); 1 when some checkpoint is
 * damaged (each problem is named) or DIR is not a weir checkpoint directory; 2 for a usage error.
 * Read-only: it never repairs or deletes anything. Cost: reads every referenced chunk once per
 * checkpoint that references it.
 */

import { parseArgs } from 'node:util';
import { WeirError } from '../errors.js';
import { CheckpointStorage } from '../state/storage/checkpoint-storage.js';
import { describeProblems } from '../state/storage/checkpoint-verification.js';

export const CHECKPOINTS_USAGE = 'weir checkpoints DIR [--json]';

/** Where the command writes; the CLI passes stdout/stderr, tests capture. */
export interface CommandOutput {
  out(line: string): void;
  err(line: string): void;
}

const consoleOutput: CommandOutput = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
};

/** One listed checkpoint, as printed and as `--json` emits it. */
export interface CheckpointRow {
  readonly checkpointId: number;
  /** Trigger time, ms since the epoch, and its ISO form; undefined when the metadata is unreadable. */
  readonly timestamp?: number;
  readonly time?: string;
  readonly kind?: 'full' | 'incremental';
  /** Bytes of every chunk restore needs (shared ones included). */
  readonly totalBytes?: number;
  /** Bytes written by this checkpoint itself. */
  readonly ownBytes?: number;
  readonly chunkCount?: number;
  readonly operators?: readonly string[];
  readonly status: 'ok' | 'damaged' | 'metadata-corrupt' | 'gone';
  readonly problems: readonly string[];
}

export async function checkpointsCommand(
  args: readonly string[],
  output: CommandOutput = consoleOutput,
): Promise<number> {
  let dir: string;
  let json: boolean;
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { json: { type: 'boolean' } },
    });
    if (positionals.length !== 1) throw new Error('needs exactly one checkpoint directory');
    dir = positionals[0];
    json = values.json ?? false;
  } catch (e) {
    output.err(`weir checkpoints: ${(e as Error).message}\nusage: ${CHECKPOINTS_USAGE}`);
    return 2;
  }

  let storage: CheckpointStorage;
  try {
    storage = CheckpointStorage.open(dir, { create: false });
  } catch (e) {
    const reason = e instanceof WeirError ? e.message : String(e);
    const message = `${dir} is not a readable weir checkpoint directory (${reason})`;
    if (json) output.out(JSON.stringify({ dir, ok: false, error: message, checkpoints: [] }));
    else output.err(`weir checkpoints: ${message}`);
    return 1;
  }
  let rows: CheckpointRow[];
  try {
    rows = listCheckpoints(storage);
  } finally {
    await storage.close();
  }
  const ok = rows.every((r) => r.status === 'ok');
  if (json) {
    output.out(JSON.stringify({ dir, ok, checkpoints: rows }));
  } else {
    printRows(rows, dir, output);
  }
  return ok ? 0 : 1;
}

/** Describes and verifies every committed checkpoint, ascending by id. */
export function listCheckpoints(storage: CheckpointStorage): CheckpointRow[] {
  return storage.describe().map((listing): CheckpointRow => {
    if (listing.state === 'metadata-corrupt') {
      return {
        checkpointId: listing.checkpointId,
        status: 'metadata-corrupt',
        problems: [`checkpoint ${listing.checkpointId}: metadata corrupt (${listing.reason})`],
      };
    }
    const verification = storage.verifyCheckpoint(listing.checkpointId);
    const status =
      verification.state === 'ok' ||
      verification.state === 'damaged' ||
      verification.state === 'metadata-corrupt'
        ? verification.state
        : 'gone'; // discarded between listing and verifying (a job is running on the directory)
    return {
      checkpointId: listing.checkpointId,
      timestamp: listing.timestamp,
      time: new Date(listing.timestamp).toISOString(),
      kind: listing.kind,
      totalBytes: listing.totalBytes,
      ownBytes: listing.ownBytes,
      chunkCount: listing.chunkCount,
      operators: listing.operators,
      status,
      problems: status === 'gone' ? [] : describeProblems(verification),
    };
  });
}

function printRows(rows: readonly CheckpointRow[], dir: string, output: CommandOutput): void {
  if (rows.length === 0) {
    output.out(`${dir}: no committed checkpoints`);
    return;
  }
  const head = ['checkpoint', 'time (UTC)', 'kind', 'size', 'own', 'chunks', 'status', 'operators'];
  const cells = rows.map((r) => [
    String(r.checkpointId),
    r.time ?? '-',
    r.kind ?? '-',
    r.totalBytes === undefined ? '-' : formatBytes(r.totalBytes),
    r.ownBytes === undefined ? '-' : formatBytes(r.ownBytes),
    r.chunkCount === undefined ? '-' : String(r.chunkCount),
    r.status,
    (r.operators ?? []).join(', '),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) =>
    c
      .map((s, i) => (i === c.length - 1 ? s : s.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  output.out(line(head));
  for (const c of cells) output.out(line(c));
  const damaged = rows.filter((r) => r.status !== 'ok' && r.status !== 'gone');
  if (damaged.length === 0) {
    output.out(`\n${rows.length} checkpoint(s), every chunk verified`);
    return;
  }
  output.err(`\n${damaged.length} of ${rows.length} checkpoint(s) damaged:`);
  for (const r of damaged) for (const p of r.problems) output.err(`  ${p}`);
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
