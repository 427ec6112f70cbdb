/** The architecture checker on synthetic graphs: it must find what it is there to find. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkArchitecture,
  type ForbiddenArrow,
  findCycles,
  type ImportGraph,
  readImportGraph,
  resolveSpecifier,
} from './import-graph.js';

const graphOf = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

describe('findCycles', () => {
  it('finds nothing in a DAG', () => {
    expect(findCycles(graphOf({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([]);
  });

  it('finds a two-file cycle, a longer one and a self-import, each once', () => {
    const g = graphOf({ a: ['b'], b: ['a', 'c'], c: ['d'], d: ['e'], e: ['c'], f: ['f'], g: ['a'] });
    expect(findCycles(g)).toEqual([['a', 'b'], ['c', 'd', 'e'], ['f']]);
  });

  it('ignores edges to files outside the graph', () => {
    expect(findCycles(graphOf({ a: ['x'], b: ['a'] }))).toEqual([]);
  });
});

describe('checkArchitecture', () => {
  const rules: ForbiddenArrow[] = [
    { from: 'src/state/', to: 'src/coordinator/', why: 'state below coordinator' },
    { from: 'src/util/', to: 'src/', except: 'src/util/', why: 'util imports nothing' },
  ];

  it('passes a clean graph', () => {
    const g = graphOf({
      'src/coordinator/c.ts': ['src/state/s.ts'],
      'src/state/s.ts': ['src/util/u.ts'],
      'src/util/u.ts': ['src/util/v.ts'],
      'src/util/v.ts': [],
    });
    expect(checkArchitecture(g, [], rules)).toEqual([]);
  });

  it('reports a new cycle, and lets a listed one (or part of it) stay', () => {
    const g = graphOf({ 'src/a.ts': ['src/b.ts'], 'src/b.ts': ['src/a.ts'] });
    expect(checkArchitecture(g, [], rules)).toEqual([{ kind: 'cycle', files: ['src/a.ts', 'src/b.ts'] }]);
    expect(checkArchitecture(g, [['src/a.ts', 'src/b.ts', 'src/c.ts']], rules)).toEqual([]);
  });

  it('reports a listed cycle that grew, and two listed cycles that joined', () => {
    const grown = graphOf({ 'src/a.ts': ['src/b.ts'], 'src/b.ts': ['src/c.ts'], 'src/c.ts': ['src/a.ts'] });
    expect(checkArchitecture(grown, [['src/a.ts', 'src/b.ts']], rules)).toEqual([
      { kind: 'cycle', files: ['src/a.ts', 'src/b.ts', 'src/c.ts'] },
    ]);
    const joined = graphOf({
      'src/a.ts': ['src/b.ts'],
      'src/b.ts': ['src/a.ts', 'src/c.ts'],
      'src/c.ts': ['src/d.ts'],
      'src/d.ts': ['src/c.ts', 'src/a.ts'],
    });
    const listed = [
      ['src/a.ts', 'src/b.ts'],
      ['src/c.ts', 'src/d.ts'],
    ];
    expect(checkArchitecture(joined, listed, rules)).toEqual([
      { kind: 'cycle', files: ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts'] },
    ]);
  });

  it('reports each import along a forbidden arrow, and honours the exception', () => {
    const g = graphOf({
      'src/state/s.ts': ['src/coordinator/c.ts'],
      'src/coordinator/c.ts': [],
      'src/util/u.ts': ['src/errors.ts', 'src/util/v.ts'],
      'src/util/v.ts': [],
      'src/errors.ts': [],
    });
    expect(checkArchitecture(g, [], rules)).toEqual([
      { kind: 'arrow', from: 'src/state/s.ts', to: 'src/coordinator/c.ts', why: 'state below coordinator' },
      { kind: 'arrow', from: 'src/util/u.ts', to: 'src/errors.ts', why: 'util imports nothing' },
    ]);
  });
});

describe('readImportGraph', () => {
  it('resolves relative specifiers to source files and skips packages', () => {
    expect(resolveSpecifier('src/a/b.ts', './x.js')).toBe('src/a/x.ts');
    expect(resolveSpecifier('src/a/b.ts', '../c/y.js')).toBe('src/c/y.ts');
    expect(resolveSpecifier('src/a/b.ts', '../require.cjs')).toBe('src/require.cts');
    expect(resolveSpecifier('src/a/b.ts', 'node:fs')).toBeUndefined();
    expect(resolveSpecifier('src/a/b.ts', 'msgpackr')).toBeUndefined();
  });

  it('reads static, type-only, re-export and dynamic imports from files, and the checker fails on them', () => {
    const root = mkdtempSync(join(tmpdir(), 'weir-import-graph-'));
    try {
      mkdirSync(join(root, 'src/state'), { recursive: true });
      mkdirSync(join(root, 'src/coordinator'), { recursive: true });
      writeFileSync(join(root, 'src/state/s.ts'), "import type { C } from '../coordinator/c.js';\n");
      writeFileSync(
        join(root, 'src/coordinator/c.ts'),
        "import { readFileSync } from 'node:fs';\nexport { s } from '../state/s.js';\nexport type C = 1;\nconst later = () => import('./d.js');\n",
      );
      writeFileSync(join(root, 'src/coordinator/d.ts'), 'export const d = 1;\n');
      writeFileSync(join(root, 'src/coordinator/types.d.ts'), "import '../state/s.js';\n");
      const g = readImportGraph(root, 'src');
      expect([...g.keys()].sort()).toEqual([
        'src/coordinator/c.ts',
        'src/coordinator/d.ts',
        'src/state/s.ts',
      ]);
      expect(g.get('src/coordinator/c.ts')).toEqual(['src/coordinator/d.ts', 'src/state/s.ts']);
      const rules: ForbiddenArrow[] = [{ from: 'src/state/', to: 'src/coordinator/', why: 'layering' }];
      expect(checkArchitecture(g, [], rules)).toEqual([
        { kind: 'cycle', files: ['src/coordinator/c.ts', 'src/state/s.ts'] },
        { kind: 'arrow', from: 'src/state/s.ts', to: 'src/coordinator/c.ts', why: 'layering' },
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
