// `.ts` job modules on every supported Node: natively type-stripped where the runtime can (no tsx
// in any thread), through tsx on Node 20, and through tsx as the fallback for TypeScript that
// strip-only mode refuses. The whole suite runs on Node 20 and 24 in CI (.ci/run), so both
// branches of each expectation are exercised.
import { describe, expect, it } from 'vitest';
import { runJob } from '../../dist/index.js';
import { fixture } from './helpers.js';

const stripsTypes =
  (process.features as { typescript?: string | false }).typescript !== undefined &&
  (process.features as { typescript?: string | false }).typescript !== false;

describe('.ts job modules', () => {
  it(`load ${stripsTypes ? 'without tsx (Node strips the types)' : 'through tsx (Node 20 cannot strip types)'} in every thread`, async () => {
    const result = await runJob(fixture('typescript-loader-probe.ts'), { parallelism: 2 });
    const loaders = result.sinks.loaders as { n: number; tsx: boolean }[];
    expect(loaders.map((r) => r.n).sort()).toEqual([0, 1]);
    expect(loaders.every((r) => r.tsx === !stripsTypes)).toBe(true);
  });

  it('that strip-only mode refuses (an enum) still load, through tsx', async () => {
    const result = await runJob(fixture('typescript-enum.ts'), { parallelism: 1 });
    expect(result.sinks.parities).toEqual([
      { n: 0, parity: 'even' },
      { n: 1, parity: 'odd' },
      { n: 2, parity: 'even' },
      { n: 3, parity: 'odd' },
    ]);
  });
});
