/**
 * Solana-specific behaviour of the production verifier beyond the shared contract:
 * commitment levels, the node's failure modes, and the single-mint guard.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getBase58Decoder } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OfferedOption, VerifyInput } from '../../src/chains/chain.ts';
import { ChainUnavailableError } from '../../src/chains/chain.ts';
import { createSolanaSource, createSolanaVerifier } from '../../src/chains/solana/index.ts';
import type { SolanaHarness } from './solana-harness.ts';
import { makeSolanaHarness } from './solana-harness.ts';

let h: SolanaHarness;
let sandboxUrl: string;
let otherMint: string;
let provider: string;
let platform: string;

beforeAll(async () => {
  h = await makeSolanaHarness();
  sandboxUrl = h.sandbox.url;
  otherMint = h.sandbox.otherMint;
  provider = await h.newRecipient();
  platform = await h.newRecipient();
});
afterAll(() => h?.close());

let n = 0;
const memo = () => `tollgate:v1:source-${++n}-${Date.now()}`;

function option(m: string, asset = h.asset): OfferedOption {
  return {
    chain: 'solana',
    network: 'localnet',
    asset,
    memo: m,
    splits: [
      { recipientType: 'provider', payTo: provider, amount: 900_000n },
      { recipientType: 'platform', payTo: platform, amount: 100_000n },
    ],
  };
}
function input(opt: OfferedOption, txHashOrDigest: string): VerifyInput {
  const now = Date.now();
  return {
    option: opt,
    issuedAtMs: now - 60_000,
    expiresAtMs: now + 240_000,
    skewMs: 30_000,
    payer: h.payer,
    txHashOrDigest,
  };
}
const payBoth = (m: string, asset?: 'usdc' | 'other') =>
  h.send({
    transfers: [
      { to: provider, amount: 900_000n, asset },
      { to: platform, amount: 100_000n, asset },
    ],
    memos: [m],
  });

/** The sandbox's jsonParsed getTransaction answer as JSON (as a node sends it, before kit upcasts). */
async function rawGetTransaction(signature: string): Promise<Record<string, unknown>> {
  const res = await fetch(sandboxUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'getTransaction',
      params: [
        signature,
        { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment: 'confirmed' },
      ],
    }),
  });
  const { result } = (await res.json()) as { result: Record<string, unknown> | null };
  if (!result) throw new Error(`the sandbox does not have ${signature}`);
  return result;
}

/** A loopback JSON-RPC node that answers every method from `results` (null when absent). */
async function withStubNode(
  results: Record<string, unknown>,
  body: (rpcUrl: string) => Promise<void>,
): Promise<void> {
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => {
      text += c;
    });
    req.on('end', () => {
      const { id, method } = JSON.parse(text) as { id: unknown; method: string };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: results[method] ?? null }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.close();
  }
}

const verifier = (extra: Partial<Parameters<typeof createSolanaVerifier>[0]> = {}) =>
  createSolanaVerifier({ rpcUrl: sandboxUrl, network: 'localnet', timeoutMs: 5_000, ...extra });

describe('Solana verifier against the sandbox', () => {
  it('at confirmed commitment (the default) accepts what finalized still calls pending', async () => {
    const m = memo();
    h.setFault('hold_finality');
    let tx: string;
    try {
      tx = await payBoth(m);
    } finally {
      h.setFault('none');
    }
    expect((await verifier().verify(input(option(m), tx))).status).toBe('verified');
    expect(await verifier({ commitment: 'finalized' }).verify(input(option(m), tx))).toEqual({
      status: 'pending',
      reason: 'not_final',
    });
    h.finalizeAll();
  });

  it('reports pending, not a verdict, when the node has the status but not the transaction', async () => {
    const m = memo();
    const tx = await payBoth(m);
    const sb = h.sandbox;
    sb.setFault('not_found');
    try {
      expect(await verifier().verify(input(option(m), tx))).toEqual({
        status: 'pending',
        reason: 'not_final',
      });
    } finally {
      sb.setFault('none');
    }
    expect((await verifier().verify(input(option(m), tx))).status).toBe('verified');
  });

  it('treats a string that is not a signature as not found, without asking the node', async () => {
    h.setFault('rpc_down');
    try {
      for (const bad of [
        '',
        'abc',
        '0OIl'.repeat(22),
        getBase58Decoder().decode(new Uint8Array(32).fill(7)),
      ]) {
        expect(await verifier().verify(input(option(memo()), bad))).toEqual({
          status: 'pending',
          reason: 'not_found',
        });
      }
    } finally {
      h.setFault('none');
    }
  });

  it('throws ChainUnavailableError on HTTP 500 and on a node slower than the timeout', async () => {
    const tx = await payBoth(memo());
    const sb = h.sandbox;
    for (const fault of ['error_500', 'slow'] as const) {
      sb.setFault(fault);
      try {
        await expect(verifier({ timeoutMs: 300 }).verify(input(option(memo()), tx))).rejects.toBeInstanceOf(
          ChainUnavailableError,
        );
      } finally {
        sb.setFault('none');
      }
    }
  });

  it('gives up at its deadline on a node that sends its answer a byte at a time, forever', async () => {
    // The node pool has no timer of undici's own (rpc.ts): the call's deadline must cover
    // the answer's head and its whole body.
    for (const part of ['head', 'body'] as const) {
      let drip: NodeJS.Timeout | undefined;
      const node = createServer((_req, res) => {
        if (part === 'head') {
          res.socket?.write('HTTP/1.1 200 OK\r\n');
          drip = setInterval(() => res.socket?.write('x-more: 1\r\n'), 20);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"jsonrpc":"2.0","result":');
        drip = setInterval(() => res.write(' '), 20);
      });
      node.listen(0, '127.0.0.1');
      await new Promise((r) => node.once('listening', r));
      const { port } = node.address() as AddressInfo;
      const source = createSolanaSource({
        rpcUrl: `http://127.0.0.1:${port}`,
        network: 'localnet',
        timeoutMs: 300,
      });
      const started = Date.now();
      try {
        await expect(source.fetch('5'.repeat(87))).rejects.toBeInstanceOf(ChainUnavailableError);
        expect(Date.now() - started).toBeLessThan(3000);
      } finally {
        clearInterval(drip);
        node.closeAllConnections();
        node.close();
      }
    }
  });

  it('throws ChainUnavailableError, never another error, on answers not shaped like a node answer', async () => {
    const tx = await payBoth(memo());
    const answers: Record<string, unknown>[] = [
      { getTransaction: 5 },
      { getTransaction: { transaction: {}, meta: {} } },
      { getTransaction: null, getSignatureStatuses: {} },
      { getTransaction: null, getSignatureStatuses: { value: 'x' } },
      { getTransaction: null, getSignatureStatuses: { value: [7] } },
    ];
    for (const results of answers) {
      const server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => {
          body += c;
        });
        req.on('end', () => {
          const { id, method } = JSON.parse(body) as { id: unknown; method: string };
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ jsonrpc: '2.0', id, result: results[method] ?? null }));
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        await expect(verifier({ rpcUrl }).verify(input(option(memo()), tx))).rejects.toBeInstanceOf(
          ChainUnavailableError,
        );
      } finally {
        server.close();
      }
    }
  });

  it('on mainnet, refuses to verify against a node whose genesis is not mainnet', async () => {
    const m = memo();
    const tx = await payBoth(m);
    const onMainnet = verifier({ network: 'mainnet' });
    await expect(onMainnet.verify(input(option(m), tx))).rejects.toThrow(ChainUnavailableError);
    await expect(onMainnet.verify(input(option(m), tx))).rejects.toThrow(/genesis/);
    const pinned = verifier({ network: 'mainnet', expectedGenesisHash: h.sandbox.genesisHash });
    expect((await pinned.verify(input(option(m), tx))).status).toBe('verified');
  });

  it('throws ChainUnavailableError when nothing listens at the RPC address', async () => {
    const dead = createSolanaVerifier({
      rpcUrl: 'http://127.0.0.1:9',
      network: 'localnet',
      timeoutMs: 2_000,
    });
    await expect(dead.verify(input(option(memo()), h.unknownTxId()))).rejects.toBeInstanceOf(
      ChainUnavailableError,
    );
  });

  it('vouches only for its own mint: a payment in another mint offered as the asset is wrong_asset', async () => {
    const m = memo();
    const tx = await payBoth(m, 'other');
    // A USDC verifier must not accept it even if asked about the other mint...
    expect(await verifier().verify(input(option(m, otherMint), tx))).toEqual({
      status: 'rejected',
      reason: 'wrong_asset',
    });
    // ...while a verifier configured for that mint does: the guard is what rejected it.
    expect((await verifier({ mint: otherMint }).verify(input(option(m, otherMint), tx))).status).toBe(
      'verified',
    );
  });

  it("accepts a transaction only under its id, signatures[0]: another signer's signature is refused", async () => {
    const m = memo();
    // `other` pays the fee (signatures[0]); the payer signs the transfers (signatures[1]).
    const { id, signatures } = await h.sendSponsored({
      transfers: [
        { to: provider, amount: 900_000n },
        { to: platform, amount: 100_000n },
      ],
      memos: [m],
    });
    expect(signatures).toHaveLength(2);
    expect(signatures[0]).toBe(id);
    const second = signatures[1]!;
    expect((await verifier().verify(input(option(m), id))).status).toBe('verified');
    // The sandbox, like a mainnet node, files the transaction under its first signature only...
    expect((await verifier().verify(input(option(m), second))).status).toBe('pending');
    // ...but an indexer or RPC that finds it by any signature must not make it payable twice.
    const answer = await rawGetTransaction(id);
    await withStubNode({ getTransaction: answer }, async (rpcUrl) => {
      expect(await verifier({ rpcUrl }).verify(input(option(m), second))).toEqual({
        status: 'rejected',
        reason: 'transaction_id_not_canonical',
      });
      expect((await verifier({ rpcUrl }).verify(input(option(m), id))).status).toBe('verified');
    });
  });

  it('reports a payment whose blockTime the node does not know yet (null) as pending, not refused', async () => {
    const m = memo();
    const tx = await payBoth(m);
    const answer = { ...(await rawGetTransaction(tx)), blockTime: null };
    await withStubNode({ getTransaction: answer }, async (rpcUrl) => {
      expect(await verifier({ rpcUrl }).verify(input(option(m), tx))).toEqual({
        status: 'pending',
        reason: 'not_final',
      });
    });
    expect((await verifier().verify(input(option(m), tx))).status).toBe('verified');
  });

  it('names the chain and network it was built for', async () => {
    const source = createSolanaSource({ rpcUrl: sandboxUrl, network: 'localnet' });
    expect([source.chain, source.network]).toEqual(['solana', 'localnet']);
    expect(source.sameAsset(h.asset, h.asset)).toBe(true);
    expect(source.sameAsset(otherMint, otherMint)).toBe(false);
    expect(await source.fetch(h.unknownTxId())).toBeNull();
  });
});
