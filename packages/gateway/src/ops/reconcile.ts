/**
 * Reconciliation (issue 13; docs/operations-reconcile.md): re-reads from the chain the
 * transaction of every redemption created in a time range, through the chains' own
 * TransactionSource (the fetch and normalizer that verify payments), and compares it leg
 * by leg with the ledger (reconcile-legs.ts). Payouts that recorded a transaction in the
 * range are checked against their payables the same way.
 *
 * Lookups go through a small pool (`concurrency` at once, at most one start every
 * `minIntervalMs`) so a long range never floods an RPC provider; a lookup the chain
 * cannot answer is retried twice, then reported as unchecked (never as a mismatch).
 */
import { ChainUnavailableError, type ObservedTransaction, type TransactionSource } from '../chains/chain.ts';
import type { Chain, LedgerRedemption, Payout, Store } from '../store/store.ts';
import {
  comparePayable,
  compareTransaction,
  type Expectation,
  expectationOf,
  type Finding,
  type Leg,
} from './reconcile-legs.ts';

export interface ReconcileInput {
  store: Store;
  /** The configured chains' sources; a chain without one is reported unchecked. */
  sources: Partial<Record<Chain, TransactionSource>>;
  /** The asset paid on each chain (Solana: USDC mint; Sui: USDC coin type). */
  assets: Record<Chain, string>;
  /** The platform's address per chain (v2 payments without a platform split, payouts' payer). */
  platform: Partial<Record<Chain, string | null>>;
  fromMs: number;
  toMs: number;
  chain?: Chain;
  /** Lookups in flight at once. Default 4. */
  concurrency?: number;
  /** At least this long between two lookups starting. Default 50 ms (at most 20 a second). */
  minIntervalMs?: number;
  /** Back-off before the retries of a lookup the chain could not answer. Default 500 ms, 1500 ms. */
  retryDelaysMs?: readonly number[];
  /** Rows read from the database per page. Default 200. */
  pageSize?: number;
}

export interface ChainTally {
  /** Redemptions and payouts in range. */
  checked: number;
  ok: number;
  mismatches: number;
  /** Could not be checked: chain unreachable, no RPC configured, another network. */
  unchecked: number;
  /** v2 payments never sent (not delivered and unknown to the chain): nothing to reconcile. */
  notSent: number;
}

export interface Mismatch {
  kind: 'redemption' | 'payout';
  id: string;
  chain: Chain;
  network: string;
  tx: string;
  findings: Finding[];
}

export interface Unchecked {
  kind: 'redemption' | 'payout';
  id: string;
  chain: Chain;
  tx: string;
  reason: string;
}

export interface ReconcileReport {
  fromMs: number;
  toMs: number;
  /** True only when everything in range was checked and matched. */
  ok: boolean;
  chains: Record<Chain, ChainTally>;
  mismatches: Mismatch[];
  unchecked: Unchecked[];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs `tasks` with at most `concurrency` at once and at least `minIntervalMs` between starts. */
async function pooled(tasks: (() => Promise<void>)[], concurrency: number, minIntervalMs: number) {
  let next = 0;
  let nextStartMs = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next++]!;
      const now = Date.now();
      const startAt = Math.max(now, nextStartMs);
      nextStartMs = startAt + minIntervalMs;
      if (startAt > now) await sleep(startAt - now);
      await task();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, tasks.length)) }, worker));
}

export async function runReconcile(input: ReconcileInput): Promise<ReconcileReport> {
  const tally = (): ChainTally => ({ checked: 0, ok: 0, mismatches: 0, unchecked: 0, notSent: 0 });
  const report: ReconcileReport = {
    fromMs: input.fromMs,
    toMs: input.toMs,
    ok: true,
    chains: { solana: tally(), sui: tally() },
    mismatches: [],
    unchecked: [],
  };
  const retryDelays = input.retryDelaysMs ?? [500, 1500];
  const concurrency = input.concurrency ?? 4;
  const minIntervalMs = input.minIntervalMs ?? 50;

  /** The chain's answer, or the reason it could not be had. */
  async function lookUp(source: TransactionSource, tx: string): Promise<ObservedTransaction | null | Error> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await source.fetch(tx);
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e));
        if (!(e instanceof ChainUnavailableError) || attempt >= retryDelays.length) return err;
        await sleep(retryDelays[attempt]!);
      }
    }
  }

  const record = (
    kind: Mismatch['kind'],
    id: string,
    chain: Chain,
    network: string,
    tx: string,
    findings: Finding[],
  ) => {
    const t = report.chains[chain];
    if (findings.length === 0) t.ok++;
    else {
      t.mismatches++;
      report.mismatches.push({ kind, id, chain, network, tx, findings });
    }
  };
  const unchecked = (kind: Unchecked['kind'], id: string, chain: Chain, tx: string, reason: string) => {
    report.chains[chain].unchecked++;
    report.unchecked.push({ kind, id, chain, tx, reason });
  };
  const sourceFor = (chain: Chain, network: string): TransactionSource | string => {
    const source = input.sources[chain];
    if (!source) return `no ${chain} RPC is configured`;
    if (source.network !== network) return `recorded on ${network}; this gateway reads ${source.network}`;
    return source;
  };

  async function checkRedemption(row: LedgerRedemption): Promise<void> {
    report.chains[row.chain].checked++;
    const { expectation, findings } = expectationOf(row, input.platform[row.chain] ?? null);
    const source = sourceFor(row.chain, row.network);
    if (typeof source === 'string') {
      if (findings.length > 0) record('redemption', row.id, row.chain, row.network, row.txId, findings);
      else unchecked('redemption', row.id, row.chain, row.txId, source);
      return;
    }
    if (!expectation) return record('redemption', row.id, row.chain, row.network, row.txId, findings);
    const tx = await lookUp(source, row.txId);
    if (tx instanceof Error) {
      if (findings.length > 0) record('redemption', row.id, row.chain, row.network, row.txId, findings);
      else unchecked('redemption', row.id, row.chain, row.txId, tx.message);
      return;
    }
    if (tx !== null && !tx.final && findings.length === 0) {
      return unchecked(
        'redemption',
        row.id,
        row.chain,
        row.txId,
        'not final on the chain yet; run again later',
      );
    }
    // A v2 payment is sent only when its answer is ready: an undelivered one may never have been.
    if (tx === null && expectation.x402Version === 2 && row.state !== 'delivered' && findings.length === 0) {
      report.chains[row.chain].notSent++;
      return;
    }
    findings.push(
      ...compareTransaction(expectation, tx, input.assets[row.chain], (a, b) => source.sameAsset(a, b)),
    );
    if (expectation.x402Version === 2 && tx?.success) {
      findings.push(...comparePayable(expectation, row, await input.store.payables.byRedemption(row.id)));
    }
    record('redemption', row.id, row.chain, row.network, row.txId, findings);
  }

  async function checkPayout(p: Payout): Promise<void> {
    const tx = p.tx!;
    report.chains[p.chain].checked++;
    if (p.state === 'open' || p.state === 'sent') {
      return unchecked(
        'payout',
        p.id,
        p.chain,
        tx,
        `payout ${p.state}: not finished, run the payout command`,
      );
    }
    const source = sourceFor(p.chain, p.network);
    if (typeof source === 'string') return unchecked('payout', p.id, p.chain, tx, source);
    const observed = await lookUp(source, tx);
    if (observed instanceof Error) return unchecked('payout', p.id, p.chain, tx, observed.message);
    if (observed !== null && !observed.final) {
      return unchecked('payout', p.id, p.chain, tx, 'not final on the chain yet; run again later');
    }
    if (p.state === 'failed') {
      const landed = observed?.success === true;
      const findings: Finding[] = landed
        ? [
            {
              code: 'payout_failed_but_landed',
              message: 'marked failed (payables owed again), but the transaction succeeded',
            },
          ]
        : [];
      return record('payout', p.id, p.chain, p.network, tx, findings);
    }
    const by = new Map<string, bigint>();
    for (const payable of await input.store.payables.byPayout(p.id)) {
      by.set(payable.recipient, (by.get(payable.recipient) ?? 0n) + payable.amount);
    }
    const legs: Leg[] = [...by].map(([recipient, amount]) => ({ recipient, amount }));
    const expectation: Expectation = {
      txId: tx,
      payer: input.platform[p.chain] ?? null,
      memo: null,
      legs,
      gross: legs.reduce((s, l) => s + l.amount, 0n),
      payable: null,
      x402Version: 1,
    };
    const findings = compareTransaction(expectation, observed, input.assets[p.chain], (a, b) =>
      source.sameAsset(a, b),
    );
    record('payout', p.id, p.chain, p.network, tx, findings);
  }

  const pageSize = input.pageSize ?? 200;
  let after: { createdAtMs: number; id: string } | undefined;
  for (;;) {
    const page = await input.store.ledger.redemptions({
      fromMs: input.fromMs,
      toMs: input.toMs,
      ...(input.chain ? { chain: input.chain } : {}),
      ...(after ? { after } : {}),
      limit: pageSize,
    });
    await pooled(
      page.map((row) => () => checkRedemption(row)),
      concurrency,
      minIntervalMs,
    );
    if (page.length < pageSize) break;
    const last = page.at(-1)!;
    after = { createdAtMs: last.createdAtMs, id: last.id };
  }
  const payouts = await input.store.ledger.payouts({
    fromMs: input.fromMs,
    toMs: input.toMs,
    ...(input.chain ? { chain: input.chain } : {}),
  });
  await pooled(
    payouts.map((p) => () => checkPayout(p)),
    concurrency,
    minIntervalMs,
  );

  report.ok = report.mismatches.length === 0 && report.unchecked.length === 0;
  return report;
}
