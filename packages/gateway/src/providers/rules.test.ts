import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitMarketplaceTarget } from '../marketplace/paths.ts';
import { MAX_PRICE_ATOMIC, normalizeEndpointPath, parsePrice, SLUG_PATTERN } from './rules.ts';

const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/).filter((s) => s !== '.' && s !== '..');

describe('endpoint paths', () => {
  it('every path a provider can register is routable, unchanged, on /p/:slug/*', () => {
    const slug = fc.stringMatching(new RegExp(SLUG_PATTERN));
    fc.assert(
      fc.property(slug, fc.array(segment, { minLength: 1, maxLength: 6 }), (s, segments) => {
        const path = normalizeEndpointPath(segments.join('/'));
        const routed = splitMarketplaceTarget(`/p/${s}/${path}?q=1`);
        expect(routed).toMatchObject({ ok: true, slug: s, path, query: 'q=1' });
      }),
    );
  });

  it('drops one leading slash and nothing else', () => {
    expect(normalizeEndpointPath('/v1/items')).toBe('v1/items');
    expect(() => normalizeEndpointPath('//v1/items')).toThrow();
  });
});

describe('prices', () => {
  it('parses decimal USDC into atomic units, up to the maximum', () => {
    expect(parsePrice('0.01')).toBe(10_000n);
    expect(parsePrice('0')).toBe(0n);
    expect(parsePrice('1000')).toBe(MAX_PRICE_ATOMIC);
    expect(() => parsePrice('1000.000001')).toThrow();
  });
});
