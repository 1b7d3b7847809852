import { describe, expect, it } from 'vitest';
import { splitMarketplaceTarget } from './paths.ts';

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
