import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonString } from './json-string.ts';

describe('jsonString', () => {
  it('writes what JSON.stringify writes for every kind of character', () => {
    const samples = [
      '',
      'GET',
      '/p/demo/weather?city=Oslo&days=3',
      '2026-11-29T14:00:00.123Z',
      'a"b',
      'a\\b',
      'tab\there',
      '\u0000\u001f\u007f',
      'é✓ü',
      '\u2028\u2029',
      '😀',
      '\ud83d',
      'x\ude00y',
      '\ude00\ud83d',
      'x'.repeat(96),
      `${'x'.repeat(96)}"`,
      `${'x'.repeat(97)}`,
    ];
    for (const s of samples) expect(jsonString(s)).toBe(JSON.stringify(s));
  });

  it('agrees with JSON.stringify on random strings of any code units', () => {
    // Code units drawn often from those JSON escapes and those next to them, else from all of UTF-16.
    const unit = fc.oneof(
      fc.constantFrom(
        '"',
        '\\',
        '\u0000',
        '\u001f',
        ' ',
        '\u007f',
        '\ud7ff',
        '\ud800',
        '\udbff',
        '\udc00',
        '\udfff',
        '\ue000',
        '\u2028',
        'a',
      ),
      fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 120 }), (s) => jsonString(s) === JSON.stringify(s)),
      { numRuns: 5000 },
    );
  });
});
