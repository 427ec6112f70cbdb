import { describe, expect, it } from 'vitest';
import { checkpointsToDiscard } from '../../../src/cluster/shared-dir-retention.js';

describe('checkpointsToDiscard (checkpointing.retain in a cluster job’s shared directory)', () => {
  it('keeps the newest `retain` up to the checkpoint just written, and nothing newer is touched', () => {
    expect(checkpointsToDiscard([1, 2, 3, 4, 5], 5, 3)).toEqual([1, 2]);
    expect(checkpointsToDiscard([4, 5], 5, 3)).toEqual([]);
    expect(checkpointsToDiscard([1, 2, 3], 3, 1)).toEqual([1, 2]);
    // An earlier job's checkpoints in the same directory count like this job's (as for one process).
    expect(checkpointsToDiscard([2, 7, 9, 10], 10, 2)).toEqual([2, 7]);
    // Ids above the one written (none in practice: ids start past the directory's) are kept.
    expect(checkpointsToDiscard([1, 2, 3, 8], 3, 1)).toEqual([1, 2]);
    expect(checkpointsToDiscard([], 3, 3)).toEqual([]);
  });
});
