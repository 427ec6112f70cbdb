import { describe, expect, it } from 'vitest';
import { checksumOf, digestOf } from '../../../bench/pipeline/sum-digest.js';
import { type DigestReport, summarizeDigestReports } from '../../../bench/pipeline/weir.js';

const digest = (entries: [string, number][], emitted: number) => digestOf(new Map(entries), emitted);

describe('summarizeDigestReports (weir pipeline case)', () => {
  it('merges the subtasks into the checksum of all final sums, timed first record → last end of input', () => {
    const reports: DigestReport[] = [
      { subtask: 1, firstAt: 1005, endAt: 1900, digest: digest([['k2', 7]], 2) },
      {
        subtask: 0,
        firstAt: 1010,
        endAt: 2000,
        digest: digest(
          [
            ['k0', 3],
            ['k1', 4],
          ],
          3,
        ),
      },
    ];
    const expected = checksumOf(
      digest(
        [
          ['k0', 3],
          ['k1', 4],
          ['k2', 7],
        ],
        5,
      ),
    );
    expect(summarizeDigestReports(reports, 400)).toEqual({ ms: 995, setupMs: 605, checksum: expected });
  });

  it('ignores the first-record time of a subtask that saw no record, and fails when none did', () => {
    const empty: DigestReport = { subtask: 1, firstAt: 0, endAt: 3000, digest: digest([], 0) };
    const one: DigestReport = { subtask: 0, firstAt: 1000, endAt: 2000, digest: digest([['k', 1]], 1) };
    expect(summarizeDigestReports([empty, one], 0)).toMatchObject({ ms: 2000, setupMs: 1000 });
    expect(() => summarizeDigestReports([empty], 0)).toThrow(/no sink subtask reported a record/);
  });
});
