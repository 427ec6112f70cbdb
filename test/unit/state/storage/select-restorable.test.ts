import { describe, expect, it } from 'vitest';
import {
  type CheckpointVerification,
  type ChunkHandle,
  selectRestorable,
} from '../../../../src/state/storage/index.js';
import { metadataFor, subtask } from './helpers.js';

const handle: ChunkHandle = {
  chunkId: '0000000000000002/abc/0',
  checkpointId: 2,
  name: 'kg-0',
  size: 10,
  checksum: `sha256-${'A'.repeat(43)}=`,
};

function ok(id: number): CheckpointVerification {
  return { state: 'ok', checkpointId: id, metadata: metadataFor(id, []), chunks: [] };
}

describe('selectRestorable', () => {
  it('takes the newest verified checkpoint and lists every newer one it passed over, with reasons', () => {
    const metadata3 = metadataFor(3, [subtask('op', 0, [handle])]);
    const selection = selectRestorable([
      { state: 'metadata-corrupt', checkpointId: 4, reason: 'failed its checksum' },
      { state: 'damaged', checkpointId: 3, metadata: metadata3, chunks: [{ state: 'missing', handle }] },
      ok(2),
      ok(1),
    ]);
    expect(selection).toEqual({
      state: 'found',
      metadata: metadataFor(2, []),
      skipped: [
        {
          checkpointId: 4,
          state: 'metadata-corrupt',
          problems: ['checkpoint 4: metadata corrupt (failed its checksum)'],
        },
        {
          checkpointId: 3,
          state: 'damaged',
          problems: [
            'checkpoint 3: chunk 0000000000000002/abc/0 (kg-0, 10 B, written by checkpoint 2) missing',
          ],
        },
      ],
    });
  });

  it('stops consuming at the first usable checkpoint (older ones are never verified)', () => {
    const visited: number[] = [];
    function* lazily(): Generator<CheckpointVerification> {
      for (const id of [3, 2, 1]) {
        visited.push(id);
        yield ok(id);
      }
    }
    expect(selectRestorable(lazily()).state).toBe('found');
    expect(visited).toEqual([3]);
  });

  it('distinguishes an empty directory from one where everything is damaged', () => {
    expect(selectRestorable([])).toEqual({ state: 'none', skipped: [] });
    const selection = selectRestorable([{ state: 'not-found', checkpointId: 9 }]);
    expect(selection.state).toBe('none');
    expect(selection.skipped).toEqual([
      { checkpointId: 9, state: 'not-found', problems: ['checkpoint 9: no committed metadata'] },
    ]);
  });
});
