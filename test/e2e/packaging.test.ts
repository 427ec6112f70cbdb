// The package as users consume it: `require('weir')` and `import('weir')` give the same module on
// Nodes that can require() ES modules (20.19+, 22.12+, 24; the suite runs on 20 and 24), and a
// clear error where require(esm) is unavailable (forced here with --no-experimental-require-module,
// which turns it off on those same Nodes).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function node(args: string[]) {
  // cwd = the package root: 'weir' resolves to this package through its own `exports`.
  return spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
}

describe('require("weir")', () => {
  it('returns the same module instance as import("weir")', () => {
    const r = node([
      '-e',
      "const w = require('weir'); import('weir').then((m) => console.log(JSON.stringify({ same: m.runJob === w.runJob && m.defineJob === w.defineJob, runJob: typeof w.runJob })))",
    ]);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ same: true, runJob: 'function' });
  });

  it('fails with a clear error where require() of ES modules is off', () => {
    const r = node(['--no-experimental-require-module', '-e', "require('weir')"]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("require('weir') needs require() of ES modules: Node 20.19+, 22.12+ or 24");
    expect(r.stderr).toContain("await import('weir')");
    expect(r.stderr).toContain('ERR_WEIR_REQUIRE_ESM');
  });
});

describe('package.json', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

  it('makes tsx an optional peer dependency, not a dependency', () => {
    expect(pkg.dependencies.tsx).toBeUndefined();
    expect(pkg.peerDependencies.tsx).toBeDefined();
    expect(pkg.peerDependenciesMeta.tsx.optional).toBe(true);
  });

  it('ships LICENSE and no source map without its sources', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    const files: string[] = JSON.parse(r.stdout)[0].files.map((f: { path: string }) => f.path);
    expect(files).toContain('LICENSE');
    const maps = files.filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(0);
    for (const m of maps) {
      const map = JSON.parse(readFileSync(new URL(`../../${m}`, import.meta.url), 'utf8'));
      // Each map carries its sources (tsconfig.build.json `inlineSources`), so it works without src/.
      expect(map.sourcesContent?.length, m).toBe(map.sources.length);
    }
  });
});
