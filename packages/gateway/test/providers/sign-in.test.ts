import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  call,
  type ProviderApp,
  signIn,
  solanaWallet,
  startProviderApp,
  suiWallet,
  type TestWallet,
} from './harness.ts';

let h: ProviderApp;
beforeAll(async () => {
  h = await startProviderApp();
});
afterAll(async () => {
  await h.close();
});

async function challenge(wallet: TestWallet) {
  const res = await call(h.app, 'POST', '/v1/auth/challenge', {
    body: { chain: wallet.chain, address: wallet.address },
  });
  expect(res.status).toBe(200);
  return res.body as { nonce: string; message: string; issuedAt: string; expiresAt: string };
}

function verify(wallet: TestWallet, message: string, signature: string, address = wallet.address) {
  return call(h.app, 'POST', '/v1/auth/verify', {
    body: { chain: wallet.chain, address, message, signature },
  });
}

describe('sign-in challenge', () => {
  it('issues a SIWS-style message for Solana naming our domain, the address and the nonce', async () => {
    const w = await solanaWallet();
    const c = await challenge(w);
    expect(c.nonce).toMatch(/^[0-9a-f]{32}$/);
    const lines = c.message.split('\n');
    expect(lines[0]).toBe('gateway.tollgate.test wants you to sign in with your Solana account:');
    expect(lines[1]).toBe(w.address);
    expect(lines).toContain('URI: https://gateway.tollgate.test');
    expect(lines).toContain('Version: 1');
    expect(lines).toContain('Chain ID: solana:localnet');
    expect(lines).toContain(`Nonce: ${c.nonce}`);
    expect(lines).toContain(`Issued At: ${c.issuedAt}`);
    expect(lines).toContain(`Expiration Time: ${c.expiresAt}`);
    expect(Date.parse(c.expiresAt) - Date.parse(c.issuedAt)).toBe(h.config.authChallengeTtlSec * 1000);
  });

  it('says "Sui account" for Sui and lower-cases the address', async () => {
    const w = suiWallet();
    const res = await call(h.app, 'POST', '/v1/auth/challenge', {
      body: { chain: 'sui', address: w.address.toUpperCase().replace('0X', '0x') },
    });
    expect(res.status).toBe(200);
    expect(res.body.message.split('\n').slice(0, 2)).toEqual([
      'gateway.tollgate.test wants you to sign in with your Sui account:',
      w.address,
    ]);
  });

  it.each([
    ['solana', 'not-base58-0OIl'],
    ['solana', '1111111111111111111111111111111'],
    ['sui', '0x1234'],
    ['sui', `0x${'g'.repeat(64)}`],
  ])('rejects a malformed %s address %s with 400', async (chain, address) => {
    const res = await call(h.app, 'POST', '/v1/auth/challenge', { body: { chain, address } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', reason: 'invalid_address' });
  });

  it('rejects an unknown chain and extra fields with 400', async () => {
    const w = await solanaWallet();
    expect(
      (await call(h.app, 'POST', '/v1/auth/challenge', { body: { chain: 'eth', address: w.address } }))
        .status,
    ).toBe(400);
    const extra = await call(h.app, 'POST', '/v1/auth/challenge', {
      body: { chain: 'solana', address: w.address, x: 1 },
    });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toBe('invalid_request');
  });
});

describe('sign-in verify', () => {
  it.each([
    ['solana (base58 signature)', () => solanaWallet('base58')],
    ['solana (base64 signature)', () => solanaWallet('base64')],
    ['sui (personal message)', async () => suiWallet()],
  ])('trades a signed challenge for a bearer token on %s', async (_name, make) => {
    const w = await make();
    const c = await challenge(w);
    const res = await verify(w, c.message, await w.sign(c.message));
    expect(res.status).toBe(200);
    expect(res.body.tokenType).toBe('Bearer');
    expect(res.body.accessToken).toMatch(/^tg_[A-Za-z0-9_-]{43}$/);
    expect(res.body.owner).toEqual({ chain: w.chain, address: w.address });
    expect(Date.parse(res.body.expiresAt)).toBeGreaterThan(Date.now());
    const me = await call(h.app, 'GET', '/v1/auth/session', { token: res.body.accessToken });
    expect(me.body).toEqual({ kind: 'owner', owner: { chain: w.chain, address: w.address } });
  });

  it('refuses a replayed sign-in message', async () => {
    const w = await solanaWallet();
    const c = await challenge(w);
    const sig = await w.sign(c.message);
    expect((await verify(w, c.message, sig)).status).toBe(200);
    const replay = await verify(w, c.message, sig);
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({ error: 'unauthorized', reason: 'challenge_not_found' });
  });

  it('lets exactly one of several concurrent verifications of one message win', async () => {
    const w = suiWallet();
    const c = await challenge(w);
    const sig = await w.sign(c.message);
    const results = await Promise.all(Array.from({ length: 8 }, () => verify(w, c.message, sig)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(7);
  });

  it('refuses an expired challenge', async () => {
    const w = await solanaWallet();
    const c = await challenge(w);
    const sig = await w.sign(c.message);
    h.setClockOffset((h.config.authChallengeTtlSec + 1) * 1000);
    try {
      const res = await verify(w, c.message, sig);
      expect(res.status).toBe(401);
      expect(res.body.reason).toBe('challenge_expired');
    } finally {
      h.setClockOffset(0);
    }
  });

  it('refuses a message rewritten for another domain, even when signed by the owner', async () => {
    const w = await solanaWallet();
    const c = await challenge(w);
    const forged = c.message.replace('gateway.tollgate.test wants', 'evil.example wants');
    const res = await verify(w, forged, await w.sign(forged));
    expect(res.status).toBe(401);
    expect(res.body.reason).toBe('wrong_domain');
  });

  it('refuses a signature from another key', async () => {
    for (const make of [() => solanaWallet(), async () => suiWallet()]) {
      const victim = await make();
      const attacker = await make();
      const c = await challenge(victim);
      const res = await verify(victim, c.message, await attacker.sign(c.message));
      expect(res.status).toBe(401);
      expect(res.body.reason).toBe('bad_signature');
    }
  });

  it('does not burn the challenge when the signature is bad', async () => {
    const w = await solanaWallet();
    const c = await challenge(w);
    expect((await verify(w, c.message, 'A'.repeat(88))).body.reason).toBe('bad_signature');
    expect((await verify(w, c.message, await w.sign(c.message))).status).toBe(200);
  });

  it('refuses a message whose signed text differs from the issued one', async () => {
    const w = await solanaWallet();
    const c = await challenge(w);
    const altered = c.message.replace(/Expiration Time: .*$/, 'Expiration Time: 2999-01-01T00:00:00.000Z');
    const res = await verify(w, altered, await w.sign(altered));
    expect(res.status).toBe(401);
    expect(res.body.reason).toBe('message_mismatch');
  });

  it('does not burn the challenge when the signed message differs from the issued one', async () => {
    const w = await solanaWallet();
    const c = await challenge(w);
    // A client bug (or anyone who saw the nonce) signs a different text carrying the same nonce.
    for (const wrong of [
      c.message.replace(/Expiration Time: .*$/, 'Expiration Time: 2999-01-01T00:00:00.000Z'),
      `${c.message}\n`,
      c.message.replace('Version: 1', 'Version: 2'),
    ]) {
      const res = await verify(w, wrong, await w.sign(wrong));
      expect(res.status).toBe(401);
      expect(res.body.reason).toBe('message_mismatch');
    }
    const ok = await verify(w, c.message, await w.sign(c.message));
    expect(ok.status).toBe(200);
    // The correct verify consumed it: the same message and signature fail afterwards.
    const again = await verify(w, c.message, await w.sign(c.message));
    expect(again.status).toBe(401);
    expect(again.body.reason).toBe('challenge_not_found');
  });

  it("does not let someone who saw the nonce burn another address's challenge", async () => {
    for (const make of [() => solanaWallet(), async () => suiWallet()]) {
      const victim = await make();
      const attacker = await make();
      const c = await challenge(victim);
      // The attacker puts their own address (and a valid signature of theirs) around the victim's nonce.
      const stolen = c.message.replace(`\n${victim.address}\n`, `\n${attacker.address}\n`);
      expect(stolen).not.toBe(c.message);
      const res = await verify(attacker, stolen, await attacker.sign(stolen));
      expect(res.status).toBe(401);
      expect(['address_mismatch', 'message_mismatch']).toContain(res.body.reason);
      expect((await verify(victim, c.message, await victim.sign(c.message))).status).toBe(200);
    }
  });

  it('refuses a challenge issued to another address', async () => {
    const victim = await solanaWallet();
    const attacker = await solanaWallet();
    const c = await challenge(victim);
    const res = await verify(attacker, c.message, await attacker.sign(c.message));
    expect(res.status).toBe(401);
    expect(res.body.reason).toBe('address_mismatch');
  });

  it('refuses a Solana challenge presented as Sui', async () => {
    const w = await solanaWallet();
    const c = await challenge(w);
    const sui = suiWallet();
    const res = await call(h.app, 'POST', '/v1/auth/verify', {
      body: { chain: 'sui', address: sui.address, message: c.message, signature: await sui.sign(c.message) },
    });
    expect(res.status).toBe(401);
    expect(res.body.reason).toBe('address_mismatch');
  });

  it('refuses a message we never issued', async () => {
    const w = await solanaWallet();
    const c = await challenge(w);
    const invented = c.message.replace(/Nonce: [0-9a-f]+/, `Nonce: ${'0'.repeat(32)}`);
    const res = await verify(w, invented, await w.sign(invented));
    expect(res.status).toBe(401);
    expect(res.body.reason).toBe('challenge_not_found');
  });
});

describe('access tokens', () => {
  it('stops working after logout', async () => {
    const token = await signIn(h.app, await solanaWallet());
    expect((await call(h.app, 'GET', '/v1/projects', { token })).status).toBe(200);
    expect((await call(h.app, 'POST', '/v1/auth/logout', { token })).status).toBe(204);
    const after = await call(h.app, 'GET', '/v1/projects', { token });
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ error: 'unauthorized', reason: 'invalid_token' });
  });

  it('stops working after it expires', async () => {
    const token = await signIn(h.app, suiWallet());
    h.setClockOffset(h.config.sessionTtlSec * 1000 + 1000);
    try {
      expect((await call(h.app, 'GET', '/v1/projects', { token })).status).toBe(401);
    } finally {
      h.setClockOffset(0);
    }
    expect((await call(h.app, 'GET', '/v1/projects', { token })).status).toBe(200);
  });

  it('is never read from a query string', async () => {
    const token = await signIn(h.app, await solanaWallet());
    for (const name of ['access_token', 'token', 'authorization']) {
      const res = await call(h.app, 'GET', `/v1/projects?${name}=${encodeURIComponent(token)}`);
      expect(res.status).toBe(401);
      expect(res.body.reason).toBe('missing_token');
    }
    const admin = await call(h.app, 'GET', `/v1/projects?access_token=${ADMIN_TOKEN}`);
    expect(admin.status).toBe(401);
  });

  it('is stored only as a hash', async () => {
    const token = await signIn(h.app, await solanaWallet());
    const { hashToken } = await import('../../src/auth/tokens.ts');
    expect(await h.store.auth.session(token, h.deps.now())).toBeNull();
    expect(await h.store.auth.session(hashToken(token), h.deps.now())).not.toBeNull();
  });

  it('rejects malformed, unknown and non-bearer credentials with 401', async () => {
    for (const authorization of [
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'Bearer tg_nope',
      `Bearer tg_${'A'.repeat(43)}`,
      'tg_x',
    ]) {
      const res = await call(h.app, 'GET', '/v1/projects', { headers: { authorization } });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('accepts the operator token and refuses to revoke it', async () => {
    const me = await call(h.app, 'GET', '/v1/auth/session', { token: ADMIN_TOKEN });
    expect(me.body).toEqual({ kind: 'operator' });
    const out = await call(h.app, 'POST', '/v1/auth/logout', { token: ADMIN_TOKEN });
    expect(out.status).toBe(400);
    expect((await call(h.app, 'GET', '/v1/projects', { token: ADMIN_TOKEN })).status).toBe(200);
  });
});
