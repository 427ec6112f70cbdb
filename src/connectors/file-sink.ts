/**
 * `sinks.file({ dir, format, csv?, rollover?, prefix? })`: writes records as part files in `dir`.
 *
 * Files (`P` = prefix, default `part`; `s` subtask, `a` attempt, `t` a random token per writer,
 * `k` a sequence number per writer, `e` = `jsonl` or `csv`):
 * - `.P-s-a-t-k.e.inprogress`: the part being written;
 * - `.P-s-a-t-k.e.pending-<checkpointId>`: sealed at that checkpoint, not yet committed;
 * - `P-s-a-t-k.e`: committed. Committed part files are the only files in `dir` whose names end
 *   in `.jsonl`/`.csv` (public contract); the token keeps names unique across attempts,
 *   rescaling and process restarts (`attempt` starts at 0 again after `restoreFrom`).
 *
 A committing sink (`src/api/committing-sink.ts`, the interface of `sinks.custom`), using the
 * rename-if-exists pattern. Exactly-once (two-phase commit): `preCommit(c)` closes the open part
 * (and parts closed by rollover since the last barrier), fsyncs them, renames them to pending
 * names carrying `c`, fsyncs `dir`, and returns them as checkpoint `c`'s committable; the
 * committer renames them to their final names once `c` completed. A commit is idempotent: a
 * pending part already renamed (its final file exists) is fine, one whose pending and final files
 * are both missing is a {@link FileSinkError} (data loss is never silent). On restore the runtime
 * commits the restored checkpoint's committables again (commit-on-restore).
 *
 * Stray files (parts of a failed attempt) are swept when a writer starts, by a rule that needs
 * only the subtask's own view: subtask `i` deletes the in-progress and pending files with
 * subtask index `i`, and subtask 0 also those with an index `>= parallelism` (no subtask of the
 * new attempt writes those, so none of them is current). In-progress files are never in a
 * snapshot, so they are always stray. A pending file of checkpoint `c` is in the restored state
 * (and committed by whichever subtask got its entry) iff `c <= restoredCheckpointId`: the
 * writer's snapshot at the restored checkpoint lists every part it had sealed and not yet seen
 * committed. So only pending files of later checkpoints are deleted; on a fresh start (no
 * restore) every pending file of the swept indices is stray. A subtask sweeps before it writes,
 * and only files of indices no other current writer uses, so the sweep never races a writer of
 * the current attempt. `dir` (with `prefix`) must belong to one sink of one job.
 *
 * Without exactly-once (at-least-once or no checkpointing) the writer commits directly: at every
 * barrier, at every rollover and at the end of input it closes the part and renames it to its
 * final name; it returns no committable. That is at-least-once by nature: after a restart the replayed records are written
 * again.
 *
 * Writes go through a 64 KiB string buffer to `fs.writeSync`; closing a part fsyncs it.
 *
 * One file (over 400 lines) because the naming, the sweep rule and the writer form one protocol
 * whose invariants are stated above; the pure parts (`parseStagedName`, `isStray`,
 * `commitPendingPart`) are exported for tests.
 */

import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import type { CommittingSink, CommittingSinkWriter, SinkWriterContext } from '../api/committing-sink.js';
import { FileSinkError, InvalidOptionError } from '../errors.js';
import { readCommittedFileParts } from './committed-output.js';
import { custom } from './custom-sink.js';
import { encodeCsvRow } from './formats/csv.js';
import { encodeRecord } from './formats/text-format.js';

export interface FileSinkOptions {
  /** Output directory, created if missing. Relative paths use the cwd. */
  readonly dir: string;
  readonly format: 'jsonl' | 'csv';
  readonly csv?: {
    /** Column names: written as the first row of every part; object records are written in this order. */
    readonly header?: readonly string[];
    /** One character other than `"`, `\r`, `\n`. Default `,`. */
    readonly delimiter?: string;
  };
  /** Close the part and start a new one once it holds this many bytes or records. */
  readonly rollover?: { readonly maxBytes?: number; readonly maxRecords?: number };
  /** File name prefix (letters, digits, `_`), default `part`. */
  readonly prefix?: string;
}

/** One sealed part awaiting commit (a checkpoint's committable is a list of them). Names are relative to `dir`. */
export interface FilePendingPart {
  readonly pending: string;
  readonly final: string;
  readonly checkpointId: number;
}

/** Bytes buffered before a write. */
const WRITE_BUFFER_BYTES = 64 * 1024;

export function file<T = unknown>(options: FileSinkOptions): CommittingSink<T, FilePendingPart[]> {
  const o = options ?? ({} as FileSinkOptions);
  if (typeof o.dir !== 'string' || o.dir === '')
    throw new InvalidOptionError('sinks.file.dir', 'must be a non-empty string');
  if (o.format !== 'jsonl' && o.format !== 'csv') {
    throw new InvalidOptionError('sinks.file.format', `must be 'jsonl' or 'csv', got ${String(o.format)}`);
  }
  if (o.csv !== undefined && o.format !== 'csv') {
    throw new InvalidOptionError(
      'sinks.file.csv',
      `applies to format 'csv' only, the format is '${o.format}'`,
    );
  }
  const header = o.csv?.header;
  if (
    header !== undefined &&
    (!Array.isArray(header) || header.length === 0 || header.some((h) => typeof h !== 'string'))
  ) {
    throw new InvalidOptionError('sinks.file.csv.header', 'must be a non-empty array of strings');
  }
  const delimiter = o.csv?.delimiter ?? ',';
  if (typeof delimiter !== 'string' || delimiter.length !== 1 || '"\r\n'.includes(delimiter)) {
    throw new InvalidOptionError(
      'sinks.file.csv.delimiter',
      `must be one character other than a quote or a line break, got ${JSON.stringify(delimiter)}`,
    );
  }
  for (const key of ['maxBytes', 'maxRecords'] as const) {
    const v = o.rollover?.[key];
    if (v !== undefined && !(Number.isSafeInteger(v) && v > 0)) {
      throw new InvalidOptionError(
        `sinks.file.rollover.${key}`,
        `must be a positive integer, got ${String(v)}`,
      );
    }
  }
  const prefix = o.prefix ?? 'part';
  if (typeof prefix !== 'string' || !/^[A-Za-z0-9_]+$/.test(prefix)) {
    throw new InvalidOptionError(
      'sinks.file.prefix',
      `must be letters, digits or _, got ${JSON.stringify(prefix)}`,
    );
  }
  const config: FileSinkConfig = {
    dir: resolve(process.cwd(), o.dir),
    format: o.format,
    header,
    delimiter,
    maxBytes: o.rollover?.maxBytes ?? Number.POSITIVE_INFINITY,
    maxRecords: o.rollover?.maxRecords ?? Number.POSITIVE_INFINITY,
    prefix,
  };
  const sink = custom<T, FilePendingPart[]>({
    name: `file:${config.dir}`,
    createWriter: (ctx) => new FileSinkWriter<T>(config, ctx),
    commit: (parts) => commitPendingParts(config.dir, parts),
    readCommitted: () => readCommittedFileParts(config.dir, config.format, config.prefix, config.header),
  });
  return { ...sink, type: 'file' };
}

export interface FileSinkConfig {
  readonly dir: string;
  readonly format: 'jsonl' | 'csv';
  readonly header: readonly string[] | undefined;
  readonly delimiter: string;
  readonly maxBytes: number;
  readonly maxRecords: number;
  readonly prefix: string;
}

/** A staged (in-progress or pending) file name, parsed. */
export interface StagedName {
  readonly subtaskIndex: number;
  /** `undefined` for an in-progress file. */
  readonly checkpointId: number | undefined;
}

/** Parses a staged file name of `prefix`/`ext`; `null` for any other name. */
export function parseStagedName(name: string, prefix: string, ext: string): StagedName | null {
  const m = /^\.([A-Za-z0-9_]+)-(\d+)-\d+-[0-9a-f]+-\d+\.([a-z]+)\.(?:inprogress|pending-(\d+))$/.exec(name);
  if (!m || m[1] !== prefix || m[3] !== ext) return null;
  return { subtaskIndex: Number(m[2]), checkpointId: m[4] === undefined ? undefined : Number(m[4]) };
}

/**
 * Whether the writer of subtask `subtaskIndex` (of `parallelism`) deletes `staged` when it starts
 * after a restore from `restoredCheckpointId` (`undefined`: unknown), or on a fresh start.
 */
export function isStray(
  staged: StagedName,
  subtaskIndex: number,
  parallelism: number,
  restore: { readonly restored: boolean; readonly restoredCheckpointId: number | undefined },
): boolean {
  const mine =
    staged.subtaskIndex === subtaskIndex || (subtaskIndex === 0 && staged.subtaskIndex >= parallelism);
  if (!mine) return false;
  if (staged.checkpointId === undefined) return true; // in-progress: never in a snapshot
  if (!restore.restored) return true; // nothing restored: no one will commit it
  if (restore.restoredCheckpointId === undefined) return false; // cannot tell: keep
  return staged.checkpointId > restore.restoredCheckpointId;
}

/**
 * Commits one pending part by renaming it to its final name. Idempotent: `'already-committed'`
 * when only the final file exists. Throws {@link FileSinkError} when both are missing (the
 * checkpoint's output would be lost) or both exist (a name collision).
 */
export function commitPendingPart(dir: string, part: FilePendingPart): 'committed' | 'already-committed' {
  const pending = join(dir, part.pending);
  const final = join(dir, part.final);
  if (existsSync(final)) {
    if (existsSync(pending)) {
      throw new FileSinkError(final, `cannot commit ${part.pending}: the committed file already exists`);
    }
    return 'already-committed';
  }
  try {
    renameSync(pending, final);
    return 'committed';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && existsSync(final)) return 'already-committed';
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new FileSinkError(
        pending,
        `pending part of checkpoint ${part.checkpointId} is missing and was never committed as ${part.final}: its records are lost`,
        { cause: e },
      );
    }
    throw new FileSinkError(pending, `commit failed: ${(e as Error).message}`, { cause: e });
  }
}

/** Commits one checkpoint's parts and makes the renames durable. */
export function commitPendingParts(dir: string, parts: readonly FilePendingPart[]): void {
  for (const part of parts) commitPendingPart(dir, part);
  if (parts.length > 0) syncDir(dir);
}

/** Makes renames in `dir` durable. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A part file being written or closed and waiting for its barrier. */
interface Part {
  /** Base names in `dir`. */
  readonly inProgress: string;
  readonly final: string;
}

export class FileSinkWriter<T> implements CommittingSinkWriter<T, FilePendingPart[]> {
  readonly #config: FileSinkConfig;
  readonly #ctx: SinkWriterContext;
  readonly #ext: string;
  readonly #transactional: boolean;
  /** Unique part name stem of this writer: `P-s-a-t`. */
  readonly #stem: string;
  #seq = 0;
  /** The open part, or null before the first record after a close. */
  #open: Part | null = null;
  #fd: number | null = null;
  #partBytes = 0;
  #partRecords = 0;
  #buffer = '';
  /** Exactly-once: parts closed by rollover since the last barrier (still in-progress names). */
  #closed: Part[] = [];

  constructor(config: FileSinkConfig, ctx: SinkWriterContext) {
    this.#config = config;
    this.#ctx = ctx;
    this.#ext = config.format;
    this.#transactional = ctx.checkpointingMode === 'exactly-once';
    this.#stem = `${config.prefix}-${ctx.subtaskIndex}-${ctx.attempt}-${randomBytes(4).toString('hex')}`;
    try {
      mkdirSync(config.dir, { recursive: true });
    } catch (e) {
      throw new FileSinkError(config.dir, `cannot create the directory: ${(e as Error).message}`, {
        cause: e,
      });
    }
    // Commit-on-restore is the runtime's (the restored committables are committed again); the
    // sweep removes only what no completed checkpoint holds, so the two never touch one file.
    this.#sweep();
  }

  /** Deletes the stray staged files this subtask is responsible for (see the file comment). */
  #sweep(): void {
    const restore = {
      restored: this.#ctx.restoredCheckpointId !== undefined,
      restoredCheckpointId: this.#ctx.restoredCheckpointId,
    };
    for (const name of readdirSync(this.#config.dir)) {
      const staged = parseStagedName(name, this.#config.prefix, this.#ext);
      if (!staged || !isStray(staged, this.#ctx.subtaskIndex, this.#ctx.parallelism, restore)) continue;
      try {
        unlinkSync(join(this.#config.dir, name));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
          throw new FileSinkError(join(this.#config.dir, name), 'cannot delete a stray part', { cause: e });
      }
    }
  }

  write(value: T): void {
    const encoded = encodeRecord(this.#config.format, value, this.#config.header, this.#config.delimiter);
    if (!encoded.ok) throw new FileSinkError(this.#config.dir, `record ${preview(value)} ${encoded.reason}`);
    if (this.#open === null) this.#openPart();
    this.#append(encoded.text);
    this.#partRecords++;
    if (this.#partRecords >= this.#config.maxRecords || this.#partBytes >= this.#config.maxBytes)
      this.#roll();
  }

  preCommit(checkpointId: number): FilePendingPart[] | undefined {
    this.#roll();
    if (!this.#transactional || this.#closed.length === 0) return undefined;
    const sealed: FilePendingPart[] = [];
    for (const part of this.#closed) {
      const pending = `${part.inProgress.slice(0, -'.inprogress'.length)}.pending-${checkpointId}`;
      this.#rename(part.inProgress, pending);
      sealed.push({ pending, final: part.final, checkpointId });
    }
    syncDir(this.#config.dir);
    this.#closed = [];
    return sealed;
  }

  finish(): void {
    // Exactly-once: the final checkpoint seals and commits what is open.
    if (!this.#transactional) this.#roll();
  }

  /**
   * Releases the open file. No `abort`: staged files a failure leaves (a crash leaves them too)
   * are swept by the next attempt.
   */
  close(): void {
    if (this.#fd !== null) {
      closeSync(this.#fd);
      this.#fd = null;
    }
  }

  #openPart(): void {
    const k = this.#seq++;
    const final = `${this.#stem}-${k}.${this.#ext}`;
    const part: Part = { inProgress: `.${final}.inprogress`, final };
    const path = join(this.#config.dir, part.inProgress);
    try {
      this.#fd = openSync(path, 'wx');
    } catch (e) {
      throw new FileSinkError(path, `cannot create the part file: ${(e as Error).message}`, { cause: e });
    }
    this.#open = part;
    this.#partBytes = 0;
    this.#partRecords = 0;
    if (this.#config.header) this.#append(encodeCsvRow(this.#config.header, this.#config.delimiter));
  }

  #append(text: string): void {
    this.#buffer += text;
    this.#partBytes += Buffer.byteLength(text);
    if (this.#buffer.length >= WRITE_BUFFER_BYTES) this.#flush();
  }

  #flush(): void {
    if (this.#buffer === '' || this.#fd === null) return;
    const data = Buffer.from(this.#buffer);
    this.#buffer = '';
    let at = 0;
    try {
      while (at < data.length) at += writeSync(this.#fd, data, at, data.length - at);
    } catch (e) {
      throw new FileSinkError(
        join(this.#config.dir, this.#open!.inProgress),
        `write failed: ${(e as Error).message}`,
        { cause: e },
      );
    }
  }

  /** Closes the open part (durably); commits it directly, or queues it for the next barrier. */
  #roll(): void {
    const part = this.#open;
    if (part === null || this.#fd === null) return;
    this.#flush();
    const fd = this.#fd;
    this.#fd = null;
    this.#open = null;
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (this.#transactional) {
      this.#closed.push(part);
    } else {
      this.#rename(part.inProgress, part.final);
      syncDir(this.#config.dir);
    }
  }

  #rename(from: string, to: string): void {
    try {
      renameSync(join(this.#config.dir, from), join(this.#config.dir, to));
    } catch (e) {
      throw new FileSinkError(
        join(this.#config.dir, from),
        `rename to ${to} failed: ${(e as Error).message}`,
        { cause: e },
      );
    }
  }
}

function preview(value: unknown): string {
  let s: string;
  try {
    s = typeof value === 'bigint' ? `${value}n` : (JSON.stringify(value) ?? String(value));
  } catch {
    s = String(value);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
