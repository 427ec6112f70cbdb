import { describe, expect, it } from 'vitest';
import { closestMatch, didYouMean, editDistance } from '../../../src/util/did-you-mean.js';

describe('editDistance', () => {
  it('counts inserts, deletes, substitutions and adjacent swaps as one edit each', () => {
    expect(editDistance('parallelism', 'parallelism')).toBe(0);
    expect(editDistance('paralelism', 'parallelism')).toBe(1); // delete
    expect(editDistance('parallelismm', 'parallelism')).toBe(1); // insert
    expect(editDistance('parallelizm', 'parallelism')).toBe(1); // substitute
    expect(editDistance('rnu', 'run')).toBe(1); // swap
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('closestMatch', () => {
  const flags = ['parallelism', 'max-parallelism', 'checkpoint-interval', 'checkpoint-dir', 'mode'];

  it('suggests the nearest candidate for a likely typo', () => {
    expect(closestMatch('paralelism', flags)).toBe('parallelism');
    expect(closestMatch('checkpoint-interal', flags)).toBe('checkpoint-interval');
    expect(closestMatch('checkpoint-dri', flags)).toBe('checkpoint-dir');
    expect(closestMatch('MODE', flags)).toBe('mode');
  });

  it('suggests nothing when no candidate is close (a guess is worse than none)', () => {
    expect(closestMatch('verbose', flags)).toBeUndefined();
    expect(closestMatch('x', flags)).toBeUndefined();
    expect(closestMatch('anything', [])).toBeUndefined();
  });

  it('formats the suggestion, or nothing', () => {
    expect(didYouMean('paralelism', flags, (c) => `--${c}`)).toBe(' (did you mean --parallelism?)');
    expect(didYouMean('zzz', flags)).toBe('');
  });
});
