/**
 * MCP (issue 15) with the official SDK client over Streamable HTTP against the real
 * gateway on the sandbox chains: the directory's endpoints and the inference routes are
 * tools; a paid call without payment returns the x402 PaymentRequired; Tollgate's client
 * pays on Solana and on Sui, a stock @x402/svm `exact` payload pays on Solana; the same
 * payment replays the stored answer; bad arguments are refused before any price is
 * asked; an upstream failure keeps the payment for a retry.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import {
  type PaymentWallet,
  payingMcpClient,
  type ToolResult,
  UndeliveredToolCallError,
} from '@tollgate/client';
import type { V2Requirements } from '@tollgate/protocol';
import { newSolanaKey } from '@tollgate/sandbox';
import { toClientSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chains, type Harness, startChains, startHarness } from '../support/gateway-harness.ts';

let h: Harness;
let chains: Chains;
const clients: Client[] = [];
const PRICE = 10_000n; // items: 0.01 USDC
const FEE = 1_000n; // 10 %, as the harness sets it

beforeAll(async () => {
  // Devnet's identity (as sandbox mode has): the stock SVM client pays only networks it knows.
  chains = await startChains({ as: 'devnet' });
  h = await startHarness({ chains });
  await h.store.projects.update(h.project.id, { x402Exact: true });
  await h.store.endpoints.update(h.project.id, h.endpoints.orders.id, {
    inputSchema: {
      type: 'object',
      properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } },
      required: ['sku', 'qty'],
      additionalProperties: false,
    },
  });
  h.deps.catalog.invalidate();
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await h?.close();
  await chains?.close();
});

async function connect(path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'tollgate-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${h.baseUrl}${path}`)));
  clients.push(client);
  return client;
}

const items = () => `${h.project.slug}__get_items`;
const orders = () => `${h.project.slug}__post_orders_new`;
const hits = (path: string) => h.upstream.calls(path).length;
type Meta = Record<string, Record<string, unknown>>;
const metaOf = (r: ToolResult) => (r._meta ?? {}) as Meta;

async function balances(chain: 'solana' | 'sui', payer: string) {
  const c = chain === 'solana' ? h.chains.solana : h.chains.sui;
  const { platform, provider } = h.recipients[chain];
  return {
    payer: await c.usdcBalance(payer),
    platform: await c.usdcBalance(platform),
    provider: await c.usdcBalance(provider),
  };
}

describe('tools/list', () => {
  it('lists every enabled endpoint of the directory and the inference tools, with prices', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['chat', 'embeddings', items(), orders()]));
    expect(names).not.toContain(`${h.project.slug}__get_off`);
    const tool = tools.find((t) => t.name === items())!;
    expect(tool.description).toContain('0.011 USDC per call');
    expect(tool.inputSchema).toMatchObject({ type: 'object', properties: { query: { type: 'object' } } });
    expect(tool._meta?.['tollgate/price']).toMatchObject({
      total: '0.011',
      chains: expect.arrayContaining([expect.objectContaining({ chain: 'solana', amount: '0.011' })]),
    });
    // The provider's inputSchema becomes the tool's (POST: the JSON body).
    expect(tools.find((t) => t.name === orders())?.inputSchema).toMatchObject({ required: ['sku', 'qty'] });
  });

  it('serves one project at /mcp/:slug, without the inference tools', async () => {
    const client = await connect(`/mcp/${h.project.slug}`);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain(items());
    expect(names).not.toContain('chat');
    expect(names.every((n) => n.startsWith(`${h.project.slug}__`))).toBe(true);
  });

  it('answers 404 for a project that does not exist', async () => {
    for (const slug of ['no-such-shop', 'Not_A_Slug']) {
      await expect(connect(`/mcp/${slug}`)).rejects.toThrow();
      const res = await fetch(`${h.baseUrl}/mcp/${slug}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'not_found' });
    }
  });
});

describe('the transport', () => {
  it('is stateless Streamable HTTP with JSON answers: a GET for a server-sent stream is refused with 405', async () => {
    const res = await fetch(`${h.baseUrl}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
  });
});

describe('a paid tool call', () => {
  it('without payment returns isError with the x402 v2 PaymentRequired (exact and split options), calling nothing', async () => {
    const client = await connect();
    const before = hits('/base/items');
    const result = (await client.callTool({ name: items(), arguments: {} })) as ToolResult;
    expect(result.isError).toBe(true);
    const required = result.structuredContent as Record<string, unknown>;
    expect(required).toMatchObject({ x402Version: 2, resource: { url: `mcp://tool/${items()}` } });
    expect((result.content as { text: string }[])[0]?.text).toBe(JSON.stringify(required));
    const accepts = required.accepts as V2Requirements[];
    // Stock x402 v2 `exact` (the project opted in) and Tollgate's split option, on both chains.
    const kinds = accepts.map((a) => `${a.scheme} ${a.network.split(':')[0]}`).sort();
    expect(kinds).toEqual(['exact solana', 'exact sui', 'exact_split solana', 'exact_split sui']);
    for (const a of accepts) expect(a.amount).toBe(String(PRICE + FEE));
    expect(required.extensions).toMatchObject({
      tollgate: { paymentRequirement: { scheme: 'exact_split', accepts: expect.any(Array) } },
    });
    expect(hits('/base/items')).toBe(before);
  });

  for (const chain of ['solana', 'sui'] as const) {
    it(`is paid by Tollgate's client on ${chain}: the answer, a receipt, exact balance changes`, async () => {
      const wallet = await h.newPayer(chain, '1');
      const mcp = payingMcpClient(await connect(), { wallets: [wallet] });
      const before = await balances(chain, wallet.address);
      const calls = hits('/base/items');
      const result = await mcp.callTool(items(), { query: { city: 'Oslo' } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ ok: true });
      const receipt = metaOf(result)['x402/payment-response'];
      expect(receipt).toMatchObject({ success: true, payer: wallet.address, chain });
      expect(await balances(chain, wallet.address)).toEqual({
        payer: before.payer - PRICE - FEE,
        platform: before.platform + FEE,
        provider: before.provider + PRICE,
      });
      expect(hits('/base/items')).toBe(calls + 1);
      expect(h.upstream.calls('/base/items').at(-1)?.url).toBe('/base/items?city=Oslo');
      expect(mcp.spent).toBe(PRICE + FEE);
    });
  }

  it('is paid by a stock @x402/svm exact payload on Solana; the same payment replays the stored answer', async () => {
    const client = await connect();
    const key = newSolanaKey();
    await h.chains.solana.faucet(key.address, 1_000_000n, 0n);
    const signer = await createKeyPairSignerFromBytes(key.secretKey);
    const args = { query: { q: 'stock' } };
    const first = (await client.callTool({ name: items(), arguments: args })) as ToolResult;
    const required = first.structuredContent as { accepts: V2Requirements[]; resource: unknown };
    const offered = required.accepts.find((a) => a.scheme === 'exact' && a.network.startsWith('solana:'))!;
    const scheme = new ExactSvmScheme(toClientSvmSigner(signer as never), { rpcUrl: h.chains.solana.url });
    const { payload } = await scheme.createPaymentPayload(2, offered as never);
    const payment = { x402Version: 2, resource: required.resource, accepted: offered, payload };

    const before = await balances('solana', key.address);
    const calls = hits('/base/items');
    const paid = (await client.callTool({
      name: items(),
      arguments: args,
      _meta: { 'x402/payment': payment },
    })) as ToolResult;
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ ok: true });
    const receipt = metaOf(paid)['x402/payment-response'];
    expect(receipt).toMatchObject({ success: true, payer: key.address, amount: String(PRICE + FEE) });
    expect(receipt?.network).toBe(offered.network);
    // The whole amount to the platform; the provider's share becomes a payable.
    expect(await balances('solana', key.address)).toEqual({
      payer: before.payer - PRICE - FEE,
      platform: before.platform + PRICE + FEE,
      provider: before.provider,
    });
    expect(hits('/base/items')).toBe(calls + 1);

    const again = (await client.callTool({
      name: items(),
      arguments: args,
      _meta: { 'x402/payment': payment },
    })) as ToolResult;
    expect(again.content).toEqual(paid.content);
    expect(metaOf(again)['tollgate/http']).toMatchObject({ replay: true });
    expect(metaOf(again)['x402/payment-response']).toMatchObject({ success: true });
    expect(hits('/base/items')).toBe(calls + 1);
    expect(await balances('solana', key.address)).toEqual({
      payer: before.payer - PRICE - FEE,
      platform: before.platform + PRICE + FEE,
      provider: before.provider,
    });
  });

  it("replays Tollgate's proof too: same result, upstream called once", async () => {
    const wallet = await h.newPayer('sui', '1');
    let proof: unknown;
    const client = await connect();
    const mcp = payingMcpClient(client, {
      wallets: [wallet],
      onEvent: (e) => {
        if (e.type === 'paid') proof = JSON.parse(Buffer.from(e.proof, 'base64').toString('utf8'));
      },
    });
    const args = { sku: 'a-1', qty: 2 };
    const first = await mcp.callTool(orders(), args);
    expect(first.isError).toBeFalsy();
    const calls = hits('/base/orders/new');
    const before = await balances('sui', wallet.address);
    const again = (await client.callTool({
      name: orders(),
      arguments: args,
      _meta: { 'x402/payment': proof as Record<string, unknown> },
    })) as ToolResult;
    expect(again.content).toEqual(first.content);
    expect(metaOf(again)['tollgate/http']).toMatchObject({ replay: true });
    expect(hits('/base/orders/new')).toBe(calls);
    expect(await balances('sui', wallet.address)).toEqual(before);
    // The upstream got the arguments as the JSON body.
    expect(h.upstream.calls('/base/orders/new').at(-1)?.body.toString()).toBe(JSON.stringify(args));
  });
});

describe('the inference tools', () => {
  it('pays a chat call and answers with the assistant text, the completion structured', async () => {
    const wallet = await h.newPayer('solana', '1');
    const mcp = payingMcpClient(await connect(), { wallets: [wallet] });
    const before = await h.chains.solana.usdcBalance(wallet.address);
    const result = await mcp.callTool('chat', {
      model: 'tollgate-dev-chat',
      messages: [{ role: 'user', content: 'Say hello' }],
      max_tokens: 8,
    });
    expect(result.isError).toBeFalsy();
    const text = (result.content as { text: string }[])[0]?.text;
    expect(text).toBeTruthy();
    expect(result.structuredContent).toMatchObject({ object: 'chat.completion', model: 'tollgate-dev-chat' });
    expect(metaOf(result)['x402/payment-response']).toMatchObject({ success: true });
    expect(before - (await h.chains.solana.usdcBalance(wallet.address))).toBe(mcp.spent);
    expect(mcp.spent).toBeGreaterThan(0n);
  });
});

describe('arguments are checked before any payment is asked', () => {
  it('refuses arguments that do not fit the schema with an error result and no PaymentRequired', async () => {
    const wallet = await h.newPayer('solana', '1');
    const mcp = payingMcpClient(await connect(), { wallets: [wallet] });
    const calls = hits('/base/orders/new');
    const result = await mcp.callTool(orders(), { sku: 'a-1', qty: 'two' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: 'invalid_request', reason: 'invalid_arguments' });
    expect(result.structuredContent).not.toHaveProperty('accepts');
    expect(mcp.spent).toBe(0n);
    expect(hits('/base/orders/new')).toBe(calls);
  });

  it('answers an unknown tool with an MCP error', async () => {
    const client = await connect();
    await expect(client.callTool({ name: 'nope__get_x', arguments: {} })).rejects.toThrow(/no tool named/);
  });
});

describe('an upstream failure', () => {
  it('keeps a Tollgate payment for a retry, which succeeds once the upstream recovers', async () => {
    const wallet: PaymentWallet = await h.newPayer('solana', '1');
    const mcp = payingMcpClient(await connect(), { wallets: [wallet], maxRetries: 1, maxRetryDelayMs: 10 });
    const before = await balances('solana', wallet.address);
    const calls = hits('/base/items');
    h.upstream.mode = 'fail500';
    let undelivered: UndeliveredToolCallError | undefined;
    try {
      await mcp.callTool(items(), { query: { n: '1' } });
    } catch (e) {
      if (e instanceof UndeliveredToolCallError) undelivered = e;
      else throw e;
    } finally {
      h.upstream.mode = 'ok';
    }
    expect(undelivered?.result?.structuredContent).toMatchObject({
      error: 'upstream_error',
      retryable: true,
    });
    expect(hits('/base/items')).toBe(calls + 2);
    const retried = await mcp.retryToolCall(items(), { query: { n: '1' } }, undelivered!.payment);
    expect(retried.isError).toBeFalsy();
    expect(metaOf(retried)['x402/payment-response']).toMatchObject({ success: true });
    expect(hits('/base/items')).toBe(calls + 3);
    // Paid once, for the one delivered answer.
    expect(await balances('solana', wallet.address)).toEqual({
      payer: before.payer - PRICE - FEE,
      platform: before.platform + FEE,
      provider: before.provider + PRICE,
    });
  });

  it('charges a stock v2 payer nothing; the same payment pays once the upstream recovers', async () => {
    const client = await connect();
    const key = newSolanaKey();
    await h.chains.solana.faucet(key.address, 1_000_000n, 0n);
    const signer = await createKeyPairSignerFromBytes(key.secretKey);
    const args = { query: { q: 'v2-retry' } };
    const first = (await client.callTool({ name: items(), arguments: args })) as ToolResult;
    const required = first.structuredContent as { accepts: V2Requirements[] };
    const offered = required.accepts.find((a) => a.scheme === 'exact' && a.network.startsWith('solana:'))!;
    const scheme = new ExactSvmScheme(toClientSvmSigner(signer as never), { rpcUrl: h.chains.solana.url });
    const { payload } = await scheme.createPaymentPayload(2, offered as never);
    const call = () =>
      client.callTool({
        name: items(),
        arguments: args,
        _meta: { 'x402/payment': { x402Version: 2, accepted: offered, payload } },
      }) as Promise<ToolResult>;
    const before = await balances('solana', key.address);
    h.upstream.mode = 'fail500';
    let failed: ToolResult;
    try {
      failed = await call();
    } finally {
      h.upstream.mode = 'ok';
    }
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent).toMatchObject({ error: 'upstream_error', retryable: true });
    expect(metaOf(failed)['x402/payment-response']).toMatchObject({ success: false });
    expect(await balances('solana', key.address)).toEqual(before);
    const paid = await call();
    expect(paid.isError).toBeFalsy();
    expect(await balances('solana', key.address)).toEqual({
      payer: before.payer - PRICE - FEE,
      platform: before.platform + PRICE + FEE,
      provider: before.provider,
    });
  });

  it('withholds the answer when a v2 payment does not settle: a fresh PaymentRequired, nothing charged', async () => {
    const client = await connect();
    const key = newSolanaKey();
    await h.chains.solana.faucet(key.address, 1_000_000n, 0n);
    const signer = await createKeyPairSignerFromBytes(key.secretKey);
    const args = { query: { q: 'unsettled' } };
    const first = (await client.callTool({ name: items(), arguments: args })) as ToolResult;
    const offered = (first.structuredContent as { accepts: V2Requirements[] }).accepts.find(
      (a) => a.scheme === 'exact' && a.network.startsWith('solana:'),
    )!;
    const scheme = new ExactSvmScheme(toClientSvmSigner(signer as never), { rpcUrl: h.chains.solana.url });
    const { payload } = await scheme.createPaymentPayload(2, offered as never);
    const before = await balances('solana', key.address);
    const calls = hits('/base/items');
    // The node goes down once the upstream has the (checked, claimed) request: the send fails.
    h.upstream.delayMs = 300;
    const paying = client.callTool({
      name: items(),
      arguments: args,
      _meta: { 'x402/payment': { x402Version: 2, accepted: offered, payload } },
    }) as Promise<ToolResult>;
    let result: ToolResult;
    try {
      await expect.poll(() => hits('/base/items'), { timeout: 10_000 }).toBe(calls + 1);
      h.chains.solana.setFault('rpc_down');
      result = await paying;
    } finally {
      h.chains.solana.setFault('none');
      h.upstream.delayMs = 0;
    }
    expect(result.isError).toBe(true);
    const required = result.structuredContent as { x402Version: number; error: string; accepts: unknown[] };
    expect(required.x402Version).toBe(2);
    expect(required.error).toMatch(/could not be settled/);
    expect(required.accepts.length).toBeGreaterThan(0);
    expect(metaOf(result)['x402/payment-response']).toMatchObject({ success: false });
    expect(JSON.stringify(result)).not.toContain('"ok":true');
    expect(await balances('solana', key.address)).toEqual(before);
  });
});
