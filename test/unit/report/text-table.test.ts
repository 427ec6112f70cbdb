import { describe, expect, it } from 'vitest';
import { formatTextTable } from '../../../src/report/index.js';

describe('formatTextTable', () => {
  it('aligns the first column left and the others right', () => {
    const text = formatTextTable(
      ['', 'a', 'bb'],
      [
        ['x', '1', '22'],
        ['long label', '333', '4'],
      ],
    );
    expect(text.split('\n')).toEqual([
      '              a  bb',
      '----------  ---  --',
      'x             1  22',
      'long label  333   4',
    ]);
  });
});
