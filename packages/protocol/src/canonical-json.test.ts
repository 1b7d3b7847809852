import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.ts';

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units and drops whitespace', () => {
    // Sorting example from RFC 8785 §3.2.3.
    const value = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    // Read the keys back in text order (Object.keys would hoist the integer-like "1").
    const keys = [...canonicalJson(value).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((m) =>
      JSON.parse(`"${m[1]}"`),
    );
    expect(keys).toEqual(['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
  });

  it('serialises nested values deterministically whatever the insertion order', () => {
    expect(canonicalJson({ b: [3, { y: 1, x: null }], a: true })).toBe('{"a":true,"b":[3,{"x":null,"y":1}]}');
    expect(canonicalJson({ a: true, b: [3, { x: null, y: 1 }] })).toBe('{"a":true,"b":[3,{"x":null,"y":1}]}');
  });

  it('escapes strings as ECMAScript JSON does', () => {
    expect(canonicalJson('\u2028"\n\u001f')).toBe('"\u2028\\"\\n\\u001f"');
  });

  it('refuses non-finite numbers', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
  });
});
