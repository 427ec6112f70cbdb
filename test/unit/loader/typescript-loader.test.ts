import { describe, expect, it } from 'vitest';
import { chooseModuleLoader, needsTsxAfterNativeFailure } from '../../../src/loader/typescript-loader.js';

const node20 = { typescript: undefined };
const node24 = { typescript: 'strip' };

describe('chooseModuleLoader', () => {
  it('imports JavaScript as is on every runtime', () => {
    for (const rt of [node20, node24]) {
      expect(chooseModuleLoader('/jobs/a.js', rt)).toBe('plain');
      expect(chooseModuleLoader('/jobs/a.mjs', rt)).toBe('plain');
    }
  });

  it('strips types natively where the runtime can, tsx otherwise', () => {
    for (const ext of ['ts', 'mts', 'cts']) {
      expect(chooseModuleLoader(`/jobs/a.${ext}`, node24)).toBe('native');
      expect(chooseModuleLoader(`/jobs/a.${ext}`, { typescript: 'transform' })).toBe('native');
      expect(chooseModuleLoader(`/jobs/a.${ext}`, node20)).toBe('tsx');
      expect(chooseModuleLoader(`/jobs/a.${ext}`, { typescript: false })).toBe('tsx');
    }
  });

  it('sends .tsx to tsx even where Node strips types (Node does not handle JSX)', () => {
    expect(chooseModuleLoader('/jobs/a.tsx', node24)).toBe('tsx');
  });
});

describe('needsTsxAfterNativeFailure', () => {
  const coded = (code: string, message = 'x') => Object.assign(new SyntaxError(message), { code });

  it('retries through tsx what strip-only TypeScript refuses', () => {
    expect(needsTsxAfterNativeFailure(coded('ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX'))).toBe(true);
    expect(needsTsxAfterNativeFailure(Object.assign(new Error('x'), { code: 'ERR_MODULE_NOT_FOUND' }))).toBe(
      true,
    );
    expect(
      needsTsxAfterNativeFailure(
        new SyntaxError("The requested module 'weir' does not provide an export named 'JobResult'"),
      ),
    ).toBe(true);
  });

  it('does not retry a real syntax error or an error thrown by the module itself', () => {
    expect(needsTsxAfterNativeFailure(coded('ERR_INVALID_TYPESCRIPT_SYNTAX'))).toBe(false);
    expect(needsTsxAfterNativeFailure(new SyntaxError("Unexpected token ';'"))).toBe(false);
    expect(needsTsxAfterNativeFailure(new Error('boom at module top level'))).toBe(false);
    expect(needsTsxAfterNativeFailure('not an error')).toBe(false);
  });
});
