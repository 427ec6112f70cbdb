/** Shared helpers for the log's unit tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function tempLogDir(label: string): { dir: string; remove: () => void } {
  const base = mkdtempSync(join(tmpdir(), `weir-log-${label}-`));
  return { dir: join(base, 'log'), remove: () => rmSync(base, { recursive: true, force: true }) };
}
