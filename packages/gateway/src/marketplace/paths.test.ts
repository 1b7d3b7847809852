import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PathCheck, splitMarketplaceTarget } from './paths.ts';

describe('splitMarketplaceTarget', () => {
  it('splits slug, path and query without decoding anything', () => {
    expect(splitMarketplaceTarget('/p/weather/v1/today?city=Oslo&x=%20y')).toEqual({
      ok: true,
      slug: 'weather',
      path: 'v1/today',
      query: 'city=Oslo&x=%20y',
      pathWithQuery: '/p/weather/v1/today?city=Oslo&x=%20y',
    });
    expect(splitMarketplaceTarget('/p/weather')).toMatchObject({ ok: true, path: '', query: '' });
  });

  it.each([
    ['/p/weather/../admin', 'dot_segment'],
    ['/p/weather/v1/./x', 'dot_segment'],
    ['/p/weather/v1/%2e%2e/x', 'encoded_separator'],
    ['/p/weather/v1%2fadmin', 'encoded_separator'],
    ['/p/weather/v1%5Cadmin', 'encoded_separator'],
    ['/p/weather/v1//admin', 'empty_segment'],
    ['/p/weather//etc/passwd', 'empty_segment'],
    ['/p/weather/http:/evil.example', 'absolute_url'],
    ['/p/weather/a\\b', 'control_or_backslash'],
    ['/p/Weather/x', 'invalid_slug'],
    ['/p/we_ather/x', 'invalid_slug'],
    ['/p/weather/v1/a"b', 'invalid_character'],
  ])('rejects %s (%s)', (url, reason) => {
    expect(splitMarketplaceTarget(url)).toEqual({ ok: false, reason });
  });
});

/** The rules as regular expressions, as this function was first written: the reference. */
function reference(rawUrl: string): PathCheck {
  const q = rawUrl.indexOf('?');
  const pathPart = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const query = q < 0 ? '' : rawUrl.slice(q + 1);
  if (!pathPart.startsWith('/p/')) return { ok: false, reason: 'not_marketplace' };
  const rest = pathPart.slice(3);
  const slash = rest.indexOf('/');
  const slug = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash + 1);
  if (!/^[a-z0-9](?:[a-z0-9-]{1,46}[a-z0-9])$/.test(slug)) return { ok: false, reason: 'invalid_slug' };
  if (/[\u0000-\u001f\u007f\\]/.test(rawUrl)) return { ok: false, reason: 'control_or_backslash' };
  if (/%(2f|5c|2e|00)/i.test(path)) return { ok: false, reason: 'encoded_separator' };
  if (path !== '') {
    for (const seg of path.split('/')) {
      if (seg === '') return { ok: false, reason: 'empty_segment' };
      if (seg === '.' || seg === '..') return { ok: false, reason: 'dot_segment' };
      if (!/^[A-Za-z0-9._~!$&'()*+,;=:@%-]+$/.test(seg)) return { ok: false, reason: 'invalid_character' };
    }
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) return { ok: false, reason: 'absolute_url' };
  return { ok: true, slug, path, query, pathWithQuery: rawUrl };
}

describe('splitMarketplaceTarget against the rules written as regular expressions', () => {
  // Characters that reach every rule: separators, percent escapes in both cases, dots,
  // colons, controls, DEL, backslash, a quote, the printable characters outside pchar, every
  // digit, non-ASCII (incl. a lone surrogate) and characters whose low byte or low bits look
  // like an escape's (0x10 | 0x20 = '0'; U+0146's low byte is 'F').
  const chars = [
    ...'/?%.:pabzAFZfFcCeE0123456789-_~!$&\'()*+,;=@" #<>[]^`{|}',
    '\u0000',
    '\u0010',
    '\u001f',
    '\u007f',
    '\\',
    '\u00e9',
    '\u017f',
    '\u212a',
    '\ud800',
    // Low byte of an escape's letter or digit (0x46 F, 0x43 C, 0x45 E, 0x30 0), high byte set.
    '\u0146',
    '\u0143',
    '\u0145',
    '\u0130',
  ];
  const piece = fc.oneof(
    fc.constantFrom(...chars),
    fc.constantFrom(
      '/p/',
      'weather',
      'ab',
      '..',
      '.',
      '%2f',
      '%2E',
      '%5C',
      '%00',
      '%0',
      'http:',
      'a+b.c-d:',
      '//',
    ),
  );
  const target = fc.tuple(
    fc.constantFrom('/p/', '/p/weather/', '/p/ab/', '', '/'),
    fc.array(piece, { maxLength: 14 }),
  );

  it('gives the same answer for any target', () => {
    fc.assert(
      fc.property(target, ([prefix, pieces]) => {
        const url = prefix + pieces.join('');
        expect(splitMarketplaceTarget(url)).toEqual(reference(url));
      }),
      { numRuns: 20_000 },
    );
  });

  it.each([
    '/p/ab/%2',
    '/p/ab/x%',
    '/p/ab/%0\u0010',
    '/p/ab/%2\u0006',
    '/p/ab/%5#',
    '/p/ab/%2F%2e',
    '/p/ab/a:b',
    '/p/ab/1a:b',
    '/p/ab/a.b+c-d:x',
    '/p/ab/a_b:c',
    '/p/ab?x=/../',
    '/p/ab/x?y=%2f',
    '/p/ab/x?y=\\',
    '/p/ab',
    '/p/ab/',
    '/p/',
    '/p/?x',
    '/p',
    '/p?/ab',
  ])('gives the same answer for %j', (url) => {
    expect(splitMarketplaceTarget(url)).toEqual(reference(url));
  });
});
