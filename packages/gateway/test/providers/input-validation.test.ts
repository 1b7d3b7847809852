/** Bad input is a 400 with our error body, never a 500 and never silently "fixed". */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, ORIGIN, type ProviderApp, signIn, startProviderApp, suiWallet } from './harness.ts';

let h: ProviderApp;
let token: string;
let apiId: string;

beforeAll(async () => {
  h = await startProviderApp();
  token = await signIn(h.app, suiWallet());
  await call(h.app, 'POST', '/v1/projects', { token, body: { slug: 'valid-proj', name: 'V' } });
  apiId = (
    await call(h.app, 'POST', '/v1/projects/valid-proj/apis', { token, body: { name: 'o', baseUrl: ORIGIN } })
  ).body.id;
});
afterAll(async () => {
  await h.close();
});

function expect400(res: { status: number; body: { error?: string; requestId?: string } }, reason?: string) {
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('invalid_request');
  expect(typeof res.body.requestId).toBe('string');
  if (reason) expect(res.body).toMatchObject({ reason });
}

const endpoint = (extra: Record<string, unknown>) => ({
  apiId,
  method: 'GET',
  path: 'p',
  price: '0.01',
  ...extra,
});

describe('malformed bodies', () => {
  it('answers a body nested 100,000 deep on the sign-in route (no account needed) with a 400, not a 500', async () => {
    const depth = 100_000;
    const rawBody = `{"chain":"sui","address":"a","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    expect400(await call(h.app, 'POST', '/v1/auth/challenge', { rawBody }));
  });

  it.each([
    ['truncated JSON', '{"slug": "abc'],
    ['not JSON', 'slug=abc'],
    ['a JSON array', '[]'],
    ['JSON null', 'null'],
    ['a JSON string', '"abc"'],
    ['prototype pollution', '{"slug":"abc-def","name":"x","__proto__":{"admin":true}}'],
  ])('rejects %s with 400', async (_name, rawBody) => {
    expect400(await call(h.app, 'POST', '/v1/projects', { token, rawBody }));
  });

  it('rejects a body sent as text/plain', async () => {
    const res = await call(h.app, 'POST', '/v1/projects', {
      token,
      rawBody: '{"slug":"abc-def","name":"x"}',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(400);
  });
});

describe('wrong types and unknown fields are rejected, not coerced or dropped', () => {
  it.each([
    ['price as a number', endpoint({ price: 0.01 })],
    ['timeoutMs as a string', endpoint({ timeoutMs: '5000' })],
    ['enabled as a string', endpoint({ enabled: 'false' })],
    ['enabled as a number', endpoint({ enabled: 0 })],
    ['method in lower case', endpoint({ method: 'get' })],
    ['method not allowed', endpoint({ method: 'TRACE' })],
    ['inputSchema as an array', endpoint({ inputSchema: [] })],
    ['inputSchema as a string', endpoint({ inputSchema: '{}' })],
    ['an unknown field', endpoint({ endpointType: 'internal' })],
    ['a missing price', { apiId, method: 'GET', path: 'p' }],
    ['timeoutMs too small', endpoint({ timeoutMs: 99 })],
    ['timeoutMs too large', endpoint({ timeoutMs: 120_001 })],
    ['timeoutMs fractional', endpoint({ timeoutMs: 1000.5 })],
  ])('endpoint with %s', async (_name, body) => {
    expect400(await call(h.app, 'POST', '/v1/projects/valid-proj/endpoints', { token, body }));
  });

  it.each([
    ['slug as a number', { slug: 123, name: 'x' }],
    [
      'an owner with extra fields',
      { slug: 'abc-x', name: 'x', owner: { chain: 'sui', address: '0x', admin: true } },
    ],
    ['an unknown field', { slug: 'abc-y', name: 'x', public: true }],
    ['an empty name', { slug: 'abc-z', name: '' }],
    ['a category with spaces', { slug: 'abc-w', name: 'x', category: 'Big Data' }],
  ])('project with %s', async (_name, body) => {
    expect400(await call(h.app, 'POST', '/v1/projects', { token, body }));
  });

  it('rejects an empty PATCH', async () => {
    expect400(await call(h.app, 'PATCH', '/v1/projects/valid-proj', { token, body: {} }));
  });
});

describe('field rules', () => {
  it.each(['a', 'ab', 'Upper', '-lead', 'trail-', 'has_underscore', 'x'.repeat(49), 'dot.slug'])(
    'refuses the slug %s',
    async (slug) => {
      expect400(await call(h.app, 'POST', '/v1/projects', { token, body: { slug, name: 'x' } }));
    },
  );

  it.each(['admin', 'tollgate', 'directory', 'www'])('refuses the reserved slug %s', async (slug) => {
    expect400(
      await call(h.app, 'POST', '/v1/projects', { token, body: { slug, name: 'x' } }),
      'reserved_slug',
    );
  });

  it.each([
    '',
    '/',
    'a//b',
    'a/',
    '../etc',
    'a/../b',
    './a',
    'a/./b',
    'a b',
    'a?x=1',
    'a#frag',
    'a%2fb',
    'a\\b',
    'ünï',
    'x'.repeat(513),
  ])('refuses the endpoint path %j', async (path) => {
    const res = await call(h.app, 'POST', '/v1/projects/valid-proj/endpoints', {
      token,
      body: endpoint({ path }),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it.each(['v1/items', 'a.b/c~d/e-f_g', 'x'.repeat(512), '/leading/slash'])(
    'accepts the endpoint path %j',
    async (path) => {
      const res = await call(h.app, 'POST', '/v1/projects/valid-proj/endpoints', {
        token,
        body: endpoint({ path }),
      });
      expect(res.status).toBe(201);
      expect(res.body.path).toBe(path.replace(/^\//, ''));
    },
  );

  it.each(['-1', '1e3', '0.0000001', '1,5', ' 1', '01', '1000.000001', '99999999999999999999', 'NaN', ''])(
    'refuses the price %j',
    async (price) => {
      const res = await call(h.app, 'POST', '/v1/projects/valid-proj/endpoints', {
        token,
        body: endpoint({ price, path: 'price-check' }),
      });
      expect400(res);
    },
  );

  it('accepts a price of 0 and of the 1000 USDC maximum', async () => {
    for (const [path, price] of [
      ['free-one', '0'],
      ['max-one', '1000'],
    ]) {
      const res = await call(h.app, 'POST', '/v1/projects/valid-proj/endpoints', {
        token,
        body: endpoint({ path, price }),
      });
      expect(res.status).toBe(201);
      expect(res.body.price).toBe(price);
    }
  });

  it('refuses a schema nested deeper than its readers go (16 KB of JSON can nest 7,000 deep): 400, not 500', async () => {
    const depth = 7000;
    const rawBody = JSON.stringify(endpoint({ path: 'deep-schema' })).replace(
      /}$/,
      `,"inputSchema":{"a":${'['.repeat(depth)}1${']'.repeat(depth)}}}`,
    );
    const res = await call(h.app, 'POST', '/v1/projects/valid-proj/endpoints', { token, rawBody });
    expect400(res, 'schema_too_large');
  });

  it('accepts a schema nested to the limit and refuses one a level deeper', async () => {
    const nested = (levels: number) => {
      let v: Record<string, unknown> = { type: 'string' };
      for (let i = 1; i < levels; i++) v = { type: 'object', properties: { x: v } };
      return v;
    };
    // nested(n) is 2n - 1 objects deep (each level and its properties): { wrap: nested(32) } is 64.
    const ok = await call(h.app, 'POST', '/v1/projects/valid-proj/endpoints', {
      token,
      body: endpoint({ path: 'deep-ok', inputSchema: { wrap: nested(32) } }),
    });
    expect(ok.status).toBe(201);
    const tooDeep = await call(h.app, 'POST', '/v1/projects/valid-proj/endpoints', {
      token,
      body: endpoint({ path: 'deep-no', inputSchema: { a: { wrap: nested(32) } } }),
    });
    expect400(tooDeep, 'schema_too_large');
  });

  it('refuses JSON schemas over 16 KB', async () => {
    const big = { description: 'x'.repeat(16 * 1024) };
    const res = await call(h.app, 'POST', '/v1/projects/valid-proj/endpoints', {
      token,
      body: endpoint({ path: 'big-schema', outputSchema: big }),
    });
    expect400(res, 'schema_too_large');
  });

  it('refuses oversize strings', async () => {
    expect400(
      await call(h.app, 'POST', '/v1/projects', {
        token,
        body: { slug: 'long-name', name: 'n'.repeat(101) },
      }),
    );
    expect400(
      await call(h.app, 'POST', '/v1/projects/valid-proj/endpoints', {
        token,
        body: endpoint({ path: 'long-desc', description: 'd'.repeat(1001) }),
      }),
    );
  });

  // Postgres refuses NUL in text, so these would reach the store as a 500 there.
  it('refuses a NUL anywhere: body string, JSON key, path parameter, query', async () => {
    const nul = '\u0000';
    const cases: [string, string, Record<string, unknown> | undefined][] = [
      ['POST', '/v1/projects', { slug: 'nul-name', name: `a${nul}b` }],
      [
        'POST',
        '/v1/projects/valid-proj/endpoints',
        endpoint({ path: 'nul', inputSchema: { [`k${nul}`]: 1 } }),
      ],
      ['GET', `/v1/projects/valid-proj/apis/${encodeURIComponent(`x${nul}`)}`, undefined],
      ['DELETE', `/v1/projects/valid-proj/endpoints/${encodeURIComponent(`x${nul}`)}`, undefined],
      ['GET', `/v1/directory/apis?q=${encodeURIComponent(`a${nul}`)}`, undefined],
      ['POST', '/v1/auth/verify', { chain: 'sui', address: 'a', message: nul, signature: 's' }],
    ];
    for (const [method, url, body] of cases) {
      expect400(await call(h.app, method, url, { token, ...(body ? { body } : {}) }), 'nul_character');
    }
    expect((await call(h.app, 'GET', '/v1/projects/nul-name', { token })).status).toBe(404);
  });

  it('answers 413 for a body over the size limit', async () => {
    const res = await call(h.app, 'POST', '/v1/projects', {
      token,
      rawBody: JSON.stringify({
        slug: 'huge-one',
        name: 'x',
        description: 'd'.repeat(h.config.maxBodyBytes),
      }),
    });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('body_too_large');
  });

  it.each([
    ['sui', { network: 'localnet', providerRecipient: '0x1234' }, 'invalid_recipient'],
    ['solana', { network: 'localnet', providerRecipient: `0x${'1'.repeat(64)}` }, 'invalid_recipient'],
    [
      'solana',
      { network: 'localnet', providerRecipient: '1111111111111111111111111111111' },
      'invalid_recipient',
    ],
    ['sui', { network: 'mainnet', providerRecipient: `0x${'1'.repeat(64)}` }, 'unsupported_network'],
  ])('refuses a %s rail %j', async (chain, body, reason) => {
    expect400(await call(h.app, 'PUT', `/v1/projects/valid-proj/rails/${chain}`, { token, body }), reason);
  });

  it('refuses a rail on an unknown chain', async () => {
    const res = await call(h.app, 'PUT', '/v1/projects/valid-proj/rails/ethereum', {
      token,
      body: { network: 'localnet', providerRecipient: '0xabc' },
    });
    expect400(res);
  });

  it.each<[Record<string, string>, string]>([
    [{ type: 'header', secret: 'k'.repeat(20) }, 'name required for header'],
    [{ type: 'query', secret: 'k'.repeat(20) }, 'name required for query'],
    [{ type: 'bearer', name: 'x', secret: 'k'.repeat(20) }, 'no name for bearer'],
    [{ type: 'header', name: 'Host', secret: 'k'.repeat(20) }, 'a header the proxy owns'],
    [{ type: 'header', name: 'X-Forwarded-For', secret: 'k'.repeat(20) }, 'a forwarding header'],
    [{ type: 'header', name: 'bad name', secret: 'k'.repeat(20) }, 'an invalid header name'],
    [{ type: 'header', name: 'x-key', secret: 'abc\r\nX-Evil: 1' }, 'CRLF in the secret'],
    [{ type: 'bearer', secret: ' padded ' }, 'surrounding spaces'],
    [{ type: 'basic', secret: 'k' }, 'an unknown type'],
  ])('refuses origin auth %j (%s)', async (auth) => {
    const res = await call(h.app, 'POST', '/v1/projects/valid-proj/apis', {
      token,
      body: { name: 'o', baseUrl: ORIGIN, auth },
    });
    expect400(res);
  });
});

describe('fuzzed bodies', () => {
  it('never answer 500 on any provider route', async () => {
    const routes: [string, string][] = [
      ['POST', '/v1/projects'],
      ['PATCH', '/v1/projects/valid-proj'],
      ['POST', '/v1/projects/valid-proj/apis'],
      ['POST', '/v1/projects/valid-proj/endpoints'],
      ['PUT', '/v1/projects/valid-proj/rails/sui'],
      ['POST', '/v1/auth/challenge'],
      ['POST', '/v1/auth/verify'],
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.oneof(
          fc.json(),
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify({ apiId, path: v, price: v, slug: v })),
        ),
        async ([method, url], rawBody) => {
          const res = await call(h.app, method, url, { token, rawBody });
          expect(res.status).toBeLessThan(500);
          expect(typeof res.body?.error === 'string' || res.status < 300).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });
});
