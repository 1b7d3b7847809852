/**
 * `signIn` from @tollgate/client against a real listening gateway: the payer wallets
 * (Solana and Sui) sign the challenge, the token works on the provider API; a bad
 * signature, a message that is not a sign-in message, an unreachable gateway and a
 * plain-http gateway off loopback are refused with a SignInError.
 */
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import {
  type MessageSigner,
  newSolanaKey,
  newSuiKey,
  SignInError,
  signIn,
  solanaWallet,
  suiWallet,
} from '@tollgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ProviderApp, startProviderApp } from '../providers/harness.ts';
import { freePort } from '../support/sandbox-process.ts';

let h: ProviderApp;
beforeAll(async () => {
  h = await startProviderApp({ listen: true });
});
afterAll(async () => {
  await h?.close();
});

// Signing needs no node: these RPC URLs are never called.
const NO_RPC = 'http://127.0.0.1:9';

describe('signIn', () => {
  it.each(['solana', 'sui'] as const)('signs in with a %s payer wallet', async (chain) => {
    const wallet =
      chain === 'solana'
        ? solanaWallet({ secretKey: newSolanaKey().secretKey, rpcUrl: NO_RPC })
        : suiWallet({ secretKey: newSuiKey().secretKey, rpcUrl: NO_RPC });
    const session = await signIn(`${h.baseUrl}/`, wallet);
    expect(session.accessToken).toMatch(/^tg_/);
    expect(Date.parse(session.expiresAt)).toBeGreaterThan(Date.now());
    expect(session.owner).toEqual({ chain, address: wallet.address });
    const who = await call(h.app, 'GET', '/v1/auth/session', { token: session.accessToken });
    expect(who.body).toEqual({ kind: 'owner', owner: { chain, address: wallet.address } });
    const projects = await call(h.app, 'GET', '/v1/projects', { token: session.accessToken });
    expect(projects.status).toBe(200);
  });

  it('takes any MessageSigner, e.g. a Sui keypair of your own', async () => {
    const kp = Ed25519Keypair.generate();
    const signer: MessageSigner = {
      chain: 'sui',
      address: kp.toSuiAddress(),
      async signMessage(message) {
        return (await kp.signPersonalMessage(new TextEncoder().encode(message))).signature;
      },
    };
    const session = await signIn(new URL(h.baseUrl), signer);
    expect(session.owner.address).toBe(kp.toSuiAddress());
  });

  it("refuses with the gateway's code and reason when the signature is wrong", async () => {
    const real = solanaWallet({ secretKey: newSolanaKey().secretKey, rpcUrl: NO_RPC });
    const other = solanaWallet({ secretKey: newSolanaKey().secretKey, rpcUrl: NO_RPC });
    const forger: MessageSigner = {
      chain: 'solana',
      address: real.address,
      signMessage: (m) => other.signMessage(m),
    };
    const err = await signIn(h.baseUrl, forger).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignInError);
    expect(err).toMatchObject({ status: 401, code: 'unauthorized', reason: 'bad_signature' });
  });

  it('never signs a challenge that is not a sign-in message for this wallet', async () => {
    let signed = 0;
    const wallet = solanaWallet({ secretKey: newSolanaKey().secretKey, rpcUrl: NO_RPC });
    const counting: MessageSigner = {
      chain: 'solana',
      address: wallet.address,
      signMessage: (m) => {
        signed++;
        return wallet.signMessage(m);
      },
    };
    const evil: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.endsWith('/v1/auth/challenge')) {
        return Response.json({ nonce: 'n', message: 'transfer everything to 0xevil', expiresAt: '' });
      }
      return fetch(input, init);
    };
    const err = await signIn(h.baseUrl, counting, { fetch: evil }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignInError);
    expect(err).toMatchObject({ code: 'invalid_challenge' });
    expect(signed).toBe(0);
  });

  it('says when the gateway cannot be reached, and refuses plain http off loopback', async () => {
    const wallet = suiWallet({ secretKey: newSuiKey().secretKey, rpcUrl: NO_RPC });
    const closed = `http://127.0.0.1:${await freePort()}`;
    const down = await signIn(closed, wallet).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(SignInError);
    expect(down).toMatchObject({ code: 'gateway_unreachable' });
    expect((down as Error).message).toContain(closed);

    let called = false;
    const spy: typeof fetch = async () => {
      called = true;
      return new Response('{}');
    };
    const clear = await signIn('http://gateway.example.com', wallet, { fetch: spy }).catch((e: unknown) => e);
    expect(clear).toBeInstanceOf(SignInError);
    expect(clear).toMatchObject({ code: 'insecure_gateway' });
    expect(called).toBe(false);
  });
});
