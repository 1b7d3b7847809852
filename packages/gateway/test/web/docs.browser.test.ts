/**
 * /docs (Swagger UI over /openapi.json) in real Chromium against a real gateway: every
 * operation of the document is listed, a paid operation shows its 402 and payment
 * headers, "Try it out" reaches the gateway that serves the page, and the page loads everything from the gateway itself (no CDN) without a
 * console error, under its strict CSP (a CSP violation is a console error: dropping
 * 'unsafe-inline' from style-src makes this test fail). Skips with a message where
 * Chromium is absent (test/support/browser.ts).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser, newTrackedPage } from '../support/browser.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Swagger UI renders ~90 operations: seconds on a busy machine. */
const PAGE_TIMEOUT_MS = 90_000;

describeBrowser('the API reference at /docs in Chromium', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    [h, browser] = await Promise.all([startHarness(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it(
    'lists every operation of /openapi.json, loading nothing from elsewhere',
    async () => {
      const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { summary: string }>>;
      };
      const operations = Object.values(doc.paths).flatMap((item) =>
        Object.keys(item).filter((m) => METHODS.includes(m)),
      );

      const { context, page, track } = await newTrackedPage(browser, h.baseUrl);
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      const res = await page.goto(`${h.baseUrl}/docs`);
      expect(res?.status()).toBe(200);
      const csp = res?.headers()['content-security-policy'] ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self';");

      await page.locator('.opblock').first().waitFor();
      await expect(page.locator('.info .title').textContent()).resolves.toMatch(/^Tollgate/);
      // Every tag section is open by default: one block per operation.
      await expect(page.locator('.opblock').count()).resolves.toBe(operations.length);
      const summaries = await page.locator('.opblock-summary-description').allTextContents();
      expect(summaries).toContain('Create a project');
      expect(summaries).toContain('Chat completion (paid)');

      // Everything came from the gateway: the page, Swagger UI's files and the document.
      expect(requests.length).toBeGreaterThan(3);
      expect(requests.every((u) => u.startsWith(`${h.baseUrl}/`) || u.startsWith('data:'))).toBe(true);
      expect(requests).toContain(`${h.baseUrl}/docs/json`);
      track.expectClean();
      await context.close();
    },
    PAGE_TIMEOUT_MS,
  );

  it(
    'shows a paid operation with its 402 and payment headers, and tries a route out',
    async () => {
      const { context, page, track } = await newTrackedPage(browser, h.baseUrl);
      await page.goto(`${h.baseUrl}/docs`);
      const op = page.locator('.opblock-post', { hasText: '/v1/chat/completions' });
      await op.locator('.opblock-summary').click();
      const body = op.locator('.opblock-body');
      await body.waitFor();
      await expect(body.locator('.parameters').textContent()).resolves.toContain('X-PAYMENT');
      await expect(body.locator('.parameters').textContent()).resolves.toContain('PAYMENT-SIGNATURE');
      const responses = body.locator('.responses-table');
      await expect(responses.locator('.response-col_status').allTextContents()).resolves.toEqual(
        expect.arrayContaining(['200', '402', '4XX', '5XX']),
      );
      await expect(responses.textContent()).resolves.toContain('PAYMENT-REQUIRED');

      // "Try it out" reaches the gateway that serves the page (servers is relative in /docs/json).
      const health = page.locator('.opblock-get', { hasText: '/healthz' });
      await health.locator('.opblock-summary').click();
      await health.getByRole('button', { name: 'Try it out' }).click();
      const answer = page.waitForResponse((r) => r.url() === `${h.baseUrl}/healthz`);
      await health.getByRole('button', { name: 'Execute' }).click();
      expect((await answer).status()).toBe(200);
      const live = health.locator('.live-responses-table');
      await expect(live.locator('tbody .response-col_status').first().textContent()).resolves.toContain(
        '200',
      );
      await expect(live.locator('tbody .response-col_description').first().textContent()).resolves.toContain(
        '"ok"',
      );
      track.expectClean();
      await context.close();
    },
    PAGE_TIMEOUT_MS,
  );
});
