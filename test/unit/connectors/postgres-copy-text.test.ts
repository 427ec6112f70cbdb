/** COPY text encoding of sinks.postgres's large commits (no database). */
import { describe, expect, it } from 'vitest';
import { copyField, copyText } from '../../../src/connectors/postgres-sink.js';

describe('postgres sink COPY text', () => {
  it('writes NULL as \\N and escapes backslash, newline, carriage return and tab', () => {
    expect(copyField(null)).toBe('\\N');
    expect(copyField(undefined)).toBe('\\N');
    expect(copyField('a\tb\nc\rd\\e')).toBe('a\\tb\\nc\\rd\\\\e');
    expect(copyField('\\N')).toBe('\\\\N'); // the text "\N", not NULL
    expect(copyField('plain')).toBe('plain');
  });
  it('converts values as the driver does for parameters', () => {
    expect(copyField(42)).toBe('42');
    expect(copyField(12345678901234567890n)).toBe('12345678901234567890');
    expect(copyField(true)).toBe('true');
    expect(copyField({ a: 'x\ty' })).toBe('{"a":"x\\\\ty"}');
    expect(copyField([1, null, 3])).toBe('{"1",NULL,"3"}');
    expect(copyField(Buffer.from([0, 255]))).toBe('\\\\x00ff');
  });
  it('joins fields with tabs and rows with newlines', () => {
    expect([
      ...copyText([
        [1, 'a'],
        [2, null],
      ]),
    ]).toEqual(['1\ta\n2\t\\N\n']);
  });
});
