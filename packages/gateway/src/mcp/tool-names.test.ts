import { describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME, slugOfTool, toolNames } from './tool-names.ts';

const names = (slug: string, eps: { method: string; path: string }[]) => [...toolNames(slug, eps).keys()];

describe('MCP tool names', () => {
  it('are <slug>__<method>_<path> with characters hosts refuse turned into _', () => {
    expect(names('weather', [{ method: 'GET', path: 'v1/forecast.json' }])).toEqual([
      'weather__get_v1_forecast_json',
    ]);
    expect(names('weather', [{ method: 'POST', path: '' }])).toEqual(['weather__post']);
    for (const n of names('a-b', [{ method: 'GET', path: "x/y~z!$&'()*+,;=:@%20" }])) {
      expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    }
  });

  it('stay unique when two paths sanitize alike, and never change when another endpoint is added', () => {
    const alone = names('shop', [{ method: 'GET', path: 'a/b' }]);
    const both = names('shop', [
      { method: 'GET', path: 'a/b' },
      { method: 'GET', path: 'a.b' },
    ]);
    expect(new Set(both).size).toBe(2);
    expect(both.every((n) => n.startsWith('shop__get_a_b_'))).toBe(true);
    // A clash renames both (hashes of method and path): stable whatever the order.
    expect(
      names('shop', [
        { method: 'GET', path: 'a.b' },
        { method: 'GET', path: 'a/b' },
      ]).sort(),
    ).toEqual([...both].sort());
    expect(alone).toEqual(['shop__get_a_b']);
  });

  it('fit in 64 characters, with a hash keeping long names apart', () => {
    const slug = 'a'.repeat(48);
    const long = names(slug, [
      { method: 'GET', path: `${'x'.repeat(40)}/one` },
      { method: 'GET', path: `${'x'.repeat(40)}/two` },
    ]);
    expect(long).toHaveLength(2);
    expect(new Set(long).size).toBe(2);
    for (const n of long) expect(n.length).toBeLessThanOrEqual(MAX_TOOL_NAME);
  });

  it('name their project (slugs never contain _)', () => {
    expect(slugOfTool('my-shop__get_items')).toBe('my-shop');
    expect(slugOfTool('chat')).toBeNull();
    expect(slugOfTool('__get_x')).toBeNull();
  });
});
