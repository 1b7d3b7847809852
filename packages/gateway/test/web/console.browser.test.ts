/**
 * The provider console (/console) in real Chromium against the real gateway and sandbox
 * chains. Wallets are Wallet Standard test wallets injected before the page's scripts
 * (the registration protocol: `wallet-standard:register-wallet` and `app-ready`) whose
 * signing runs in Node with a test key. Covered: sign-in on Solana and Sui, sign-out, the
 * `#token=` hand-over, creating a project, API, endpoint and rails through the UI, and the
 * earnings and payments shown after real paid requests, equal to what the API answers.
 * Every page must log no console error and send nothing off the gateway's origin.
 */
import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { getBase58Decoder } from '@solana/kit';
import { type MessageSigner, payFetch, signIn } from '@tollgate/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser, newTrackedPage, type PageTrack } from '../support/browser.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const ADMIN = 'operator-token-0123456789abcdef';
const DAY_MS = 86_400_000;

/** An ed25519 key that signs like a Solana wallet (the address is the base58 public key). */
function solanaTestKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return {
    address: getBase58Decoder().decode(pub),
    sign: (bytes: Uint8Array) =>
      new Uint8Array(
        sign(null, bytes, createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' }))),
      ),
  };
}

interface InjectedWallet {
  name: string;
  chain: 'solana' | 'sui';
  address: string;
}

/**
 * Registers the wallets in the page the Wallet Standard way, before any page script runs;
 * their signatures come from `__consoleTestSign` (Node). Runs in the browser.
 */
function injectWallets(wallets: InjectedWallet[]) {
  const toB64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
  const fromB64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  // The page's window (this file is compiled without the DOM library).
  const win = globalThis as unknown as {
    __consoleTestSign(chain: string, address: string, messageB64: string): Promise<string>;
    addEventListener(type: string, listener: (e: { detail: unknown }) => void): void;
    dispatchEvent(e: Event): boolean;
  };
  // Looked up at each call: the binding is Node's, installed by page.exposeFunction.
  const sign = (chain: string, address: string, b64: string) => win.__consoleTestSign(chain, address, b64);
  for (const w of wallets) {
    const chainId = `${w.chain}:localnet`;
    const feature = w.chain === 'solana' ? 'solana:signMessage' : 'sui:signPersonalMessage';
    const account = {
      address: w.address,
      publicKey: new Uint8Array(32),
      chains: [chainId],
      features: [feature],
    };
    const wallet = {
      version: '1.0.0',
      name: w.name,
      icon: 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=',
      chains: [chainId],
      accounts: [] as (typeof account)[],
      features: {
        'standard:connect': {
          version: '1.0.0',
          connect: async () => {
            wallet.accounts = [account];
            return { accounts: wallet.accounts };
          },
        },
        'standard:events': { version: '1.0.0', on: () => () => {} },
        ...(w.chain === 'solana'
          ? {
              'solana:signMessage': {
                version: '1.0.0',
                signMessage: async (...inputs: { account: { address: string }; message: Uint8Array }[]) =>
                  Promise.all(
                    inputs.map(async (i) => ({
                      signedMessage: i.message,
                      signature: fromB64(await sign('solana', i.account.address, toB64(i.message))),
                    })),
                  ),
              },
            }
          : {
              'sui:signPersonalMessage': {
                version: '1.1.0',
                signPersonalMessage: async (i: { account: { address: string }; message: Uint8Array }) => ({
                  bytes: toB64(i.message),
                  signature: await sign('sui', i.account.address, toB64(i.message)),
                }),
              },
            }),
      },
    };
    const callback = ({ register }: { register(w: unknown): unknown }) => register(wallet);
    win.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: callback }));
    win.addEventListener('wallet-standard:app-ready', (e) =>
      callback(e.detail as { register(w: unknown): unknown }),
    );
  }
}

let h: Harness;
let browser: Browser;
const solanaKey = solanaTestKey();
const suiKey = Ed25519Keypair.generate();
const WALLETS: InjectedWallet[] = [
  { name: 'Test Solana Wallet', chain: 'solana', address: solanaKey.address },
  { name: 'Test Sui Wallet', chain: 'sui', address: suiKey.toSuiAddress() },
];

/** A tracked page with the test wallets injected, at /console. */
async function openConsole(
  path = '/console',
): Promise<{ page: Page; track: PageTrack; close(): Promise<void> }> {
  const { context, page, track } = await newTrackedPage(browser, h.baseUrl);
  // Fail on the step that waits, well before the test's own timeout.
  page.setDefaultTimeout(15_000);
  await page.exposeFunction('__consoleTestSign', async (chain: string, address: string, b64: string) => {
    const bytes = new Uint8Array(Buffer.from(b64, 'base64'));
    if (chain === 'solana' && address === solanaKey.address)
      return Buffer.from(solanaKey.sign(bytes)).toString('base64');
    if (chain === 'sui' && address === suiKey.toSuiAddress())
      return (await suiKey.signPersonalMessage(bytes)).signature;
    throw new Error(`no test key for ${chain} ${address}`);
  });
  await page.addInitScript(injectWallets, WALLETS);
  await page.goto(`${h.baseUrl}${path}`);
  return { page, track, close: () => context.close() };
}

/** The Sui test key as the client's signer, for sessions made outside the page. */
function suiSigner(): MessageSigner {
  return {
    chain: 'sui',
    address: suiKey.toSuiAddress(),
    signMessage: async (m) => (await suiKey.signPersonalMessage(new TextEncoder().encode(m))).signature,
  };
}

async function apiGet<T>(path: string, token = ADMIN): Promise<T> {
  const res = await fetch(`${h.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

/** The body rows of the table with this caption, as cell texts. */
async function tableRows(page: Page, caption: string): Promise<string[][]> {
  const table = page.locator('table', { has: page.locator('caption', { hasText: caption }) });
  await table.waitFor();
  return table
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((r) => [...r.querySelectorAll('th, td')].map((c) => (c.textContent ?? '').trim())),
    );
}

describeBrowser('provider console', () => {
  beforeAll(async () => {
    h = await startHarness();
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('signs in with a Solana wallet, sets up an endpoint, and shows the earnings and payments the API reports', async () => {
    const { page, track, close } = await openConsole();
    try {
      await page.getByRole('button', { name: 'Sign in with Test Solana Wallet (Solana)' }).click();
      await expect.poll(() => page.locator('.who').textContent()).toContain(solanaKey.address);

      // A project, its API, an endpoint and both rails, all through the UI.
      const slug = `console-${Date.now().toString(36)}`;
      await page.getByLabel('Slug', { exact: true }).fill(slug);
      await page.getByLabel('Name', { exact: true }).fill('Console Shop');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('heading', { name: `Console Shop (${slug})` }).waitFor();

      await page.getByLabel('API name', { exact: true }).fill('upstream');
      await page.getByLabel('API base URL', { exact: true }).fill(`${h.upstream.url}/base`);
      await page.getByLabel('API origin authentication', { exact: true }).selectOption('header');
      await page.getByLabel('API header name', { exact: true }).fill('x-api-key');
      await page.getByLabel('API secret', { exact: true }).fill('console-origin-secret-wxyz');
      await page.getByRole('button', { name: 'Add API' }).click();
      await expect
        .poll(async () => tableRows(page, 'Origins of this project'))
        .toEqual([['upstream', `${h.upstream.url}/base`, 'header x-api-key (secret …wxyz)', 'Edit Delete']]);
      expect(await page.content()).not.toContain('console-origin-secret-wxyz');

      await page.getByRole('option', { name: 'upstream' }).waitFor({ state: 'attached' });
      await page.getByLabel('Endpoint path', { exact: true }).fill('items');
      await page.getByLabel('Endpoint price (USDC)', { exact: true }).fill('0.01');
      await page.getByLabel('Endpoint description', { exact: true }).fill('every item');
      await page.getByRole('button', { name: 'Create endpoint' }).click();
      await page.getByRole('status').filter({ hasText: 'Endpoint created.' }).waitFor();

      await page.getByLabel('Solana recipient address').fill(h.recipients.solana.provider);
      await page.getByRole('button', { name: 'Save Solana rail' }).click();
      await page.getByRole('status').filter({ hasText: 'Solana rail saved.' }).waitFor();
      await page.getByLabel('Sui recipient address').fill(h.recipients.sui.provider);
      await page.getByRole('button', { name: 'Save Sui rail' }).click();
      await page.getByRole('status').filter({ hasText: 'Sui rail saved.' }).waitFor();

      // The endpoint exists as the real API tells it, and the page shows it healthy once listed.
      const { endpoints } = await apiGet<{ endpoints: Record<string, unknown>[] }>(
        `/v1/projects/${slug}/endpoints`,
      );
      expect(endpoints).toEqual([
        expect.objectContaining({
          method: 'GET',
          path: 'items',
          price: '0.01',
          description: 'every item',
          enabled: true,
        }),
      ]);
      await page.getByRole('button', { name: 'Refresh health' }).click();
      await expect
        .poll(async () => (await tableRows(page, 'Paid endpoints'))[0]?.slice(0, 5))
        .toEqual(['GET items', '0.01 USDC', '0.011 USDC', '30000 ms', 'healthy']);

      // Editing goes through PATCH.
      await page.getByRole('button', { name: 'Edit endpoint GET items' }).click();
      await page.getByLabel('Edit endpoint: description', { exact: true }).fill('all the items');
      await page.getByRole('button', { name: 'Save endpoint' }).click();
      await page.getByRole('status').filter({ hasText: 'Endpoint saved.' }).waitFor();
      const edited = await apiGet<{ endpoints: { description: string }[] }>(`/v1/projects/${slug}/endpoints`);
      expect(edited.endpoints.map((e) => e.description)).toEqual(['all the items']);
      await page.getByRole('button', { name: 'Close' }).click();

      // Real payments on both chains.
      const url = `${h.baseUrl}/p/${slug}/items`;
      for (const chain of ['solana', 'solana', 'sui'] as const) {
        const res = await payFetch(fetch, { wallets: [await h.newPayer(chain)] })(url);
        expect(res.status, await res.text()).toBe(200);
      }

      // The console's numbers are the API's, for the same range (its default: the last 30 UTC days).
      const today = new Date().toISOString().slice(0, 10);
      const from = new Date(Date.parse(`${today}T00:00:00Z`) - 29 * DAY_MS).toISOString();
      const to = new Date(Date.parse(`${today}T00:00:00Z`) + DAY_MS).toISOString();
      const earnings = await apiGet<{ totals: Record<string, string | number>[] }>(
        `/v1/projects/${slug}/earnings?groupBy=day&from=${from}&to=${to}`,
      );
      expect(earnings.totals).toEqual([
        { chain: 'solana', requests: 2, gross: '0.022', fee: '0.002', net: '0.02' },
        { chain: 'sui', requests: 1, gross: '0.011', fee: '0.001', net: '0.01' },
      ]);
      await page.getByRole('button', { name: 'Show earnings' }).click();
      await expect
        .poll(async () => tableRows(page, 'Totals per chain'))
        .toEqual(earnings.totals.map((t) => [t.chain, String(t.requests), t.gross, t.fee, t.net]));
      expect(await page.locator('svg.chart rect.bar').count()).toBe(2);

      const payments = await apiGet<{ payments: Record<string, unknown>[] }>(`/v1/projects/${slug}/payments`);
      expect(payments.payments).toHaveLength(3);
      await page.getByRole('button', { name: 'Refresh payments' }).click();
      await expect.poll(async () => (await tableRows(page, 'Payments, newest first')).length).toBe(3);
      const shown = await page.locator('table.payments tbody tr').evaluateAll((rows) =>
        rows.map((r) => ({
          id: r.getAttribute('data-payment'),
          txId: r.querySelector('td:nth-child(4)')?.getAttribute('title'),
          cells: [...r.querySelectorAll('td')].map((c) => (c.textContent ?? '').trim()),
        })),
      );
      expect(shown).toEqual(
        payments.payments.map((p) => ({
          id: p['id'],
          txId: p['txId'],
          cells: [
            expect.any(String),
            'GET items',
            p['chain'],
            expect.any(String),
            expect.any(String),
            p['gross'],
            p['fee'],
            p['net'],
            'delivered',
          ],
        })),
      );

      // The CSV export holds the same payments.
      await page.getByRole('button', { name: 'Export CSV' }).click();
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: `Download ${slug}-payments.csv` }).click(),
      ]);
      const csv = await readFile((await download.path())!, 'utf8');
      const lines = csv.trim().split('\n');
      expect(lines).toHaveLength(4);
      for (const p of payments.payments) expect(csv).toContain(String(p['txId']));
      track.expectClean();
    } finally {
      await close();
    }
  }, 90_000);

  it('signs in with a Sui wallet and signs out, revoking the session', async () => {
    const { page, track, close } = await openConsole();
    try {
      await page.getByRole('button', { name: 'Sign in with Test Sui Wallet (Sui)' }).click();
      await expect.poll(() => page.locator('.who').textContent()).toContain(suiKey.toSuiAddress());
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      const token = await page.evaluate(() => sessionStorage.getItem('tollgate.console.token'));
      expect(await apiGet(`/v1/auth/session`, token!)).toEqual({
        kind: 'owner',
        owner: { chain: 'sui', address: suiKey.toSuiAddress() },
      });

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem('tollgate.console.token'))).toBeNull();
      const after = await fetch(`${h.baseUrl}/v1/auth/session`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(after.status).toBe(401);
      track.expectClean();
    } finally {
      await close();
    }
  });

  it('edits and deletes an API, an endpoint, a rail and the project', async () => {
    const session = await signIn(h.baseUrl, suiSigner());
    const { page, track, close } = await openConsole(
      `/console#token=${encodeURIComponent(session.accessToken)}`,
    );
    const get = <T>(path: string) => apiGet<T>(path, session.accessToken);
    try {
      const slug = `crud-${Date.now().toString(36)}`;
      await page.getByLabel('Slug', { exact: true }).fill(slug);
      await page.getByLabel('Name', { exact: true }).fill('Crud');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('heading', { name: `Crud (${slug})` }).waitFor();

      await page.getByLabel('API name', { exact: true }).fill('first');
      await page.getByLabel('API base URL', { exact: true }).fill(`${h.upstream.url}/v1`);
      await page.getByLabel('API origin authentication', { exact: true }).selectOption('bearer');
      await page.getByLabel('API secret', { exact: true }).fill('bearer-secret-1234');
      await page.getByRole('button', { name: 'Add API' }).click();
      await page.getByRole('status').filter({ hasText: 'API added.' }).waitFor();
      await page.getByRole('option', { name: 'first' }).waitFor({ state: 'attached' });
      await page.getByLabel('Endpoint path', { exact: true }).fill('things/list');
      await page.getByLabel('Endpoint method', { exact: true }).selectOption('POST');
      await page.getByLabel('Endpoint price (USDC)', { exact: true }).fill('0.5');
      await page.getByRole('button', { name: 'Create endpoint' }).click();
      await page.getByRole('status').filter({ hasText: 'Endpoint created.' }).waitFor();

      // Renaming an API without a new secret keeps its origin authentication.
      await page.getByRole('button', { name: 'Edit API first' }).click();
      await page.getByLabel('Edit API: name', { exact: true }).fill('renamed');
      await page.getByRole('button', { name: 'Save API' }).click();
      await page.getByRole('status').filter({ hasText: 'API saved.' }).waitFor();
      const { apis } = await get<{ apis: Record<string, unknown>[] }>(`/v1/projects/${slug}/apis`);
      expect(apis).toEqual([
        expect.objectContaining({
          name: 'renamed',
          auth: { type: 'bearer', name: null, secretLast4: '…1234' },
        }),
      ]);
      await page.getByRole('button', { name: 'Close' }).click();

      await page.getByRole('button', { name: 'Delete endpoint POST things/list' }).click();
      await page.getByRole('status').filter({ hasText: 'Endpoint POST things/list deleted.' }).waitFor();
      expect(await get(`/v1/projects/${slug}/endpoints`)).toEqual({ endpoints: [] });
      await page.getByRole('button', { name: 'Delete API renamed' }).click();
      await page.getByRole('status').filter({ hasText: 'API renamed deleted.' }).waitFor();
      expect(await get(`/v1/projects/${slug}/apis`)).toEqual({ apis: [] });

      await page.getByLabel('Sui recipient address').fill(h.recipients.sui.provider);
      await page.getByRole('button', { name: 'Save Sui rail' }).click();
      await page.getByRole('button', { name: 'Remove Sui rail' }).click();
      await page.getByRole('status').filter({ hasText: 'Sui rail removed.' }).waitFor();
      expect(await get(`/v1/projects/${slug}/rails`)).toEqual({ rails: [] });

      await page.getByLabel('Project description', { exact: true }).fill('changed');
      await page.getByRole('button', { name: 'Save project' }).click();
      await page.getByRole('status').filter({ hasText: 'Project saved.' }).waitFor();
      expect(await get(`/v1/projects/${slug}`)).toMatchObject({ description: 'changed' });
      await page.getByRole('button', { name: 'Delete project…' }).click();
      await page.getByRole('button', { name: 'Yes, delete project' }).click();
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      const after = await fetch(`${h.baseUrl}/v1/projects/${slug}`, {
        headers: { authorization: `Bearer ${session.accessToken}` },
      });
      expect(after.status).toBe(404);
      track.expectClean();
    } finally {
      await close();
    }
  }, 60_000);

  it("shows the gateway's error message in an alert", async () => {
    const session = await signIn(h.baseUrl, suiSigner());
    const { page, track, close } = await openConsole(
      `/console#token=${encodeURIComponent(session.accessToken)}`,
    );
    try {
      await page.getByLabel('Slug', { exact: true }).fill('Not A Slug');
      await page.getByLabel('Name', { exact: true }).fill('Bad');
      await page.getByRole('button', { name: 'Create project' }).click();
      const direct = await fetch(`${h.baseUrl}/v1/projects`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ slug: 'Not A Slug', name: 'Bad' }),
      });
      expect(direct.status).toBe(400);
      const { message } = (await direct.json()) as { message: string };
      await expect.poll(() => page.getByRole('alert').textContent()).toBe(message);
      // Chromium logs the refused request itself; nothing else went wrong.
      expect(track.errors).toEqual([expect.stringContaining('status of 400')]);
      expect(track.foreignRequests).toEqual([]);
    } finally {
      await close();
    }
  });

  it('goes back to sign-in, saying why, when the gateway no longer takes the session', async () => {
    const session = await signIn(h.baseUrl, suiSigner());
    const { page, track, close } = await openConsole(
      `/console#token=${encodeURIComponent(session.accessToken)}`,
    );
    try {
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      const revoked = await fetch(`${h.baseUrl}/v1/auth/logout`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session.accessToken}` },
      });
      expect(revoked.status).toBe(204);
      await page.getByLabel('Slug', { exact: true }).fill(`late-${Date.now().toString(36)}`);
      await page.getByLabel('Name', { exact: true }).fill('Too late');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect(await page.getByRole('alert').allTextContents()).toEqual([
        'Your session has ended (it expired or was signed out elsewhere): sign in again.',
      ]);
      expect(await page.evaluate(() => sessionStorage.getItem('tollgate.console.token'))).toBeNull();
      expect(track.errors).toEqual([expect.stringContaining('status of 401')]);
      expect(track.foreignRequests).toEqual([]);
    } finally {
      await close();
    }
  });

  it('takes a token handed over in the URL fragment and removes it from the address', async () => {
    const session = await signIn(h.baseUrl, suiSigner());
    const { page, track, close } = await openConsole(
      `/console#token=${encodeURIComponent(session.accessToken)}`,
    );
    try {
      await expect.poll(() => page.locator('.who').textContent()).toContain(suiKey.toSuiAddress());
      expect(page.url()).toBe(`${h.baseUrl}/console`);
      expect(
        await page.evaluate(() => (globalThis as unknown as { location: { hash: string } }).location.hash),
      ).toBe('');
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      track.expectClean();
    } finally {
      await close();
    }
  });
});
