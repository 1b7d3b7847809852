/**
 * Origin secrets are write-only: sealed at rest, shown only as their last 4
 * characters, and absent from every response and every log line. Access
 * tokens and sign-in signatures never reach the logs either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, ORIGIN, type ProviderApp, startProviderApp, suiWallet } from './harness.ts';

const SECRETS = {
  bearer: 'bearer-SECRET-aaaa-1111-2222-3333',
  header: 'header-SECRET-bbbb-4444-5555-6666',
  query: 'query-SECRET-cccc-7777-8888-9999',
  rotated: 'rotated-SECRET-dddd-0000-1111-2222',
  short: 'tiny-SECRET',
};

let h: ProviderApp;
let token: string;
const responses: string[] = [];

async function record(...args: Parameters<typeof call>) {
  const res = await call(...args);
  responses.push(JSON.stringify(res.headers), res.raw);
  return res;
}

beforeAll(async () => {
  h = await startProviderApp({ captureLogs: true });
  const wallet = suiWallet();
  const c = await record(h.app, 'POST', '/v1/auth/challenge', {
    body: { chain: 'sui', address: wallet.address },
  });
  const v = await record(h.app, 'POST', '/v1/auth/verify', {
    body: {
      chain: 'sui',
      address: wallet.address,
      message: c.body.message,
      signature: await wallet.sign(c.body.message),
    },
  });
  token = v.body.accessToken;
});
afterAll(async () => {
  await h.close();
});

describe('origin secrets', () => {
  it('never come back in any response and never reach the logs', async () => {
    await record(h.app, 'POST', '/v1/projects', { token, body: { slug: 'secretive', name: 'S' } });
    const ids: string[] = [];
    for (const [type, name] of [
      ['bearer', undefined],
      ['header', 'x-api-key'],
      ['query', 'api_key'],
    ] as const) {
      const secret = SECRETS[type];
      const res = await record(h.app, 'POST', '/v1/projects/secretive/apis', {
        token,
        body: { name: type, baseUrl: ORIGIN, auth: { type, ...(name ? { name } : {}), secret } },
      });
      expect(res.status).toBe(201);
      expect(res.body.auth).toEqual({ type, name: name ?? null, secretLast4: `…${secret.slice(-4)}` });
      ids.push(res.body.id);
    }
    const short = await record(h.app, 'POST', '/v1/projects/secretive/apis', {
      token,
      body: { name: 'short', baseUrl: ORIGIN, auth: { type: 'bearer', secret: SECRETS.short } },
    });
    expect(short.body.auth.secretLast4).toBeNull();
    await record(h.app, 'PATCH', `/v1/projects/secretive/apis/${ids[0]}`, {
      token,
      body: { auth: { type: 'header', name: 'authorization', secret: SECRETS.rotated } },
    });
    // A rejected request that carries a secret must not echo it either.
    const bad = await record(h.app, 'POST', '/v1/projects/secretive/apis', {
      token,
      body: { name: 'bad', baseUrl: 'not a url', auth: { type: 'bearer', secret: SECRETS.header } },
    });
    expect(bad.status).toBe(400);
    const invalidType = await record(h.app, 'POST', '/v1/projects/secretive/apis', {
      token,
      body: { name: 'bad', baseUrl: ORIGIN, auth: { type: 'header', name: 'Host', secret: SECRETS.query } },
    });
    expect(invalidType.status).toBe(400);

    await record(h.app, 'GET', '/v1/projects/secretive/apis', { token });
    for (const id of ids) await record(h.app, 'GET', `/v1/projects/secretive/apis/${id}`, { token });
    await record(h.app, 'POST', '/v1/projects/secretive/endpoints', {
      token,
      body: { apiId: ids[1], method: 'GET', path: 'x', price: '0.01' },
    });
    await record(h.app, 'PUT', '/v1/projects/secretive/rails/sui', {
      token,
      body: { network: 'localnet', providerRecipient: `0x${'2'.repeat(64)}` },
    });
    await record(h.app, 'GET', '/v1/projects/secretive/endpoints', { token });
    await record(h.app, 'GET', '/v1/directory/apis/secretive');
    await record(h.app, 'GET', '/v1/directory/apis');

    const everything = responses.join('\n');
    const logs = h.logs.join('');
    expect(h.logs.length).toBeGreaterThan(10);
    for (const secret of Object.values(SECRETS)) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(0, -4));
      expect(logs).not.toContain(secret);
    }
  });

  it('are stored sealed and open back to the original', async () => {
    const project = await h.store.projects.bySlug('secretive');
    const apis = await h.store.apis.list(project!.id);
    const header = apis.find((a) => a.name === 'header')!;
    expect(header.authSecretEnc).not.toContain(SECRETS.header);
    expect(header.authSecretEnc).toMatch(/^v1\./);
    expect(h.deps.secretBox.open(header.authSecretEnc!)).toBe(SECRETS.header);
  });
});

describe('credentials in logs', () => {
  it('the access token and the sign-in signature are never logged', async () => {
    const wallet = suiWallet();
    const c = await call(h.app, 'POST', '/v1/auth/challenge', {
      body: { chain: 'sui', address: wallet.address },
    });
    const signature = await wallet.sign(c.body.message);
    const v = await call(h.app, 'POST', '/v1/auth/verify', {
      body: { chain: 'sui', address: wallet.address, message: c.body.message, signature },
    });
    const fresh = v.body.accessToken as string;
    await call(h.app, 'GET', '/v1/projects', { token: fresh });
    await call(h.app, 'GET', `/v1/projects?access_token=${fresh}`);
    await call(h.app, 'POST', '/v1/auth/logout', { token: fresh });
    await call(h.app, 'GET', '/v1/projects', { token: fresh });
    const logs = h.logs.join('');
    expect(logs).toContain('signed in');
    for (const t of [token, fresh, signature]) expect(logs).not.toContain(t);
  });
});
