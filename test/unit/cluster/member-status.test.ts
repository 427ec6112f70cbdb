/** The record an instance publishes for `weir cluster status` (src/cluster/member-status.ts). */
import { describe, expect, it } from 'vitest';
import { memberStatusLines } from '../../../src/cli/cluster-command.js';
import {
  decodeMemberStatus,
  encodeMemberStatus,
  memberStatusRecord,
} from '../../../src/cluster/member-status.js';
import type { OperatorMetrics } from '../../../src/protocol/task-deployment.js';

const op = (name: string, recordsIn: number, recordsOut: number, extra: Partial<OperatorMetrics> = {}) =>
  ({ nodeId: 0, name, recordsIn, recordsOut, ...extra }) as OperatorMetrics;

const samples = new Map<string, readonly OperatorMetrics[]>([
  // keys out of order (10 after 2): the record sorts them numerically
  ['10/0', [op('sum', 5, 5), op('sink', 5, 0)]],
  [
    '2/1',
    [
      op('source', 0, 9, {
        load: {
          idleMs: 10,
          backpressuredMs: 20,
          outputFill: 0.5,
          remoteEdges: [
            {
              flow: 'r-0-1-0',
              direction: 'out',
              records: 9,
              bytes: 90,
              outstandingBytes: 30,
              creditStalls: 1,
              resent: 0,
            },
          ],
        },
      }),
    ],
  ],
]);

describe('memberStatusRecord', () => {
  it("takes each subtask's chain head (load, remote edges) and its last operator's records out, in key order", () => {
    const r = memberStatusRecord('m1', 'run1', 2, 1234, samples);
    expect(r).toMatchObject({ instanceId: 'm1', run: 'run1', attempt: 2, at: 1234 });
    expect(r.subtasks.map((t) => t.key)).toEqual(['2/1', '10/0']);
    expect(r.subtasks[0]).toEqual({
      key: '2/1',
      name: 'source',
      recordsIn: 0,
      recordsOut: 9,
      idleMs: 10,
      backpressuredMs: 20,
      outputFill: 0.5,
      remoteEdges: [
        {
          flow: 'r-0-1-0',
          direction: 'out',
          records: 9,
          bytes: 90,
          outstandingBytes: 30,
          creditStalls: 1,
          resent: 0,
        },
      ],
    });
    // no load sampled yet: zeros, no fill, no edges
    expect(r.subtasks[1]).toEqual({
      key: '10/0',
      name: 'sum',
      recordsIn: 5,
      recordsOut: 0,
      idleMs: 0,
      backpressuredMs: 0,
    });
  });

  it('round-trips through its encoding and rejects what is not a record, saying why', () => {
    const r = memberStatusRecord('m1', 'run1', 0, 1, samples);
    expect(decodeMemberStatus(encodeMemberStatus(r))).toEqual(r);
    expect(decodeMemberStatus('{')).toMatchObject({ invalid: expect.stringContaining('not JSON') });
    expect(decodeMemberStatus('3')).toEqual({ invalid: 'not an object' });
    expect(decodeMemberStatus(JSON.stringify({ ...r, run: 1 }))).toEqual({ invalid: 'no instanceId or run' });
    expect(decodeMemberStatus(JSON.stringify({ ...r, subtasks: {} }))).toEqual({
      invalid: 'no subtasks array',
    });
    const bad = { ...r, subtasks: [{ ...r.subtasks[0], idleMs: 'x' }] };
    expect(decodeMemberStatus(JSON.stringify(bad))).toEqual({ invalid: 'subtask 2/1: no numeric idleMs' });
  });

  it('prints one line per subtask and one per remote edge flow with its lag', () => {
    const r = { ...memberStatusRecord('m1', 'run1', 0, 1, samples), ageMs: 5 };
    expect(memberStatusLines(r)).toEqual([
      'run run1  attempt 0  published 5 ms ago',
      '2/1 source: 0 in, 9 out, backpressured 20 ms, idle 10 ms, output ring 50%',
      '  → r-0-1-0: 9 records, 90 bytes sent, lag 30 bytes not yet read, 1 credit stalls, 0 resent',
      '10/0 sum: 5 in, 0 out, backpressured 0 ms, idle 0 ms',
    ]);
    expect(memberStatusLines(undefined)).toEqual(['(no subtasks published)']);
  });
});
