import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatAmount, parseAmount, parseAtomic } from './amounts.ts';
import { ProtocolError } from './errors.ts';

describe('amounts', () => {
  it('parses decimal strings into atomic units', () => {
    expect(parseAmount('0.01', 6)).toBe(10_000n);
    expect(parseAmount('1', 6)).toBe(1_000_000n);
    expect(parseAmount('0.000001', 6)).toBe(1n);
    expect(parseAmount('123.45', 6)).toBe(123_450_000n);
    expect(parseAmount('0', 6)).toBe(0n);
  });

  it.each([
    '1e3',
    '-1',
    '+1',
    '0.0000001',
    '01',
    '1.',
    '.5',
    ' 1',
    '1 ',
    '0x10',
    '1,5',
    '',
    'NaN',
    'Infinity',
    '１',
    '9999999999999999',
  ])('rejects the malformed amount %j', (s) => {
    expect(() => parseAmount(s, 6)).toThrow(ProtocolError);
  });

  it('formats atomic units with trailing zeros trimmed', () => {
    expect(formatAmount(10_000n, 6)).toBe('0.01');
    expect(formatAmount(1_000_000n, 6)).toBe('1');
    expect(formatAmount(1n, 6)).toBe('0.000001');
    expect(formatAmount(0n, 6)).toBe('0');
    expect(() => formatAmount(-1n, 6)).toThrow(ProtocolError);
  });

  it('round-trips every atomic amount through the wire form', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), (n) => {
        expect(parseAmount(formatAmount(n, 6), 6)).toBe(n);
      }),
    );
  });

  it('parses only canonical atomic integer strings', () => {
    expect(parseAtomic('10000')).toBe(10_000n);
    for (const bad of ['01', '-1', '1.0', '', 'abc', '1e5'])
      expect(() => parseAtomic(bad)).toThrow(ProtocolError);
  });
});
