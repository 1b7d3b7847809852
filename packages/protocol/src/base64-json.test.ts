import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64Json, isStandardBase64, isUrlSafeBase64 } from './base64-json.ts';

/** The definitions the checks implement, as regular expressions (what the code used before). */
const STANDARD = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const URL_SAFE = /^[A-Za-z0-9_-]*$/;

const text = fc
  .array(fc.constantFrom(...'AZaz09+/-_=. é\n'.split(''), 'Q', 'w'), { maxLength: 14 })
  .map((cs) => cs.join(''));

describe('strict base64', () => {
  it('takes as standard base64 exactly what the canonical pattern allows', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(isStandardBase64(t)).toBe(STANDARD.test(t));
        expect(isUrlSafeBase64(t)).toBe(URL_SAFE.test(t) && t.length % 4 !== 1);
      }),
      { numRuns: 5000 },
    );
    for (const t of [
      '',
      '=',
      '==',
      '====',
      'A===',
      'AB==',
      'ABC=',
      'AB=C',
      'ABCD',
      'ABCDE',
      'AB-_',
      'AB+/',
    ]) {
      expect([t, isStandardBase64(t), isUrlSafeBase64(t)]).toEqual([
        t,
        STANDARD.test(t),
        URL_SAFE.test(t) && t.length % 4 !== 1,
      ]);
    }
  });

  it('refuses keys that touch prototypes, however the JSON spells them', () => {
    for (const json of [
      '{"__proto__":{"x":1}}',
      '{"a":{"constructor":{"prototype":1}}}',
      '{"\\u005f_proto__":{"x":1}}',
      '{"a":[{"prot\\u006ftype":1}]}',
    ]) {
      const header = Buffer.from(json).toString('base64');
      expect(() => decodeBase64Json(header, 1024, 'invalid_payment_header')).toThrow(/forbidden key/);
    }
    expect(
      decodeBase64Json(Buffer.from('{"a":"\\u00e9"}').toString('base64'), 1024, 'invalid_payment_header'),
    ).toEqual({
      a: 'é',
    });
  });
});
