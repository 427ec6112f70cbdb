import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCommittedFileParts, readCommittedLogTopic } from '../../../src/connectors/committed-output.js';
import { file } from '../../../src/connectors/file-sink.js';
import { log } from '../../../src/connectors/log-sink.js';
import { openLog } from '../../../src/log/index.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const tmp = (): string => {
  dir = mkdtempSync(path.join(tmpdir(), 'weir-committed-output-'));
  return dir;
};

describe('readCommittedFileParts', () => {
  it('reads committed jsonl parts of its prefix only, never staged files', () => {
    const d = tmp();
    writeFileSync(path.join(d, 'part-0-0-ab12-0.jsonl'), '{"a":1}\n{"a":2}\n');
    writeFileSync(path.join(d, 'part-1-0-cd34-0.jsonl'), '{"a":3}\n');
    writeFileSync(path.join(d, '.part-0-0-ab12-1.jsonl.inprogress'), '{"a":4}\n');
    writeFileSync(path.join(d, '.part-0-0-ab12-2.jsonl.pending-3'), '{"a":5}\n');
    writeFileSync(path.join(d, 'other-0-0-ef56-0.jsonl'), '{"a":6}\n');
    expect(readCommittedFileParts(d, 'jsonl')).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
    expect(readCommittedFileParts(path.join(d, 'missing'), 'jsonl')).toEqual([]);
  });

  it('reads csv parts as lines, leaving out the header row each part starts with', () => {
    const d = tmp();
    writeFileSync(path.join(d, 'part-0-0-ab12-0.csv'), 'k,v\r\n1,2\r\n3,4\r\n');
    expect(readCommittedFileParts(d, 'csv', 'part', ['k', 'v'])).toEqual(['1,2', '3,4']);
    expect(readCommittedFileParts(d, 'csv')).toEqual(['k,v', '1,2', '3,4']);
  });

  it('is what sinks.file exposes as readCommitted', async () => {
    const d = tmp();
    writeFileSync(path.join(d, 'out-0-0-ab12-0.jsonl'), '{"a":1}\n');
    expect(await file({ dir: d, format: 'jsonl', prefix: 'out' }).readCommitted?.()).toEqual([{ a: 1 }]);
  });
});

describe('readCommittedLogTopic', () => {
  it('reads every partition of a topic; a missing topic or directory has no output', async () => {
    const d = tmp();
    const handle = openLog(d);
    const t = handle.topic<{ n: number }>('out', { partitions: 2 });
    await t.append([{ n: 1 }, { n: 2 }], { partition: 0 });
    await t.append([{ n: 3 }], { partition: 1 });
    await handle.close();
    expect(await readCommittedLogTopic(d, 'out')).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(await log({ dir: d, topic: 'out' }).readCommitted?.()).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(await readCommittedLogTopic(d, 'nope')).toEqual([]);
    expect(await readCommittedLogTopic(path.join(d, 'missing'), 'out')).toEqual([]);
  });
});
