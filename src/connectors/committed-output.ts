/**
 * Readers of what a sink has committed, for `weir verify` and tests: the committed part files of
 * `sinks.file` and the records of a `sinks.log` topic. Both return everything committed so far;
 * a caller that wants one run's output reads before and after it and takes the difference
 * (both outputs only ever grow: committed parts are never rewritten, log records never moved).
 * Cost: the whole output is read and decoded, O(committed bytes).
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LogTopicNotFoundError } from '../errors.js';
import { openLog } from '../log/log.js';

/**
 * The records of the committed part files of a file sink: `jsonl` parts parsed per line, `csv`
 * parts as one string per line (the header row of each part, when the sink writes one, left out).
 * Only committed parts (`<prefix>-….jsonl|csv`) are read; staged files are named so that they do
 * not match. A missing directory has no output.
 */
export function readCommittedFileParts(
  dir: string,
  format: 'jsonl' | 'csv',
  prefix = 'part',
  header?: readonly string[],
): unknown[] {
  if (!existsSync(dir)) return [];
  const suffix = `.${format}`;
  const out: unknown[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!name.startsWith(`${prefix}-`) || !name.endsWith(suffix)) continue;
    const lines = readFileSync(join(dir, name), 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    const from = format === 'csv' && header !== undefined ? 1 : 0;
    for (let i = from; i < lines.length; i++) {
      const line = lines[i];
      if (format === 'jsonl') {
        if (line.trim().length > 0) out.push(JSON.parse(line));
      } else if (line.length > 0) out.push(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
  }
  return out;
}

/** Every record of every partition of a log topic, partition by partition; none if the topic does not exist. */
export async function readCommittedLogTopic(dir: string, topic: string): Promise<unknown[]> {
  if (!existsSync(dir)) return [];
  const log = openLog(dir);
  try {
    let t: ReturnType<typeof log.topic>;
    try {
      t = log.topic(topic);
    } catch (e) {
      if (e instanceof LogTopicNotFoundError) return [];
      throw e;
    }
    const out: unknown[] = [];
    for (let p = 0; p < t.partitions; p++) {
      let offset = t.startOffset(p);
      const end = t.endOffset(p);
      while (offset < end) {
        const batch = t.read(p, offset, 4096);
        if (batch.length === 0) break;
        for (const r of batch) out.push(r.value);
        offset = batch[batch.length - 1].offset + 1;
      }
    }
    return out;
  } finally {
    await log.close();
  }
}
