import { describe, expect, it } from 'vitest';
import { parseRunArgs } from '../../../src/cli/main.js';

describe('weir run restore flags', () => {
  it('--allow-non-restored-state and --allow-fallback-past-damaged set the job options; --restore enables checkpointing', () => {
    const { options } = parseRunArgs([
      'job.mjs',
      '--restore',
      '/savepoints/1',
      '--allow-non-restored-state',
      '--allow-fallback-past-damaged',
    ]);
    expect(options).toMatchObject({
      restoreFrom: '/savepoints/1',
      allowNonRestoredState: true,
      allowFallbackPastDamaged: true,
      checkpointing: { interval: 1000 },
    });
    expect(parseRunArgs(['job.mjs']).options).toMatchObject({
      allowNonRestoredState: undefined,
      allowFallbackPastDamaged: undefined,
      checkpointing: undefined,
    });
  });
});
