/**
 * Shutting down while a keep-alive response is in flight: the response is delivered
 * whole, then its connection is closed at once, so the gateway's close does not wait for
 * the keep-alive timeout (72 s by default) on a connection that no longer carries anything.
 */
import { Agent, get } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { challenge, payFor } from '../support/x402.ts';

let h: Harness;
let closed = false;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  if (!closed) await h?.close();
});

it('a paid response in flight when close begins is delivered whole, then close returns without waiting for keep-alive', async () => {
  const url = `${h.baseUrl}/p/${h.project.slug}/items`;
  const { requirement } = await challenge(url, {});
  const { header } = await payFor(await h.newPayer('solana'), requirement);
  h.upstream.mode = 'slow_chunked';
  h.upstream.slowChunks = 4;
  h.upstream.delayMs = 100;
  const agent = new Agent({ keepAlive: true });
  const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) =>
    get(url, { agent, headers: { 'x-payment': header } }, resolve).on('error', reject),
  );
  expect(res.statusCode).toBe(200);
  expect(res.headers.connection).toBe('keep-alive');
  const chunks: Buffer[] = [];
  const body = new Promise<string>((resolve, reject) => {
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString()));
    res.on('error', reject);
  });
  // Close begins while the upstream is still sending.
  const closing = h.app.close();
  expect(await body).toBe('chunk1;chunk2;chunk3;chunk4;');
  await closing;
  closed = true;
  await h.close();
  agent.destroy();
});
