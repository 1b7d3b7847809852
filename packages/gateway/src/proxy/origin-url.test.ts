import { describe, expect, it } from 'vitest';
import { checkOriginUrl, type ResolveHost } from './origin-url.ts';

/** A fake DNS: no real resolution ever happens in these tests. */
function dns(records: Record<string, string[]>): ResolveHost {
  return async (host: string) => {
    const hit = records[host];
    if (hit === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return hit;
  };
}

const publicDns = dns({
  'api.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'mixed.example.com': ['93.184.215.14', '10.0.0.5'],
  'rebind.example.com': ['169.254.169.254'],
  'v6only.example.com': ['::ffff:127.0.0.1'],
  'localhost.': ['127.0.0.1'],
  localhost: ['127.0.0.1', '::1'],
  'empty.example.com': [],
});

const strict = { allowPrivate: false, resolve: publicDns };
const sandbox = { allowPrivate: true, resolve: publicDns };

describe('checkOriginUrl', () => {
  it('accepts a public https origin with a base path and keeps it intact', async () => {
    const r = await checkOriginUrl('https://api.example.com/v2', strict);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.url.href).toBe('https://api.example.com/v2');
  });

  it('strips trailing dots from a public host name', async () => {
    const r = await checkOriginUrl('https://api.example.com./v1', strict);
    expect(r.ok && r.url.hostname).toBe('api.example.com');
  });

  it.each([
    ['http://2130706433/'],
    ['http://0x7f.1/'],
    ['http://0177.0.0.1/'],
    ['http://127.1/'],
    ['http://127.0.0.1./'],
    ['http://[::ffff:127.0.0.1]/'],
    ['http://[::ffff:7f00:1]/'],
    ['http://[::1]/'],
    ['http://[::]/'],
    ['http://0/'],
    ['http://0.0.0.0/'],
    ['http://[64:ff9b::7f00:1]/'],
    ['http://[2002:7f00:1::]/'],
    ['http://169.254.169.254/latest/meta-data'],
    ['http://0xa9.0xfe.0xa9.0xfe/'],
    ['http://10.1.2.3/'],
    ['http://100.64.0.1/'],
    ['http://[fe80::1]/'],
    ['http://[fd00::1]/'],
  ])('normalises and rejects the numeric form %s', async (raw) => {
    // https so strict mode gets past the scheme rule; an empty DNS proves the literal was
    // recognised as an address (a name would come back unresolvable_host instead).
    const r = await checkOriginUrl(raw.replace('http:', 'https:'), { allowPrivate: false, resolve: dns({}) });
    expect(r).toMatchObject({ ok: false, reason: 'private_address' });
  });

  it.each([
    ['https://localhost/'],
    ['https://localhost./'],
    ['https://LOCALHOST.'],
    ['https://api.localhost/'],
  ])('rejects %s by name, whatever DNS says', async (raw) => {
    const r = await checkOriginUrl(raw, { allowPrivate: false, resolve: dns({}) });
    expect(r).toMatchObject({ ok: false, reason: 'private_address' });
  });

  it('rejects a name when ANY of its addresses is not public', async () => {
    expect(await checkOriginUrl('https://mixed.example.com/', strict)).toMatchObject({
      ok: false,
      reason: 'private_address',
      detail: 'private',
    });
    expect(await checkOriginUrl('https://rebind.example.com/', strict)).toMatchObject({
      ok: false,
      reason: 'private_address',
      detail: 'link_local',
    });
    expect(await checkOriginUrl('https://v6only.example.com/', strict)).toMatchObject({
      ok: false,
      reason: 'private_address',
      detail: 'loopback',
    });
  });

  it('reports names that do not resolve', async () => {
    expect(await checkOriginUrl('https://nope.example.com/', strict)).toEqual({
      ok: false,
      reason: 'unresolvable_host',
    });
    expect(await checkOriginUrl('https://empty.example.com/', strict)).toEqual({
      ok: false,
      reason: 'unresolvable_host',
    });
    const hanging: ResolveHost = () => new Promise(() => {});
    expect(
      await checkOriginUrl('https://api.example.com/', {
        allowPrivate: false,
        resolve: hanging,
        resolveTimeoutMs: 20,
      }),
    ).toEqual({ ok: false, reason: 'unresolvable_host' });
  });

  it.each([
    ['http://api.example.com/', 'scheme_not_allowed'],
    ['ftp://api.example.com/', 'scheme_not_allowed'],
    ['file:///etc/passwd', 'scheme_not_allowed'],
    ['javascript:alert(1)', 'scheme_not_allowed'],
    ['https://user:pw@api.example.com/', 'userinfo_not_allowed'],
    ['https://user@api.example.com/', 'userinfo_not_allowed'],
    ['https://@api.example.com/', 'userinfo_not_allowed'],
    ['https://api.example.com/#x', 'fragment_not_allowed'],
    ['https://api.example.com/#', 'fragment_not_allowed'],
    ['https://api.example.com/v1?key=1', 'query_not_allowed'],
    ['not a url', 'invalid_url'],
    ['', 'invalid_url'],
    ['https://api.example.com/\n', 'invalid_url'],
    [' https://api.example.com/', 'invalid_url'],
    ['https://exa\tmple.com/', 'invalid_url'],
    ['https:api.example.com', 'invalid_url'],
    ['https://1.2.3.4.5/', 'invalid_url'],
  ])('rejects %j with %s', async (raw, reason) => {
    const r = await checkOriginUrl(raw, strict);
    expect(r).toMatchObject({ ok: false, reason });
  });

  it('allows http and loopback origins only when allowPrivate is set', async () => {
    const r = await checkOriginUrl('http://127.0.0.1:8080/base', sandbox);
    expect(r.ok && r.url.href).toBe('http://127.0.0.1:8080/base');
    expect((await checkOriginUrl('http://localhost:3000/', sandbox)).ok).toBe(true);
    // still refuses userinfo and unresolvable names in sandbox mode
    expect(await checkOriginUrl('http://a:b@127.0.0.1/', sandbox)).toMatchObject({
      reason: 'userinfo_not_allowed',
    });
    expect(await checkOriginUrl('http://nope.example.com/', sandbox)).toMatchObject({
      reason: 'unresolvable_host',
    });
  });
});
