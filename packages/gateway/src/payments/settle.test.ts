import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyRing } from '../crypto/keys.ts';
import { createMetrics, type Metrics } from '../metrics.ts';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import type { BoundProof, BoundV2, ChainCheck, Inspection, ProofChecks } from './gate.ts';
import type { Quote } from './requirement.ts';
import { createRequirementTokens } from './requirement-token.ts';
import { type Admission, createSettlement, isDeliverable, type PaidRequest } from './settle.ts';

const quote: Quote = {
  scheme: 'exact_split',
  subject: 'ep:ep_1',
  resource: 'GET /p/demo/x',
  description: 'x',
  price: 10_000n,
  fee: 1_000n,
  options: [],
};
const facts = { method: 'GET', pathWithQuery: '/p/demo/x', bodySha256: 'e'.repeat(64) };

function bound(): BoundProof {
  const nonce = randomBytes(16).toString('base64url');
  return {
    proof: {
      x402Version: 1,
      scheme: 'exact_split',
      chain: 'solana',
      network: 'localnet',
      asset: 'USDC',
      payer: 'Payer',
      txHashOrDigest: `tx-${nonce}`,
      paymentRequirementId: 'token',
      nonce,
      requestHash: 'h'.repeat(64),
      expiresAt: '2030-01-01T00:00:00.000Z',
    },
    claims: {
      scheme: 'exact_split',
      subject: 'ep:ep_1',
      nonce,
      requestHash: 'h'.repeat(64),
      issuedAtMs: 0,
      expiresAtMs: 0,
      price: 10_000n,
      fee: 1_000n,
      options: [],
    },
    option: { chain: 'solana', network: 'localnet', assetId: 'mint', memo: 'm', splits: [] },
  };
}

let store: Store;
let metrics: Metrics;
let now: number;
let checked: BoundProof;
let chain: ChainCheck;
let v2: Inspection | { kind: 'bound'; bound: BoundV2 } | null = null;
const logged: string[] = [];

function settlement(leaseMs = 300, clock: () => number = () => now) {
  const checks: ProofChecks = {
    inspect: (): Inspection => ({ kind: 'bound', bound: checked }),
    inspectV2: () => (v2 ?? { kind: 'malformed', message: 'not used here' }) as never,
    verifyOnChain: async () => chain,
  };
  return createSettlement({
    checks,
    tokens: createRequirementTokens(keyRing('k'.repeat(40), null, 'requirement-token/v1')),
    redemptions: store.redemptions,
    metrics,
    now: clock,
    requirementTtlSec: 300,
    leaseMs,
    skewMs: 0,
    paidRetryAfterSec: 2,
    publicBaseUrl: 'http://gateway.test',
    log: {
      error: (_o, m) => void logged.push(m),
      warn: (_o, m) => void logged.push(m),
      info: (_o, m) => void logged.push(m),
    },
  });
}

const input = {
  header: 'x',
  facts,
  subject: 'ep:ep_1',
  quote: () => quote,
  servePaid: () => null,
};

function paidOf(a: Admission): PaidRequest {
  if (a.kind !== 'paid') throw new Error(`expected paid, got ${JSON.stringify(a)}`);
  return a.paid;
}

async function counter(step: string, outcome: string): Promise<number> {
  const m = await metrics.settlement.get();
  return m.values.find((v) => v.labels.step === step && v.labels.outcome === outcome)?.value ?? 0;
}

beforeEach(async () => {
  store = await openStore('sqlite::memory:');
  metrics = createMetrics({ defaults: false });
  now = Date.now();
  checked = bound();
  chain = { kind: 'verified' };
  v2 = null;
  logged.length = 0;
});
afterEach(async () => {
  await store.close();
});

describe('isDeliverable', () => {
  it('is 2xx, 3xx and 4xx except 408 and 429', () => {
    const yes = [200, 201, 204, 301, 304, 400, 401, 404, 409, 422];
    const no = [408, 429, 500, 502, 503, 504, 100];
    expect(yes.every(isDeliverable)).toBe(true);
    expect(no.some(isDeliverable)).toBe(false);
  });
});

describe('settlement', () => {
  it('renews the lease while a paid request is in flight, so a retry meanwhile is in progress', async () => {
    const s = settlement(300, Date.now);
    const paid = paidOf(await s.admit(input));
    await new Promise((r) => setTimeout(r, 700));
    expect(await s.admit(input)).toMatchObject({ kind: 'error', code: 'payment_in_progress' });
    await paid.deliver({ status: 200, headers: {}, body: new Uint8Array([1]) });
    expect(await s.admit(input)).toMatchObject({ kind: 'replay' });
  });

  it('counts a proof toward health only on its first failed attempt, and holds retries to the window', async () => {
    const s = settlement();
    const first = await paidOf(await s.admit(input)).fail('status_502');
    expect(first).toMatchObject({ retryAfterSec: 2, countsForHealth: true });
    expect(first.headers['retry-after']).toBe('2');
    expect(await s.admit(input)).toMatchObject({
      kind: 'error',
      code: 'rate_limited',
      extra: { reason: 'retry_budget', retryable: true },
    });
    now += 2000;
    const second = await paidOf(await s.admit(input)).fail('timeout');
    expect(second.countsForHealth).toBe(false);
    expect(await counter('fail', 'status_502')).toBe(1);
    expect(await counter('fail', 'timeout')).toBe(1);
  });

  it('gives an abandoned payment back at once, without spending the retry window', async () => {
    const s = settlement();
    await paidOf(await s.admit(input)).abandon('gateway_error');
    expect((await s.admit(input)).kind).toBe('paid');
    expect(await counter('abandon', 'gateway_error')).toBe(1);
  });

  it('answers a database failure while claiming with a retryable 503 and counts it', async () => {
    const s = settlement();
    store.redemptions.claim = async () => {
      throw new Error('db down');
    };
    expect(await s.admit(input)).toMatchObject({
      kind: 'error',
      code: 'service_unavailable',
      extra: { retryable: true },
    });
    expect(await counter('claim', 'db_error')).toBe(1);
  });

  it('tries a failing completion again, and counts and logs one that never lands', async () => {
    const s = settlement();
    const paid = paidOf(await s.admit(input));
    let calls = 0;
    const complete = store.redemptions.complete;
    store.redemptions.complete = async (...args) => {
      calls += 1;
      if (calls < 3) throw new Error('busy');
      return complete(...args);
    };
    await paid.deliver({ status: 200, headers: {}, body: new Uint8Array() });
    expect(calls).toBe(3);
    expect(await counter('deliver', 'ok')).toBe(1);

    checked = bound();
    const other = paidOf(await s.admit(input));
    store.redemptions.complete = async () => {
      throw new Error('gone');
    };
    await other.deliver({ status: 200, headers: {}, body: new Uint8Array() });
    expect(await counter('deliver', 'db_error')).toBe(1);
    expect(logged).toContain('could not store a delivered answer; it frees when its lease ends');
  });

  it('logs and counts a holder fenced off by a takeover instead of ignoring it', async () => {
    const s = settlement(300);
    const paid = paidOf(await s.admit(input));
    // Its renewals stop reaching the database (say, a network partition) and the lease lapses.
    store.redemptions.renew = async () => {
      throw new Error('unreachable');
    };
    now += 1000;
    const taker = paidOf(await s.admit(input));
    await paid.deliver({ status: 200, headers: {}, body: new Uint8Array() });
    expect(await counter('deliver', 'lease_lost')).toBe(1);
    expect(logged).toContain('paid request lost its lease before completing; answer sent but not stored');
    await taker.deliver({ status: 200, headers: {}, body: new Uint8Array([7]) });
    expect(await s.admit(input)).toMatchObject({ kind: 'replay', response: { body: new Uint8Array([7]) } });
  });

  it('serves a paid proof whatever the quote says, and refuses it only when the route cannot serve it', async () => {
    const s = settlement();
    const unhealthy = { ...input, quote: () => ({ code: 'endpoint_unavailable' as const, message: 'x' }) };
    expect((await s.admit(unhealthy)).kind).toBe('paid');
    checked = bound();
    const disabled = {
      ...input,
      servePaid: () => ({
        code: 'endpoint_unavailable' as const,
        message: 'off',
        extra: { reason: 'disabled' },
      }),
    };
    expect(await s.admit(disabled)).toMatchObject({
      kind: 'error',
      code: 'endpoint_unavailable',
      extra: { reason: 'disabled', retryable: true },
    });
  });

  it('answers a pending transaction and an unreachable chain as retryable, claiming nothing', async () => {
    const s = settlement();
    chain = { kind: 'pending', reason: 'not_found' };
    expect(await s.admit(input)).toMatchObject({ kind: 'error', code: 'payment_pending' });
    chain = { kind: 'unavailable' };
    expect(await s.admit(input)).toMatchObject({ kind: 'error', code: 'verification_unavailable' });
    const { proof } = checked;
    expect(await store.redemptions.byTx(proof.chain, proof.network, proof.txHashOrDigest)).toBeNull();
  });
});

describe('settlement of a v2 payment', () => {
  it('answers a failing v2 check as a retryable chain outage, logged and counted, never a 500', async () => {
    const s = settlement();
    const b = bound();
    const scheme = {
      chain: 'solana' as const,
      network: 'localnet',
      caip2: 'solana:test',
      extra: () => ({}),
      settle: async () => ({ ok: true as const, txId: 'v2tx' }),
      async check(): Promise<never> {
        throw new TypeError('a bug in the scheme');
      },
    };
    v2 = {
      kind: 'bound',
      bound: {
        claims: { ...b.claims, expiresAtMs: now + 60_000, v2: true },
        option: b.option,
        entry: {
          scheme: 'exact',
          network: 'solana:test',
          amount: '11000',
          asset: 'mint',
          payTo: 'Platform',
          maxTimeoutSeconds: 60,
          extra: { paymentRequirementId: 'token' },
        },
        scheme,
        payload: {},
      },
    };
    const admitted = await s.admit({ ...input, header: undefined, v2Header: 'sig' });
    expect(admitted).toMatchObject({ kind: 'error', code: 'verification_unavailable' });
    expect(logged).toContain('v2 payment check failed unexpectedly');
    const m = await metrics.payments.get();
    expect(m.values.find((v) => v.labels.outcome === 'unavailable')?.value).toBe(1);
  });

  it('answers a concurrent duplicate whose simulation failed because the first one settled as in progress, not 402', async () => {
    const s = settlement();
    const b = bound();
    const scheme = {
      chain: 'solana' as const,
      network: 'localnet',
      caip2: 'solana:test',
      extra: () => ({}),
      settle: async () => ({ ok: true as const, txId: 'v2tx' }),
      async check(_p: Record<string, unknown>, _e: unknown, opts?: { simulate?: boolean }) {
        if (opts?.simulate !== false) {
          // Meanwhile, the first send claimed the same payment.
          await store.redemptions.claim({
            chain: 'solana',
            network: 'localnet',
            txId: 'v2tx',
            nonce: b.claims.nonce,
            requestHash: b.claims.requestHash,
            requirementId: 'token',
            payer: 'Payer',
            meta: {},
            projectId: null,
            endpointId: null,
            amount: 0n,
            fee: 0n,
            nowMs: now,
            leaseMs: 30_000,
          });
          return { ok: false as const, reason: 'simulation_failed', message: 'already spent' };
        }
        return { ok: true as const, txId: 'v2tx', payer: 'Payer', handle: null };
      },
    };
    v2 = {
      kind: 'bound',
      bound: {
        claims: { ...b.claims, expiresAtMs: now + 60_000, v2: true },
        option: b.option,
        entry: {
          scheme: 'exact',
          network: 'solana:test',
          amount: '11000',
          asset: 'mint',
          payTo: 'Platform',
          maxTimeoutSeconds: 60,
          extra: { paymentRequirementId: 'token' },
        },
        scheme,
        payload: {},
      },
    };
    const admitted = await s.admit({ ...input, header: undefined, v2Header: 'sig' });
    expect(admitted).toMatchObject({ kind: 'error', code: 'payment_in_progress' });
  });
});
