/**
 * Writes a benchmark result as pretty-printed JSON, creating the directory first. Results go to
 * `bench/results/` ({@link resultsPath}); the file is overwritten, so one file holds one run.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of `bench/results/<fileName>`, independent of the current directory. */
export function resultsPath(fileName: string): string {
  return fileURLToPath(new URL(`../results/${fileName}`, import.meta.url));
}

/** Synchronous on purpose: it runs once, after the measurements, and must finish before exit. */
export function writeJson(filePath: string, data: unknown): void {
  mkdirSync(path.dirname(path.resolve(filePath)), { recursive: true });
  writeFileSync(filePath, `${JSON.stringify(data, null, 2)}\n`);
}
