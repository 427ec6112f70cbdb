import { describe, expect, it } from 'vitest';
import {
  checkRestoreCompatibility,
  migrateLegacyUids,
} from '../../../src/coordinator/restore-compatibility.js';
import { classifyCheckpointDir } from '../../../src/coordinator/restore-planning.js';
import type { CheckpointMetadata } from '../../../src/state/storage/checkpoint-metadata.js';
import type { ChunkHandle } from '../../../src/state/storage/chunk-handle.js';
import { planOf } from '../graph/build-graph.js';
import { fakeSink, fakeSource } from '../graph/fake-connectors.js';

const handle = (chunkId: string, extra: Partial<ChunkHandle> = {}): ChunkHandle => ({
  chunkId,
  checkpointId: 3,
  name: 'operator-state',
  size: 1,
  checksum: 'c',
  ...extra,
});

/** source → [filter] → keyBy → process('counts', uid?) → sink */
const plan = (opts: { filter?: boolean; countsUid?: string; maxParallelism?: number } = {}) =>
  planOf(
    (env) => {
      let s = env.fromSource(fakeSource<number>(), 'numbers');
      if (opts.filter) s = s.filter((x) => x > 0);
      const counts = s
        .keyBy((x) => x)
        .process((x: number, _c, o) => o.collect(x))
        .name('counts');
      if (opts.countsUid) counts.uid(opts.countsUid);
      counts.sinkTo(fakeSink());
    },
    { parallelism: 2, maxParallelism: opts.maxParallelism ?? 128 },
  );

function metadata(uids: Record<string, ChunkHandle[]>, job: Partial<CheckpointMetadata['job']> = {}) {
  return {
    checkpointId: 3,
    timestamp: 0,
    incremental: false,
    job: {
      maxParallelism: 128,
      defaultUidScheme: 2,
      operators: Object.keys(uids).map((operatorUid) => ({
        operatorUid,
        parallelism: 2,
        name: `op ${operatorUid}`,
      })),
      ...job,
    },
    subtasks: Object.entries(uids).map(([operatorUid, chunks]) => ({ operatorUid, subtaskIndex: 0, chunks })),
  } satisfies CheckpointMetadata;
}

const keyed = [handle('k', { name: 'keyed', keyGroup: 5 })];

describe('checkRestoreCompatibility', () => {
  it('state of every operator has a home: compatible, nothing dropped', () => {
    const m = metadata({ 'source:numbers:0': [handle('s')], 'keyed-process:counts:0': keyed });
    expect(
      checkRestoreCompatibility({ plan: plan({ filter: true }), metadata: m, allowNonRestoredState: false }),
    ).toEqual({
      kind: 'compatible',
      nonRestored: [],
    });
  });

  it('state without a home is refused, naming uid and name; with allowNonRestoredState it is listed as dropped', () => {
    const m = metadata({ 'source:numbers:0': [handle('s')], 'keyed-process:gone:0': keyed });
    const orphan = { operatorUid: 'keyed-process:gone:0', name: 'op keyed-process:gone:0', kind: 'operator' };
    expect(checkRestoreCompatibility({ plan: plan(), metadata: m, allowNonRestoredState: false })).toEqual({
      kind: 'non-restored-state',
      operators: [orphan],
    });
    expect(checkRestoreCompatibility({ plan: plan(), metadata: m, allowNonRestoredState: true })).toEqual({
      kind: 'compatible',
      nonRestored: [orphan],
    });
  });

  it('in-flight records whose operator no longer heads a task have no home', () => {
    // 'numbers' heads its task; 'counts' is chained after nothing here, so it heads one too.
    const channel = [handle('c', { name: 'channel-state' })];
    const ok = metadata({ 'keyed-process:counts:0': channel });
    expect(checkRestoreCompatibility({ plan: plan(), metadata: ok, allowNonRestoredState: false }).kind).toBe(
      'compatible',
    );
    const sink = metadata({ 'sink:sink: out:0': channel }); // chained behind counts: not a head
    expect(
      checkRestoreCompatibility({ plan: plan(), metadata: sink, allowNonRestoredState: false }),
    ).toMatchObject({
      kind: 'non-restored-state',
      operators: [{ operatorUid: 'sink:sink: out:0', kind: 'channel' }],
    });
  });

  it('another maxParallelism is refused when the checkpoint holds keyed state, naming both values', () => {
    const m = metadata({ 'keyed-process:counts:0': keyed });
    expect(
      checkRestoreCompatibility({
        plan: plan({ maxParallelism: 64 }),
        metadata: m,
        allowNonRestoredState: true,
      }),
    ).toEqual({ kind: 'max-parallelism-mismatch', checkpointMaxParallelism: 128, jobMaxParallelism: 64 });
    const noKeyed = metadata({ 'source:numbers:0': [handle('s')] });
    expect(
      checkRestoreCompatibility({
        plan: plan({ maxParallelism: 64 }),
        metadata: noKeyed,
        allowNonRestoredState: false,
      }).kind,
    ).toBe('compatible');
  });
});

describe('migrateLegacyUids', () => {
  it('maps positional uids of a checkpoint written before scheme 2 to the current ones, like the old runtime', () => {
    // The old runtime named them source-0, keyed-process-1, sink-2 (no filter in that job).
    const legacy = metadata(
      { 'source-0': [handle('s')], 'keyed-process-1': keyed, 'unknown-9': [handle('u')] },
      { defaultUidScheme: undefined },
    );
    const migrated = migrateLegacyUids(plan(), legacy);
    expect(migrated.subtasks.map((s) => s.operatorUid)).toEqual([
      'source:numbers:0',
      'keyed-process:counts:0',
      'unknown-9',
    ]);
    expect(migrated.job.defaultUidScheme).toBe(2);
    // Explicit uids matched as they are.
    const explicit = metadata({ mine: keyed }, { defaultUidScheme: undefined });
    expect(migrateLegacyUids(plan({ countsUid: 'mine' }), explicit).subtasks[0].operatorUid).toBe('mine');
    // Scheme-2 metadata is left alone.
    const current = metadata({ 'source-0': [handle('s')] });
    expect(migrateLegacyUids(plan(), current)).toBe(current);
  });
});

describe('classifyCheckpointDir', () => {
  it('missing or empty: a first start; data.mdb: storage; lost data or foreign content: refused', () => {
    expect(classifyCheckpointDir(null)).toEqual({ kind: 'missing' });
    expect(classifyCheckpointDir([])).toEqual({ kind: 'empty' });
    expect(classifyCheckpointDir(['lock.mdb', 'data.mdb'])).toEqual({ kind: 'storage' });
    expect(classifyCheckpointDir(['lock.mdb'])).toMatchObject({ kind: 'refuse', reason: /no data.mdb/ });
    expect(classifyCheckpointDir(['package.json', 'src'])).toMatchObject({
      kind: 'refuse',
      reason: /not empty \(package.json, src\).*mistyped/,
    });
  });
});
