/**
 * Paid ⇒ delivered exactly once, or still retryable (DESIGN §4.5, issue 10): a seeded
 * soak of a few hundred paid requests, on both chains, through two gateway processes
 * sharing one PostgreSQL schema, while
 * - each request's upstream follows its own fault script (in its query: 5xx, 408, 429,
 *   hangs past the endpoint deadline, resets, cut and stalled bodies, slow streams,
 *   answers slower than the lease), transient for most, persistent for some;
 * - clients abort at random points (before sending, before the answer, mid-body), and
 *   now and then a twin sends the same proof at once to the other gateway;
 * - a gateway process is SIGKILLed and restarted, several times, mid-run.
 * Every payer retries its proof (same X-PAYMENT, honouring Retry-After) until it is
 * delivered or, when its fault persists, has failed a few times. Then:
 * 1. every payment is delivered exactly once (one live answer, the same bytes replayed,
 *    the stored answer) or still retryable (a retryable answer, never 402 or 500);
 * 2. no proof ran the upstream successfully twice, unless a SIGKILL explains it: the
 *    gateway that made the unstored run died after it ended, having logged nothing
 *    about the payment (see CRASH_EXCUSE_MS);
 * 3. the ledger equals the chains: per recipient, the splits of the redemption rows sum
 *    to its USDC balance change; every payer's change is what it paid; every on-chain
 *    payment has exactly one redemption row; consecutive upstream calls of one proof
 *    respect the retry window.
 * The seed is printed; SOAK_SEED=<n> replays a run's plan (the faults, clients, start
 * times and kills; not the exact interleaving). SOAK_PAYMENTS changes its size;
 * SOAK_VERBOSE=1 adds the timelines of crash re-runs and each gateway's slowest /healthz.
 */
import { randomBytes } from 'node:crypto';
import type { PaymentWallet } from '@tollgate/client';
import { solanaWallet, suiWallet } from '@tollgate/client';
import { parseAmount } from '@tollgate/protocol';
import { newSolanaKey, newSuiKey } from '@tollgate/sandbox';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishProject } from '../../src/marketplace/publish.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { type Chains, startChains } from '../support/gateway-harness.ts';
import { startTestUpstream, type TestUpstream } from '../support/test-upstream.ts';
import { challenge, payFor } from '../support/x402.ts';
import {
  type Attempt,
  type AttemptKind,
  ENDPOINTS,
  executionsOf,
  GatewayPool,
  type PaidRequest,
  type PaymentOutcome,
  planSoak,
  probeSettled,
  retryWindowBreaches,
  runPayer,
  type SoakPlan,
  seededRng,
  sleep,
  soakSeed,
} from './paid-faults-soak.ts';

const PG = process.env['DATABASE_URL_TEST'];
const SEED = soakSeed();
const PAYMENTS = Number(process.env['SOAK_PAYMENTS'] ?? 240);
const PAYERS_PER_CHAIN = 6;
/** First attempts are spread over this window; the kills fall inside it. */
const SPREAD_MS = 18_000;
const KILLS = 3;
const LEASE_MS = 2_000;
const RETRY_AFTER_SEC = 1;

interface RedemptionRow {
  chain: string;
  network: string;
  tx_id: string;
  state: string;
  meta: string;
  failures: number;
  response_status: number | null;
  response_body: Buffer | null;
}

describe.skipIf(!PG)(
  'paid requests under random upstream faults, client aborts and gateway SIGKILLs (PostgreSQL)',
  () => {
    const schema = `tg_soak_${randomBytes(4).toString('hex')}`;
    let chains: Chains;
    let upstream: TestUpstream;
    let store: Store;
    let pool: GatewayPool | undefined;
    let slug: string;
    const platform = { solana: newSolanaKey().address, sui: newSuiKey().address };
    const provider = { solana: newSolanaKey().address, sui: newSuiKey().address };
    const payers: { solana: PaymentWallet[]; sui: PaymentWallet[] } = { solana: [], sui: [] };
    let chaosStartAt = 0;
    /** Balances before anything was paid. */
    let before: Map<string, bigint>;

    beforeAll(async () => {
      // Production config on mainnet identities, as exactly-once.pg.test.ts runs it.
      chains = await startChains({ as: 'mainnet' });
      upstream = await startTestUpstream();
      upstream.mode = 'scripted';
      store = await openStore(PG!, { schema });
      slug = `soak-${randomBytes(3).toString('hex')}`;
      await publishProject(store, {
        slug,
        name: 'soak',
        owner: { chain: 'solana', address: provider.solana },
        api: { name: 'scripted upstream', baseUrl: upstream.url },
        endpoints: Object.values(ENDPOINTS).map((e) => ({
          method: e.method,
          path: e.name,
          price: e.price,
          timeoutMs: e.timeoutMs,
        })),
        rails: [
          { chain: 'solana', network: 'mainnet', providerRecipient: provider.solana },
          { chain: 'sui', network: 'mainnet', providerRecipient: provider.sui },
        ],
      });
      for (let i = 0; i < PAYERS_PER_CHAIN; i++) {
        const s = newSolanaKey();
        await chains.solana.faucet(s.address, parseAmount('20', 6));
        payers.solana.push(solanaWallet({ secretKey: s.secretKey, rpcUrl: chains.solana.url }));
        const u = newSuiKey();
        chains.sui.faucet(u.address, parseAmount('20', 6));
        payers.sui.push(suiWallet({ secretKey: u.secretKey, rpcUrl: chains.sui.url }));
      }
      const sep = PG!.includes('?') ? '&' : '?';
      pool = await GatewayPool.start({
        TOLLGATE_NETWORK: 'mainnet',
        TOLLGATE_SECRET: randomBytes(32).toString('hex'),
        DATABASE_URL: `${PG}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
        PUBLIC_BASE_URL: 'http://127.0.0.1:1',
        SOLANA_RPC_URL: chains.solana.url,
        PLATFORM_SOLANA_ADDRESS: platform.solana,
        SUI_RPC_URL: chains.sui.url,
        PLATFORM_SUI_ADDRESS: platform.sui,
        TOLLGATE_ALLOW_PRIVATE_ORIGINS: '1',
        TOLLGATE_HEALTH_INTERVAL_MS: '0',
        TOLLGATE_LEASE_MS: String(LEASE_MS),
        TOLLGATE_PAID_RETRY_AFTER_SEC: String(RETRY_AFTER_SEC),
        PORT: '0',
        LOG_LEVEL: 'warn',
      });
    }, 60_000);

    afterAll(async () => {
      await pool?.stopAll();
      await store?.close();
      await upstream?.close();
      await chains?.close();
      if (PG) {
        const client = new pg.Client({ connectionString: PG });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      }
    });

    /** Balances of every recipient and payer, by chain and address. */
    async function balances(): Promise<Map<string, bigint>> {
      const out = new Map<string, bigint>();
      for (const chain of ['solana', 'sui'] as const) {
        const who = [provider[chain], platform[chain], ...payers[chain].map((w) => w.address)];
        for (const a of who) out.set(`${chain}:${a}`, await chains[chain].usdcBalance(a));
      }
      return out;
    }

    /** Quotes every planned request (before any fault: a quote never reaches the upstream) and pays it. */
    async function payAll(plan: SoakPlan): Promise<PaidRequest[]> {
      const gw = pool!.first();
      const paid: PaidRequest[] = new Array(plan.payments.length);
      const queues = { solana: [] as number[], sui: [] as number[] };
      for (const p of plan.payments) queues[p.chain].push(p.n);
      await Promise.all(
        (['solana', 'sui'] as const).flatMap((chain) =>
          payers[chain].map(async (wallet, w) => {
            for (let i = w; i < queues[chain].length; i += payers[chain].length) {
              const p = plan.payments[queues[chain][i]!]!;
              const path = `/p/${slug}/${p.target}`;
              const init: RequestInit =
                p.body === null
                  ? {}
                  : { method: 'POST', body: p.body, headers: { 'content-type': 'application/json' } };
              const { requirement } = await challenge(`${gw.url}${path}`, init);
              const { header, tx, option } = await payFor(wallet, requirement);
              const total = option.splits.reduce((s, x) => s + parseAmount(x.amount, option.decimals), 0n);
              paid[p.n] = { plan: p, path, header, tx, payer: wallet.address, total };
            }
          }),
        ),
      );
      return paid;
    }

    it('delivers every payment exactly once or keeps it retryable, and the ledger equals the chains', async () => {
      const t0 = Date.now();
      const runId = SEED.toString(36);
      const plan = planSoak(seededRng(SEED), {
        payments: PAYMENTS,
        spreadMs: SPREAD_MS,
        kills: KILLS,
        runId,
      });
      console.log(
        `[paid-faults soak] seed ${SEED} (replay with SOAK_SEED=${SEED}), ${PAYMENTS} payments, ` +
          `${plan.payments.filter((p) => p.persistent).length} with a persistent fault, ${KILLS} SIGKILLs`,
      );
      before = await balances();
      const paid = await payAll(plan);
      const tPaid = Date.now();

      // Chaos: all payers run while gateways are killed and restarted.
      const chaosStart = Date.now() + 100;
      chaosStartAt = chaosStart;
      const kills: string[] = [];
      const monkey = (async () => {
        for (const k of plan.kills) {
          await sleep(chaosStart + k.atMs - Date.now());
          const r = await pool!.kill(k.slot);
          if (!r) continue;
          kills.push(`${r.victim.name} at +${r.victim.killedAt! - chaosStart} ms (${r.inFlight} in flight)`);
          await sleep(k.downMs);
          await pool!.restart(k.slot, k.slot === 0 ? 'A' : 'B');
        }
      })();
      // SOAK_VERBOSE: how long each gateway takes to answer /healthz through the run.
      const slowest = new Map<string, { ms: number; at: number }>();
      let sampling = process.env['SOAK_VERBOSE'] !== undefined;
      const sampler = (async () => {
        while (sampling) {
          await Promise.all(
            pool!.all
              .filter((g) => g.killedAt === null)
              .map(async (g) => {
                const t = Date.now();
                await fetch(`${g.url}/healthz`, { signal: AbortSignal.timeout(10_000) }).catch(() => null);
                const ms = Date.now() - t;
                if (g.killedAt === null && ms > (slowest.get(g.name)?.ms ?? -1)) {
                  slowest.set(g.name, { ms, at: t - chaosStart });
                }
              }),
          );
          await sleep(200);
        }
      })();
      const outcomes = await Promise.all(
        paid.map((x) =>
          runPayer(pool!, x, { chaosStart, persistentFailures: 3, settleWithinMs: 60_000, twinChance: 0.3 }),
        ),
      );
      await monkey;
      sampling = false;
      await sampler;
      if (slowest.size > 0) {
        console.log(
          `[paid-faults soak] slowest /healthz: ${[...slowest].map(([g, x]) => `${g} ${x.ms} ms at +${x.at}`).join(', ')}`,
        );
      }
      const tSettled = Date.now();

      // Every settled proof once more, with a plain client and every gateway up.
      const probeRng = seededRng(SEED ^ 0x5eed);
      const probes: Attempt[] = [];
      for (let i = 0; i < outcomes.length; i += 40) {
        const batch = outcomes.slice(i, i + 40);
        probes.push(...(await Promise.all(batch.map((o) => probeSettled(pool!, o.paid, probeRng)))));
      }

      const upstreamCheck = checkUpstream(outcomes);
      const violations = [
        ...checkOutcomes(outcomes, probes),
        ...(await checkLedger(outcomes)),
        ...upstreamCheck.violations,
      ];

      // The run, summed up.
      const kinds = new Map<AttemptKind, number>();
      for (const o of outcomes) for (const a of o.attempts) kinds.set(a.kind, (kinds.get(a.kind) ?? 0) + 1);
      const gatewayErrors = pool!.all.flatMap((g) =>
        g.errors.map((e) => explainLogLine(g.name, e, outcomes, chaosStart)),
      );
      console.log(
        [
          `[paid-faults soak] seed ${SEED}: paid in ${tPaid - t0} ms, settled in ${tSettled - chaosStart} ms, ` +
            `total ${Date.now() - t0} ms`,
          `  delivered ${outcomes.filter((o) => o.deliveredBody !== null).length}, ` +
            `persistent fault (still retryable) ${outcomes.filter((o) => o.paid.plan.persistent).length}, ` +
            `attempts ${[...kinds].map(([k, n]) => `${k}=${n}`).join(' ')}, upstream calls ${upstream.answers.length}`,
          `  kills: ${kills.join('; ')}`,
          ...pool!.all
            .filter((g) => g.killedAt !== null)
            .map((g) => {
              const open = outcomes.flatMap((o) =>
                o.attempts.filter(
                  (a) => a.gateway === g.name && a.startedAt <= g.killedAt! && a.endedAt >= g.killedAt!,
                ),
              );
              const oldest = Math.max(0, ...open.map((a) => g.killedAt! - a.startedAt));
              return `    ${g.name}: ${open.length} attempts open at the kill, the oldest sent ${oldest} ms before`;
            }),
          `  successful upstream re-runs a kill explains: ${upstreamCheck.crashReruns.length}; gateway error log lines: ${gatewayErrors.length}`,
          ...upstreamCheck.crashReruns.map((r) => `    ${r}`),
          ...gatewayErrors.slice(0, 10).map((e) => `    ${e}`),
        ].join('\n'),
      );
      expect(kills, 'every planned kill happened').toHaveLength(KILLS);
      expect(violations, `seed ${SEED} (replay with SOAK_SEED=${SEED})`).toEqual([]);
    }, 150_000);

    /** A gateway's error log line, with the timeline of the payment it names (times from the chaos start). */
    function explainLogLine(gateway: string, line: string, outcomes: PaymentOutcome[], t0: number): string {
      let entry: {
        time?: number;
        msg?: string;
        tx?: string;
        attempt?: number;
        reqId?: string;
        err?: { message?: string };
      };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return `${gateway} ${line.slice(0, 300)}`;
      }
      // By the transaction it names, or by the request id the gateway forwarded upstream.
      const forwarded = upstream.received.find(
        (r) => entry.reqId && r.headers['x-request-id'] === entry.reqId,
      );
      const o = outcomes.find(
        (x) => x.paid.tx === entry.tx || (forwarded && forwarded.url === `/${x.paid.plan.target}`),
      );
      const head = `${gateway} +${(entry.time ?? 0) - t0} ms "${entry.msg}" attempt ${entry.attempt ?? '?'}`;
      if (!o) return `${head}\n      ${line.slice(0, 2_000)}`;
      const detail = entry.err?.message ? ` (${entry.err.message})` : '';
      return `${head}${detail}\n${timeline(o, t0)}`;
    }

    /** What the upstream and the payer saw of one payment (times from the chaos start). */
    function timeline(o: PaymentOutcome, t0: number): string {
      const p = o.paid.plan;
      const calls = upstream.answers
        .filter((a) => a.url === `/${p.target}`)
        .map(
          (a) =>
            `call ${a.call} ${a.fault} via ${pool!.incarnationOf(a)?.name ?? a.via} +${a.startedAt - t0}..+${a.endedAt - t0} ${a.status}${a.complete ? '' : ' (incomplete)'}`,
        );
      const sends = o.attempts.map(
        (a) =>
          `${a.behaviour} via ${a.gateway} +${a.startedAt - t0}..+${a.endedAt - t0} ${a.kind} ${a.status ?? ''} ${a.code ?? ''}`,
      );
      return [
        `      payment #${p.n} ${p.chain} ${p.endpoint.name} [${p.faults.join(',')}] tx ${o.paid.tx.slice(0, 12)}…`,
        ...calls.map((c) => `      upstream ${c}`),
        ...sends.map((c) => `      client ${c}`),
      ].join('\n');
    }

    /** 1. Delivered exactly once, or still retryable; never 402 or 500. */
    function checkOutcomes(outcomes: PaymentOutcome[], probes: Attempt[]): string[] {
      const v: string[] = [];
      outcomes.forEach((o, i) => {
        const p = o.paid.plan;
        const tag = `#${p.n} ${p.chain} ${p.endpoint.name} [${p.faults.join(',')}] first=${p.first}`;
        for (const problem of o.problems) v.push(`${tag}: ${problem}`);
        const probe = probes[i]!;
        const delivered = o.attempts.filter((a) => a.kind === 'delivered');
        if (p.persistent) {
          if (delivered.length > 0) v.push(`${tag}: a persistent fault was delivered`);
          // A streamed answer whose upstream fails after the headers ends as a cut 200: the
          // gateway cannot say "retryable" then, but the row must still be (checked below).
          if (probe.kind !== 'upstream_failed' && probe.kind !== 'busy' && probe.kind !== 'cut') {
            v.push(`${tag}: still-retryable proof got ${probe.kind} ${probe.status} ${probe.detail ?? ''}`);
          }
          return;
        }
        if (o.deliveredBody === null) {
          if (o.problems.length === 0) v.push(`${tag}: never delivered`);
          return;
        }
        if (probe.kind !== 'delivered' || !probe.replay || probe.body !== o.deliveredBody) {
          v.push(`${tag}: the settled proof does not replay its answer: ${probe.kind} ${probe.status}`);
        }
        const live = [...delivered, probe].filter((a) => a.kind === 'delivered' && !a.replay);
        if (live.length > 1) v.push(`${tag}: ${live.length} live (not replayed) answers`);
        for (const a of delivered) {
          if (a.body !== o.deliveredBody) v.push(`${tag}: two different delivered answers`);
        }
      });
      return v;
    }

    /** 3. The ledger equals the chains, and each on-chain payment has exactly one redemption. */
    async function checkLedger(outcomes: PaymentOutcome[]): Promise<string[]> {
      const v: string[] = [];
      const client = new pg.Client({ connectionString: PG });
      await client.connect();
      let rows: RedemptionRow[];
      try {
        rows = (
          await client.query<RedemptionRow>(
            `SELECT chain, network, tx_id, state, meta, failures, response_status, response_body
               FROM ${schema}.redemptions`,
          )
        ).rows;
      } finally {
        await client.end();
      }
      const byTx = new Map<string, RedemptionRow[]>();
      for (const r of rows)
        byTx.set(`${r.chain}:${r.tx_id}`, [...(byTx.get(`${r.chain}:${r.tx_id}`) ?? []), r]);
      if (rows.length !== outcomes.length) {
        v.push(`${rows.length} redemption rows for ${outcomes.length} on-chain payments`);
      }
      for (const o of outcomes) {
        const p = o.paid.plan;
        const tag = `#${p.n} ${p.chain} [${p.faults.join(',')}]`;
        const mine = byTx.get(`${p.chain}:${o.paid.tx}`) ?? [];
        if (mine.length !== 1) {
          v.push(`${tag}: ${mine.length} redemption rows for its transaction`);
          continue;
        }
        const r = mine[0]!;
        if (r.network !== 'mainnet') v.push(`${tag}: redeemed on network ${r.network}`);
        if (p.persistent) {
          if (r.state !== 'retryable') v.push(`${tag}: persistent fault left the row ${r.state}`);
          else if (r.failures < 1) v.push(`${tag}: retryable row counts no failure`);
        } else if (o.deliveredBody !== null) {
          if (r.state !== 'delivered') v.push(`${tag}: delivered to the payer, but the row is ${r.state}`);
          else if (r.response_body?.toString('utf8') !== o.deliveredBody) {
            v.push(`${tag}: the stored answer is not the one the payer got`);
          }
        }
      }

      // Per recipient: the redemptions' splits equal the balance change; per payer: what it paid.
      const after = await balances();
      const owed = new Map<string, bigint>();
      for (const r of rows) {
        const meta = JSON.parse(r.meta) as { splits: { payTo: string; amount: string }[] };
        for (const s of meta.splits) {
          const key = `${r.chain}:${s.payTo}`;
          owed.set(key, (owed.get(key) ?? 0n) + BigInt(s.amount));
        }
      }
      const recipients = (['solana', 'sui'] as const).flatMap((c) => [
        `${c}:${provider[c]}`,
        `${c}:${platform[c]}`,
      ]);
      for (const key of owed.keys()) {
        if (!recipients.includes(key)) v.push(`splits name an unknown recipient ${key}`);
      }
      for (const key of recipients) {
        const delta = after.get(key)! - before.get(key)!;
        const sum = owed.get(key) ?? 0n;
        if (delta !== sum) v.push(`recipient ${key}: ledger says ${sum}, the chain moved ${delta}`);
      }
      const paidBy = new Map<string, bigint>();
      for (const o of outcomes) {
        const key = `${o.paid.plan.chain}:${o.paid.payer}`;
        paidBy.set(key, (paidBy.get(key) ?? 0n) + o.paid.total);
      }
      for (const [key, total] of paidBy) {
        const delta = before.get(key)! - after.get(key)!;
        if (delta !== total) v.push(`payer ${key}: paid ${total}, the chain moved ${delta}`);
      }
      return v;
    }

    /** 2. No proof ran the upstream successfully twice (bar a kill), and retries keep their window. */
    function checkUpstream(outcomes: PaymentOutcome[]): { violations: string[]; crashReruns: string[] } {
      const v: string[] = [];
      const crashReruns: string[] = [];
      for (const o of outcomes) {
        const p = o.paid.plan;
        const tag = `#${p.n} ${p.chain} [${p.faults.join(',')}]`;
        const { successes, crashed } = executionsOf(pool!, upstream.answers, o.paid);
        if (p.persistent) {
          if (successes.length > 0) v.push(`${tag}: ${successes.length} successful runs of a failing script`);
          continue;
        }
        const stored = o.deliveredBody ? Number(/call=(\d+)/.exec(o.deliveredBody)?.[1]) : null;
        if (stored !== null && !successes.some((a) => a.call === stored)) {
          v.push(`${tag}: the delivered answer (call ${stored}) is not a complete upstream run`);
        }
        const reruns = successes.filter((a) => a.call !== stored);
        for (const a of reruns.filter((x) => crashed.includes(x))) {
          const g = pool!.incarnationOf(a)!;
          crashReruns.push(
            `#${p.n} call ${a.call} (${a.fault}) by ${g.name} ended ${g.killedAt! - a.endedAt} ms before its SIGKILL; delivered call ${stored}`,
          );
          if (process.env['SOAK_VERBOSE']) crashReruns.push(timeline(o, chaosStartAt));
        }
        const unexplained = reruns.filter((a) => !crashed.includes(a));
        if (unexplained.length > 0) {
          // Which incarnation made each run, and how its end stood to that one's kill: what
          // a reader needs to tell a takeover from a kill the excuse did not cover.
          const runOf = (a: (typeof successes)[number]) => {
            const g = pool!.incarnationOf(a);
            const kill =
              g?.killedAt == null
                ? 'not killed'
                : `ended ${g.killedAt - a.endedAt} ms before its SIGKILL${g.errors.some((e) => e.includes(o.paid.tx)) ? ', logged an error for it' : ''}`;
            return `${a.call} via ${a.via} (${g?.name ?? 'unknown incarnation'}, +${a.startedAt - chaosStartAt}..+${a.endedAt - chaosStartAt}, ${kill})`;
          };
          v.push(
            `${tag}: ${successes.length} successful upstream runs (calls ${successes.map(runOf).join(', ')}), delivered call ${stored}`,
          );
          if (process.env['SOAK_VERBOSE']) v.push(timeline(o, chaosStartAt));
        }
        for (const b of retryWindowBreaches(upstream.answers, p, (RETRY_AFTER_SEC * 1000) / 2)) {
          v.push(`${tag}: retry window: ${b}`);
        }
      }
      return { violations: v, crashReruns };
    }
  },
);
