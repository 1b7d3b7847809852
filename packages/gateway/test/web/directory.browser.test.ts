/**
 * The web directory in real Chromium against a real gateway: listing, search, category
 * filter, the detail page's price per chain against a real 402, the snippets and the
 * copy button; every page without console errors and without a request that leaves
 * the gateway's loopback origin. Skips with a message where Chromium is absent.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser, newTrackedPage } from '../support/browser.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { publishListed } from './directory-fixture.ts';

interface Accept {
  chain: string;
  totalAmount: string;
  splits: { recipientType: string; amount: string }[];
}

describeBrowser('web directory in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let weather: string;
  let translate: string;

  beforeAll(async () => {
    [h, browser] = await Promise.all([startHarness(), launchBrowser()]);
    weather = await publishListed(h, {
      slugPrefix: 'weather',
      name: 'Nordic Weather',
      description: 'Forecasts for Nordic cities',
      category: 'weather',
      x402Exact: true,
      endpoints: [
        { method: 'GET', path: 'forecast/daily', price: '0.05', description: 'Daily forecast' },
        { method: 'GET', path: 'forecast/hourly', price: '0.123456', description: 'Hourly forecast' },
      ],
    });
    translate = await publishListed(h, {
      slugPrefix: 'translate',
      name: 'Translate Pro',
      description: 'Machine translation',
      category: 'language',
      chains: ['sui'],
      endpoints: [{ method: 'POST', path: 'translate', price: '0.002', description: 'Translate a text' }],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  const apiNames = (page: import('playwright-core').Page) =>
    page.locator('main ul.cards h3').allTextContents();

  it('lists the APIs, narrows them by search and by category', async () => {
    const { context, page, track } = await newTrackedPage(browser, h.baseUrl);
    await page.goto(`${h.baseUrl}/`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('API directory');
    expect((await apiNames(page)).sort()).toEqual(['Nordic Weather', 'Test shop', 'Translate Pro']);

    await page.getByLabel('Search').fill('nordic');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=nordic/);
    expect(await apiNames(page)).toEqual(['Nordic Weather']);
    expect(await page.getByLabel('Search').inputValue()).toBe('nordic');

    await page.getByLabel('Search').fill('');
    await page.getByLabel('Category').selectOption('language');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/category=language/);
    expect(await apiNames(page)).toEqual(['Translate Pro']);
    expect(await page.locator('#category option').allTextContents()).toEqual([
      'All categories',
      'language (1)',
      'test (1)',
      'weather (1)',
    ]);

    await page.getByLabel('Search').fill('no such thing');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/no\+such\+thing/);
    expect(await apiNames(page)).toEqual([]);
    await expect(page.getByText('No listed API matches.').count()).resolves.toBe(1);
    track.expectClean();
    await context.close();
  });

  it("shows each endpoint's price per chain exactly as its unpaid request's 402 asks", async () => {
    const { context, page, track } = await newTrackedPage(browser, h.baseUrl);
    await page.goto(`${h.baseUrl}/`);
    await page.getByRole('link', { name: 'Nordic Weather' }).click();
    await page.waitForURL(`${h.baseUrl}/directory/${weather}`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Nordic Weather');

    for (const path of ['forecast/daily', 'forecast/hourly']) {
      const res = await fetch(`${h.baseUrl}/p/${weather}/${path}`);
      expect(res.status).toBe(402);
      const { accepts } = (await res.json()) as { accepts: Accept[] };
      const section = page.locator('section.endpoint', {
        has: page.locator(`h3 code`, { hasText: `/${path}` }),
      });
      const rows = await section.locator('tbody tr').evaluateAll((trs) =>
        trs.map((tr) => ({
          chain: tr.getAttribute('data-chain'),
          cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
        })),
      );
      expect(rows).toEqual(
        accepts.map((a) => ({
          chain: a.chain,
          cells: [
            'localnet',
            a.totalAmount,
            a.splits.find((s) => s.recipientType === 'provider')!.amount,
            a.splits.find((s) => s.recipientType === 'platform')!.amount,
          ],
        })),
      );
      await expect(section.locator('.status').textContent()).resolves.toBe('Available');
      // Snippets: curl shows the 402; payFetch; a stock x402 client (this project opted in).
      const codes = await section.locator('pre code').allTextContents();
      expect(codes[0]).toBe(`curl -i '${h.config.publicBaseUrl}/p/${weather}/${path}'`);
      expect(codes[1]).toContain('payFetch(fetch, { wallets: [wallet]');
      expect(codes[1]).toContain(`maxPerRequest: "${accepts[0]!.totalAmount}"`);
      expect(codes[2]).toContain("import { wrapFetchWithPayment, x402Client } from '@x402/fetch';");
    }
    expect(await page.locator('section.endpoint').count()).toBe(2);
    track.expectClean();
    await context.close();
  });

  it('offers no stock x402 snippet for a project that did not opt in, and copies a snippet', async () => {
    const { context, page, track } = await newTrackedPage(browser, h.baseUrl, {
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    await page.goto(`${h.baseUrl}/directory/${translate}`);
    const res = await fetch(`${h.baseUrl}/p/${translate}/translate`, { method: 'POST' });
    const { accepts } = (await res.json()) as { accepts: Accept[] };
    expect(accepts.map((a) => a.chain)).toEqual(['sui']);
    await expect(page.locator('tbody tr[data-chain="sui"] td.total').textContent()).resolves.toBe(
      accepts[0]!.totalAmount,
    );
    expect(await page.locator('tbody tr').count()).toBe(1);
    const codes = await page.locator('pre code').allTextContents();
    expect(codes).toHaveLength(2);
    expect(codes[0]).toContain(`curl -i -X POST`);
    expect(codes[1]).toContain('suiWallet({');
    expect(codes[1]).toContain('method: "POST"');

    const copy = page.getByRole('button', { name: 'Copy' }).first();
    await expect(copy.isVisible()).resolves.toBe(true);
    await copy.click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(codes[0]);
    track.expectClean();
    await context.close();
  });

  it('loads the vendor modules in the page under its CSP, and a 404 page stays clean', async () => {
    const { context, page, track } = await newTrackedPage(browser, h.baseUrl);
    await page.goto(`${h.baseUrl}/`);
    // A string, not a function: the test runner would rewrite a function's import().
    const loaded = await page.evaluate(`Promise.all(
      ['htm-preact.mjs', 'preact-hooks.mjs', 'wallet-standard-app.mjs'].map((m) => import('/assets/vendor/' + m)),
    ).then(([htm, hooks, wallets]) =>
      [typeof htm.html, typeof htm.render, typeof hooks.useState, typeof wallets.getWallets])`);
    expect(loaded).toEqual(['function', 'function', 'function', 'function']);

    const res = await page.goto(`${h.baseUrl}/directory/nothing-here`);
    expect(res?.status()).toBe(404);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('API not found');
    // The 404 itself is logged by Chromium as a failed resource load: the one expected error.
    expect(track.errors.filter((e) => !e.includes('404'))).toEqual([]);
    expect(track.foreignRequests).toEqual([]);
    await context.close();
  });
});
