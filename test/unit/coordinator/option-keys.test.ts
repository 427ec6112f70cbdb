import { describe, expect, it } from 'vitest';
import { checkKnownKeys } from '../../../src/coordinator/option-keys.js';
import { InvalidOptionError, UnknownOptionError } from '../../../src/errors.js';

describe('checkKnownKeys', () => {
  const table = { interval: true, mode: true } as const;
  it('accepts known keys and throws UnknownOptionError naming the path and the suggestion', () => {
    expect(() => checkKnownKeys({ interval: 1, mode: 'x' }, 'checkpointing', table)).not.toThrow();
    let error: unknown;
    try {
      checkKnownKeys({ interval: 1, intervall: 2 }, 'checkpointing', table);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnknownOptionError);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({
      option: 'checkpointing.intervall',
      suggestion: 'interval',
      known: ['interval', 'mode'],
      code: 'ERR_WEIR_INVALID_OPTION',
    });
    expect((error as Error).message).toMatch(
      /checkpointing\.intervall: unknown option; did you mean interval\?/,
    );
  });
});
