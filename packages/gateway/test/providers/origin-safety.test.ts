/**
 * Provider origins are checked at registration with the proxy's address policy:
 * every loopback, private, link-local, metadata and disguised form is refused
 * with 400 invalid_request and a reason, on create and on patch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ProviderApp, signIn, startProviderApp, suiWallet } from './harness.ts';

let h: ProviderApp;
let token: string;
let apiId: string;

beforeAll(async () => {
  h = await startProviderApp({ patch: { allowPrivateOrigins: false } });
  token = await signIn(h.app, suiWallet());
  await call(h.app, 'POST', '/v1/projects', { token, body: { slug: 'origin-test', name: 'O' } });
  const api = await call(h.app, 'POST', '/v1/projects/origin-test/apis', {
    token,
    body: { name: 'public', baseUrl: 'https://93.184.215.14/api' },
  });
  expect(api.status).toBe(201);
  apiId = api.body.id;
});
afterAll(async () => {
  await h.close();
});

const blocked: [string, string][] = [
  ['http://93.184.215.14', 'scheme_not_allowed'],
  ['ftp://93.184.215.14', 'scheme_not_allowed'],
  ['file:///etc/passwd', 'scheme_not_allowed'],
  ['gopher://93.184.215.14', 'scheme_not_allowed'],
  ['https://127.0.0.1', 'private_address'],
  ['https://127.1', 'private_address'],
  ['https://2130706433', 'private_address'],
  ['https://0x7f.0.0.1', 'private_address'],
  ['https://0177.0.0.1', 'private_address'],
  ['https://0.0.0.0', 'private_address'],
  ['https://localhost', 'private_address'],
  ['https://api.localhost', 'private_address'],
  ['https://[::1]', 'private_address'],
  ['https://[::ffff:127.0.0.1]', 'private_address'],
  ['https://[::ffff:10.0.0.1]', 'private_address'],
  ['https://10.1.2.3', 'private_address'],
  ['https://172.16.0.1', 'private_address'],
  ['https://192.168.1.1', 'private_address'],
  ['https://169.254.169.254/latest/meta-data', 'private_address'],
  ['https://100.64.0.1', 'private_address'],
  ['https://[fd00::1]', 'private_address'],
  ['https://[fe80::1]', 'private_address'],
  ['https://user:pass@93.184.215.14', 'userinfo_not_allowed'],
  ['https://@93.184.215.14', 'userinfo_not_allowed'],
  ['https://93.184.215.14/#frag', 'fragment_not_allowed'],
  ['https://93.184.215.14/?key=1', 'query_not_allowed'],
  ['not a url', 'invalid_url'],
  ['https://93.184.215.14/\tx', 'invalid_url'],
  ['//93.184.215.14', 'invalid_url'],
];

describe('origin URLs', () => {
  it.each(blocked)('refuses %s on create (%s)', async (baseUrl, reason) => {
    const res = await call(h.app, 'POST', '/v1/projects/origin-test/apis', {
      token,
      body: { name: 'x', baseUrl },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', reason });
  });

  it.each(blocked)('refuses %s on patch (%s)', async (baseUrl, reason) => {
    const res = await call(h.app, 'PATCH', `/v1/projects/origin-test/apis/${apiId}`, {
      token,
      body: { baseUrl },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', reason });
  });

  it('left the stored origin untouched after the refused patches', async () => {
    const api = await call(h.app, 'GET', `/v1/projects/origin-test/apis/${apiId}`, { token });
    expect(api.body.baseUrl).toBe('https://93.184.215.14/api');
  });

  it('refuses a host name that does not resolve', async () => {
    const res = await call(h.app, 'POST', '/v1/projects/origin-test/apis', {
      token,
      body: { name: 'x', baseUrl: 'https://does-not-exist.invalid' },
    });
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe('unresolvable_host');
  });
});
