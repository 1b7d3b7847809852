/**
 * Regenerates request-hash-vectors.json: `node packages/protocol/docs/make-vectors.ts`.
 * The vectors are data other clients check themselves against; the test suite
 * recomputes every one, so a change to the definition cannot slip through.
 */
import { writeFileSync } from 'node:fs';
import { EMPTY_BODY_SHA256, sha256Hex } from '../src/hash.ts';
import { computeRequestHash, type RequestHashInput, requestHashPreimage } from '../src/request-hash.ts';

const SOL_PROVIDER = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const SOL_PLATFORM = 'FeeWa11et1111111111111111111111111111111111';
const SUI_PROVIDER = '0x0f10c2b1a0e4c6fd0e3b2e1b0c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b91b1';
const SUI_PLATFORM = '0x62314d6e5c4b3a29180f0e0d0c0b0a09080706050403020100ffeeddccbb74ff';
const body = '{"city":"Oslo","days":3}';

const cases: { name: string; input: RequestHashInput; body?: string }[] = [
  {
    name: 'GET with a query string, one Solana option',
    input: {
      scheme: 'exact_split',
      method: 'GET',
      path: '/p/weather/v1/forecast?city=Oslo&days=3',
      bodySha256: EMPTY_BODY_SHA256,
      price: '10000',
      fee: '1000',
      accepts: [
        {
          chain: 'solana',
          network: 'mainnet',
          asset: 'USDC',
          splits: [
            { recipientType: 'provider', payTo: SOL_PROVIDER, amount: '10000' },
            { recipientType: 'platform', payTo: SOL_PLATFORM, amount: '1000' },
          ],
        },
      ],
      nonce: 'q3v9Jm2yXQ7pS0bT1cW8eA',
      expiresAt: '2026-11-22T12:05:00.000Z',
    },
  },
  {
    name: 'POST with a JSON body',
    body,
    input: {
      scheme: 'exact_split',
      method: 'POST',
      path: '/p/weather/v1/forecast',
      bodySha256: sha256Hex(body),
      price: '250000',
      fee: '25000',
      accepts: [
        {
          chain: 'sui',
          network: 'mainnet',
          asset: 'USDC',
          splits: [
            { recipientType: 'provider', payTo: SUI_PROVIDER, amount: '250000' },
            { recipientType: 'platform', payTo: SUI_PLATFORM, amount: '25000' },
          ],
        },
      ],
      nonce: 'Zr5mK1pQ0aXc8Tn2vB7yLw',
      expiresAt: '2026-11-22T12:10:00.000Z',
    },
  },
  {
    name: 'DELETE with an empty body',
    body: '',
    input: {
      scheme: 'exact_split',
      method: 'DELETE',
      path: '/p/notes/items/42',
      bodySha256: EMPTY_BODY_SHA256,
      price: '1',
      fee: '1',
      accepts: [
        {
          chain: 'solana',
          network: 'mainnet',
          asset: 'USDC',
          splits: [
            { recipientType: 'provider', payTo: SOL_PROVIDER, amount: '1' },
            { recipientType: 'platform', payTo: SOL_PLATFORM, amount: '1' },
          ],
        },
      ],
      nonce: 'bW9ja2VkLW5vbmNlLTAwMw',
      expiresAt: '2026-11-22T12:15:00.000Z',
    },
  },
  {
    name: 'free endpoint with a single platform split',
    input: {
      scheme: 'exact_split',
      method: 'GET',
      path: '/p/free/status',
      bodySha256: EMPTY_BODY_SHA256,
      price: '0',
      fee: '1000',
      accepts: [
        {
          chain: 'sui',
          network: 'mainnet',
          asset: 'USDC',
          splits: [{ recipientType: 'platform', payTo: SUI_PLATFORM, amount: '1000' }],
        },
      ],
      nonce: 'AAAAAAAAAAAAAAAAAAAAAA',
      expiresAt: '2026-11-22T12:20:00.000Z',
    },
  },
  {
    name: 'two accept options (Sui and Solana)',
    body,
    input: {
      scheme: 'exact_split',
      method: 'POST',
      path: '/p/weather/v1/forecast?units=metric',
      bodySha256: sha256Hex(body),
      price: '10000',
      fee: '1000',
      accepts: [
        {
          chain: 'sui',
          network: 'mainnet',
          asset: 'USDC',
          splits: [
            { recipientType: 'provider', payTo: SUI_PROVIDER, amount: '10000' },
            { recipientType: 'platform', payTo: SUI_PLATFORM, amount: '1000' },
          ],
        },
        {
          chain: 'solana',
          network: 'mainnet',
          asset: 'USDC',
          splits: [
            { recipientType: 'provider', payTo: SOL_PROVIDER, amount: '10000' },
            { recipientType: 'platform', payTo: SOL_PLATFORM, amount: '1000' },
          ],
        },
      ],
      nonce: 'tw0-0pt10ns-n0nce-xyz_',
      expiresAt: '2026-11-22T12:25:00.000Z',
    },
  },
  {
    name: 'inference (scheme exact), one platform split per chain',
    body: '{"model":"tollgate-dev-chat","messages":[{"role":"user","content":"hi"}],"max_tokens":64}',
    input: {
      scheme: 'exact',
      method: 'POST',
      path: '/v1/chat/completions',
      bodySha256: sha256Hex(
        '{"model":"tollgate-dev-chat","messages":[{"role":"user","content":"hi"}],"max_tokens":64}',
      ),
      price: '137',
      fee: '1000',
      accepts: [
        {
          chain: 'solana',
          network: 'mainnet',
          asset: 'USDC',
          splits: [{ recipientType: 'platform', payTo: SOL_PLATFORM, amount: '1137' }],
        },
      ],
      nonce: 'aW5mZXJlbmNlLW5vbmNlMQ',
      expiresAt: '2026-11-22T12:30:00.000Z',
    },
  },
];

const vectors = cases.map((c) => ({
  name: c.name,
  ...(c.body !== undefined ? { body: c.body } : {}),
  input: c.input,
  preimage: requestHashPreimage(c.input),
  requestHash: computeRequestHash(c.input),
}));
writeFileSync(
  new URL('./request-hash-vectors.json', import.meta.url),
  `${JSON.stringify(vectors, null, 2)}\n`,
);
console.log(`wrote ${vectors.length} vectors`);
