import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  locateSyntaxError,
  parseEsbuildLocation,
  parseSyntaxErrorBanner,
} from '../../../src/loader/syntax-error-location.js';

describe('parseSyntaxErrorBanner', () => {
  it('reads the line from the header and the column from the caret (1-based)', () => {
    const stack =
      'file:///jobs/bad.ts:3\n  return g(;\n           ^\n\nSyntaxError: Expression expected\n    at x';
    expect(parseSyntaxErrorBanner(stack)).toEqual({ file: '/jobs/bad.ts', line: 3, column: 12 });
  });

  it('takes the last source line before the caret when the banner shows context lines', () => {
    const stack =
      'file:///jobs/bad.ts:3\nexport default function f(x: number) {\n  return g(;\n           ^\n}\n\nSyntaxError [ERR_INVALID_TYPESCRIPT_SYNTAX]: Expression expected';
    expect(parseSyntaxErrorBanner(stack)).toEqual({ file: '/jobs/bad.ts', line: 3, column: 12 });
  });

  it('reads `node --check` output (a plain path)', () => {
    const out = "/tmp/bad.mjs:2\nconst x = ;\n          ^\n\nSyntaxError: Unexpected token ';'\n";
    expect(parseSyntaxErrorBanner(out)).toEqual({ file: '/tmp/bad.mjs', line: 2, column: 11 });
  });

  it('finds nothing in an ordinary stack', () => {
    expect(
      parseSyntaxErrorBanner(
        "SyntaxError: Unexpected token ';'\n    at compileSourceTextModule (node:internal)",
      ),
    ).toBeUndefined();
  });
});

describe('parseEsbuildLocation', () => {
  it('reads tsx (esbuild) messages, whose column is 0-based', () => {
    expect(
      parseEsbuildLocation('Transform failed with 1 error:\n/jobs/bad.ts:3:11: ERROR: Unexpected ";"'),
    ).toEqual({
      file: '/jobs/bad.ts',
      line: 3,
      column: 12,
    });
    expect(parseEsbuildLocation('Unexpected token')).toBeUndefined();
  });
});

describe('locateSyntaxError', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('locates a syntax error in plain JS, which import() reports without a location', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-syntax-'));
    const file = path.join(dir, 'bad.mjs');
    writeFileSync(file, 'export default 1;\nconst x = ;\n');
    const url = pathToFileURL(file).href;
    // What Node's import() rejects with for this file: the message and no location (imported
    // here, vite's module runner would report it its own way).
    const error = new SyntaxError("Unexpected token ';'");
    expect(await locateSyntaxError(error, url)).toEqual({ file, line: 2, column: 11 });
  });

  it('says nothing for an error that is not a syntax error', async () => {
    expect(await locateSyntaxError(new Error('boom'), 'file:///x.mjs')).toBeUndefined();
  });
});
