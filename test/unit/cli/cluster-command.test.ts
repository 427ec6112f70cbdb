/** `weir cluster savepoint DIR`: usage errors (exit 2) and a refused directory (exit 1), offline. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterCommand } from '../../../src/cli/cluster-command.js';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, output: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

const FLAGS = ['--cluster', 'nats://127.0.0.1:1', '--cluster-name', 'sums'];

describe('weir cluster savepoint', () => {
  it.each([
    [['savepoint', ...FLAGS], /savepoint needs one DIR/],
    [['savepoint', 'a', 'b', ...FLAGS], /savepoint needs one DIR/],
    [['savepoint', 'd', ...FLAGS, '--timeout', '0'], /--timeout must be a positive integer/],
    [['status', ...FLAGS, '--timeout', '5'], /--timeout is for "savepoint"/],
    [['stop', ...FLAGS], /only "status" or "savepoint DIR"/],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const c = capture();
    expect(await clusterCommand(args, c.output)).toBe(2);
    expect(c.err.join('\n')).toMatch(message);
  });

  it('refuses a directory that is not empty before asking anyone (exit 1)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-cluster-sp-cli-'));
    try {
      writeFileSync(path.join(dir, 'x'), '');
      const c = capture();
      expect(await clusterCommand(['savepoint', dir, ...FLAGS], c.output)).toBe(1);
      expect(c.err.join('\n')).toMatch(/is not empty; a savepoint never overwrites/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
