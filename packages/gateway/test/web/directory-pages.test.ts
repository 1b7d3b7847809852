/**
 * The web directory over real HTTP (no browser): provider text is escaped everywhere it
 * is shown, the pages list exactly what /v1/directory/apis lists, page by page, and bad
 * input gets a 4xx page. The browser suite (directory.browser.test.ts) covers the rest.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../src/http/web-html.ts';
import { curlSnippet, shellQuote } from '../../src/http/web-snippets.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { publishListed } from './directory-fixture.ts';

const XSS = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "'><svg onload=alert(1)>",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the payload is meant literally
  '`${alert(1)}`',
  '</title><script>alert(1)</script>',
];

function unescapeHtml(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' };
  return text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_m, name: string) => named[name]!);
}

/** The raw markup the payloads would inject if anything were not escaped. */
const INJECTED = /<script>alert|<img src=x|<svg onload|<\/title><script/;

describe('the HTML template', () => {
  it('escapes every interpolated string, in text and in quoted attributes', () => {
    for (const payload of XSS) {
      const out = html`<p title="${payload}">${payload}</p>`.value;
      expect(out).not.toMatch(INJECTED);
      expect(out.startsWith('<p title="')).toBe(true);
      // Only the template's own quotes and angle brackets remain.
      expect(out.match(/[<>"]/g)).toEqual(['<', '"', '"', '>', '<', '>']);
    }
    expect(escapeHtml(`&<>"'\``)).toBe('&amp;&lt;&gt;&quot;&#39;&#96;');
  });

  it('nests templates and lists without escaping them twice, and drops null and false', () => {
    const items = ['a<b', 'c&d'].map((t) => html`<li>${t}</li>`);
    expect(html`<ul>${items}${null}${false}${undefined}</ul>`.value).toBe(
      '<ul><li>a&lt;b</li><li>c&amp;d</li></ul>',
    );
  });

  it('quotes URLs for the shell in the curl snippet', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(
      curlSnippet({ method: 'GET', url: "http://x/p/a/b'c", maxTotal: '1', chains: [], network: 'mainnet' }),
    ).toBe(`curl -i 'http://x/p/a/b'\\''c'`);
  });
});

describe('web directory pages', () => {
  let h: Harness;
  let hostileSlug: string;
  const bulk: string[] = [];

  beforeAll(async () => {
    h = await startHarness();
    hostileSlug = await publishListed(h, {
      slugPrefix: 'hostile',
      name: XSS.join(' '),
      description: XSS.join(' | '),
      category: 'security',
      endpoints: [{ method: 'GET', path: 'x', price: '0.01', description: XSS[0] }],
    });
    for (let i = 0; i < 23; i++) {
      bulk.push(
        await publishListed(h, {
          slugPrefix: `bulk${String(i).padStart(2, '0')}`,
          name: `Bulk API ${i}`,
          category: 'bulk',
          endpoints: [{ method: 'GET', path: 'v', price: '0.001' }],
        }),
      );
    }
  });
  afterAll(async () => {
    await h?.close();
  });

  const get = (path: string) => fetch(`${h.baseUrl}${path}`, { redirect: 'manual' });

  it("escapes a provider's name, description and endpoint text on the list and detail pages", async () => {
    for (const path of ['/?category=security', `/directory/${hostileSlug}`]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(body).not.toMatch(INJECTED);
      expect(body.match(/<script/g) ?? []).toHaveLength(path === '/?category=security' ? 0 : 1);
    }
  });

  it('escapes the search text it shows back', async () => {
    for (const payload of XSS) {
      const res = await get(`/?q=${encodeURIComponent(payload)}`);
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).not.toMatch(INJECTED);
      expect(body).toContain(`value="${escapeHtml(payload)}"`);
    }
  });

  it('lists page by page exactly what GET /v1/directory/apis lists', async () => {
    const seen: string[] = [];
    let path = '/?category=bulk';
    let cursor: string | null = null;
    for (let pageNo = 0; pageNo < 5; pageNo++) {
      const body = await (await get(path)).text();
      const slugs = [...body.matchAll(/<h3><a href="\/directory\/([a-z0-9-]+)">/g)].map((m) => m[1]!);
      const api = (await (
        await get(`/v1/directory/apis?category=bulk${cursor ? `&cursor=${cursor}` : ''}`)
      ).json()) as { apis: { slug: string }[]; nextCursor: string | null };
      expect(slugs).toEqual(api.apis.map((a) => a.slug));
      seen.push(...slugs);
      const next = /<a rel="next" href="([^"]+)">/.exec(body);
      expect(next?.[1]?.replaceAll('&amp;', '&') ?? null).toBe(
        api.nextCursor ? `/?category=bulk&cursor=${api.nextCursor}` : null,
      );
      if (!next) break;
      path = next[1]!.replaceAll('&amp;', '&');
      cursor = api.nextCursor;
    }
    expect(seen).toEqual([...bulk].sort());
  });

  it('answers bad search input with a 400 page and an unknown API with a 404 page', async () => {
    for (const path of [
      '/?category=Not%20A%20Category',
      '/?q=a&q=b',
      `/?q=${'x'.repeat(101)}`,
      '/?cursor=not-a-cursor',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(400);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    }
    for (const path of [
      '/directory/no-such-api',
      '/directory/%3Cscript%3E',
      `/directory/${h.project.slug}x`,
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain('<script>');
    }
    const redirect = await get('/directory');
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('/');
  });

  it('offers snippets that are valid JavaScript once unescaped', async () => {
    const slug = await publishListed(h, {
      slugPrefix: 'snippets',
      name: 'Snippets',
      category: 'snippets',
      x402Exact: true,
      endpoints: [
        { method: 'GET', path: 'a', price: '0.01' },
        { method: 'POST', path: 'b', price: '0.02' },
      ],
    });
    const body = await (await get(`/directory/${slug}`)).text();
    const codes = [...body.matchAll(/<code id="(endpoint-\d+-(?:payfetch|x402))">([^<]*)<\/code>/g)];
    expect(codes.map((m) => m[1])).toEqual([
      'endpoint-1-payfetch',
      'endpoint-1-x402',
      'endpoint-2-payfetch',
      'endpoint-2-x402',
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-snippet-'));
    try {
      for (const [, id, escaped] of codes) {
        const file = join(dir, `${id}.mjs`);
        writeFileSync(file, unescapeHtml(escaped!));
        // --check parses the module without running it: a syntax error exits non-zero.
        expect(spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' }).stderr, id).toBe('');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("shows on the detail page the price per chain that the endpoint's 402 asks", async () => {
    const body = await (await get(`/directory/${h.project.slug}`)).text();
    const challenge = await fetch(`${h.baseUrl}/p/${h.project.slug}/items`);
    expect(challenge.status).toBe(402);
    const { accepts } = (await challenge.json()) as { accepts: { chain: string; totalAmount: string }[] };
    const section = body.slice(body.indexOf('<code>/items</code>'));
    for (const a of accepts) {
      const row = new RegExp(
        `<tr data-chain="${a.chain}">\\s*<th scope="row">${a.chain}</th><td>[a-z]+</td><td class="total">([0-9.]+)</td>`,
      ).exec(section);
      expect(row?.[1], a.chain).toBe(a.totalAmount);
    }
    expect(accepts.map((a) => a.chain).sort()).toEqual(['solana', 'sui']);
  });
});
