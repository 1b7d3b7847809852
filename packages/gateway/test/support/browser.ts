/**
 * Browser tests in real Chromium (the system's, driven by playwright-core). Where no
 * Chromium is installed the suites skip with a message saying so (CI installs it:
 * .ci/run). Every page is tracked: console errors, uncaught page errors, failed loads
 * and every request that leaves the gateway's own loopback origin are recorded (and
 * foreign requests are aborted), so a test can assert that a page is clean.
 */
import { existsSync } from 'node:fs';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';
import { describe, expect } from 'vitest';

const CANDIDATES = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
];

/** The Chromium executable, or null when none is installed. */
export const chromiumPath: string | null = CANDIDATES.find((p) => p && existsSync(p)) ?? null;

export const NO_CHROMIUM =
  'no Chromium found (looked at $CHROMIUM_PATH, /usr/bin/chromium, /usr/bin/chromium-browser, /usr/bin/google-chrome): ' +
  'browser tests skipped; install it with `apt-get install chromium` or set CHROMIUM_PATH';

export const BROWSER_TEST_TIMEOUT_MS = 60_000;

let warned = false;

/** `describe` for browser suites: skipped, with the reason in its name and on stderr, without Chromium. */
export function describeBrowser(name: string, fn: () => void): void {
  if (chromiumPath) {
    // A browser on a busy machine: page loads and clicks take longer than plain HTTP.
    describe(name, { timeout: BROWSER_TEST_TIMEOUT_MS }, fn);
    return;
  }
  if (!warned) {
    warned = true;
    console.warn(NO_CHROMIUM);
  }
  describe.skip(`${name} [skipped: ${NO_CHROMIUM}]`, fn);
}

export async function launchBrowser(): Promise<Browser> {
  if (!chromiumPath) throw new Error(NO_CHROMIUM);
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    // Containers: no user namespaces for the sandbox, a small /dev/shm.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

export interface PageTrack {
  /** console.error messages, failed loads (e.g. a 404 subresource) and uncaught exceptions. */
  errors: string[];
  /** Every request the page made to anywhere but the allowed origin (aborted). */
  foreignRequests: string[];
  /** Asserts both lists are empty. */
  expectClean(): void;
}

function isLocalScheme(url: string): boolean {
  return url.startsWith('data:') || url.startsWith('blob:') || url.startsWith('about:');
}

/**
 * Records what `page` does wrong. `allowedOrigin` is the gateway's origin, e.g.
 * `http://127.0.0.1:41234`; anything else is recorded and aborted.
 */
export async function trackPage(page: Page, allowedOrigin: string): Promise<PageTrack> {
  const origin = new URL(allowedOrigin).origin;
  const errors: string[] = [];
  const foreignRequests: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console.error: ${msg.text()} (${msg.location().url})`);
  });
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => {
    // A foreign request is already reported (and we aborted it ourselves).
    if (!isLocalScheme(req.url()) && new URL(req.url()).origin === origin) {
      errors.push(`request failed: ${req.method()} ${req.url()} ${req.failure()?.errorText ?? ''}`);
    }
  });
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (isLocalScheme(url) || new URL(url).origin === origin) return route.continue();
    foreignRequests.push(`${route.request().method()} ${url}`);
    return route.abort('blockedbyclient');
  });
  return {
    errors,
    foreignRequests,
    expectClean() {
      expect({ errors, foreignRequests }).toEqual({ errors: [], foreignRequests: [] });
    },
  };
}

/** A fresh context and a tracked page in it (close the context when done). */
export async function newTrackedPage(
  browser: Browser,
  allowedOrigin: string,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page; track: PageTrack }> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const track = await trackPage(page, allowedOrigin);
  return { context, page, track };
}
