/**
 * The operator's payout (DESIGN §4.12, issue 11; docs/operations-payouts.md): pays
 * providers what stock x402 v2 payers paid the platform for them, in batched
 * on-chain transfers from the platform wallet, exactly once.
 *
 * Per batch: take the payout lock (one unfinished payout per chain and network,
 * leased and fenced), assign the recipients' pending payables to it ('paying'),
 * sign, record the signed transaction ('sent') BEFORE broadcasting it, broadcast,
 * wait until it landed or cannot land, then settle ('paid') or give the rows back
 * ('failed'). A run that finds an unfinished payout whose lease lapsed (a crash)
 * resolves it first from the recorded transaction, re-sending the same bytes if it
 * may still land; it never signs a second transaction for the same rows while the
 * first could still land.
 */
import { formatAmount, USDC_DECIMALS } from '@tollgate/protocol';
import type { Payout, PayoutHold, RecipientDue, Store } from '../store/store.ts';
import type { PayoutChain, PayoutTxStatus, SignedPayout } from './payout-chain.ts';
import {
  awaitOutcome,
  errorMessage as message,
  networkMismatch,
  type OutcomeWait,
  recheckRecorded,
  type TransferTiming,
  transferTiming,
} from './transfer-outcome.ts';

export interface PayoutOptions extends TransferTiming {
  store: Store;
  chain: PayoutChain;
  /** The gateway's network name in payables (`localnet` in sandbox mode, `mainnet`). */
  network: string;
  /** Plan only: read, check, print; write and send nothing. */
  dryRun?: boolean;
  /** Pay at most this many recipients in this run (oldest debt first). */
  maxRecipients?: number;
  /** Tests only: stop as if the process died at this step. */
  crashAt?: CrashPoint;
}

export type CrashPoint = 'after_assign' | 'after_record' | 'after_send';

/** Thrown by the `crashAt` hook: nothing after that step ran. */
export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
}

export type LineState = 'planned' | 'paid' | 'failed' | 'unresolved' | 'skipped';

export interface PayoutLine {
  recipient: string;
  amount: bigint;
  /** Payables in this amount. */
  count: number;
  payoutId: string | null;
  tx: string | null;
  state: LineState;
  /** Resolved from an earlier, interrupted run. */
  recovered: boolean;
  reason?: string;
}

export interface PayoutReport {
  chain: 'solana' | 'sui';
  network: string;
  platform: string;
  dryRun: boolean;
  lines: PayoutLine[];
  /** Sum of the 'paid' lines (also recovered ones), atomic units. */
  totalPaid: bigint;
  /** Transactions that landed in this run. */
  transactions: string[];
  /** Another run holds the lock. */
  busy: { payoutId: string; leaseUntilMs: number } | null;
  errors: string[];
  ok: boolean;
}

/** Recipients considered per run at most (the rest wait for the next run). */
const MAX_DUE = 10_000;

const usdc = (a: bigint) => formatAmount(a, USDC_DECIMALS);

export async function runPayout(opts: PayoutOptions): Promise<PayoutReport> {
  const { store, chain, network } = opts;
  const timing = transferTiming(opts);
  const { now, leaseMs, log } = timing;
  const report: PayoutReport = {
    chain: chain.chain,
    network,
    platform: chain.address,
    dryRun: opts.dryRun === true,
    lines: [],
    totalPaid: 0n,
    transactions: [],
    busy: null,
    errors: [],
    ok: true,
  };
  const fail = (why: string) => {
    report.errors.push(why);
    report.ok = false;
  };
  const crash = (point: CrashPoint) => {
    if (opts.crashAt === point) throw new SimulatedCrash(`simulated crash ${point}`);
  };

  const mismatch = networkMismatch(chain.chain, await chain.identity(), network);
  if (mismatch) {
    fail(`${mismatch}: nothing paid`);
    return report;
  }

  /** Pending recipients to pay now: valid addresses, oldest debt first, within --max-recipients. */
  async function due(limit: number): Promise<RecipientDue[]> {
    const all = await store.payables.pendingByRecipient({ chain: chain.chain, network, limit: MAX_DUE });
    const out: RecipientDue[] = [];
    for (const d of all) {
      if (chain.isRecipient(d.recipient)) {
        if (out.length < limit) out.push(d);
      } else if (!report.lines.some((l) => l.recipient === d.recipient && l.state === 'skipped')) {
        report.lines.push({
          ...d,
          payoutId: null,
          tx: null,
          state: 'skipped',
          recovered: false,
          reason: 'not a valid address on this chain',
        });
        fail(
          `recipient ${d.recipient} is not a valid ${chain.chain} address: its ${d.count} payables stay pending`,
        );
      }
    }
    return out;
  }

  function addLines(
    rows: RecipientDue[],
    ref: { id: string | null; tx: string | null },
    state: LineState,
    recovered: boolean,
    reason?: string,
  ) {
    for (const d of rows) {
      report.lines.push({
        recipient: d.recipient,
        amount: d.amount,
        count: d.count,
        payoutId: ref.id,
        tx: ref.tx,
        state,
        recovered,
        ...(reason ? { reason } : {}),
      });
      if (state === 'paid') report.totalPaid += d.amount;
    }
  }

  async function heldRows(payoutId: string): Promise<RecipientDue[]> {
    const byRecipient = new Map<string, RecipientDue>();
    for (const p of await store.payables.byPayout(payoutId)) {
      const d = byRecipient.get(p.recipient) ?? { recipient: p.recipient, amount: 0n, count: 0 };
      d.amount += p.amount;
      d.count += 1;
      byRecipient.set(p.recipient, d);
    }
    return [...byRecipient.values()];
  }

  /** How this run waits for a payout's transaction, renewing the lock meanwhile. */
  const waitFor = (hold: PayoutHold): OutcomeWait => ({
    ...timing,
    renew: (until, at) => store.payables.renewPayout(hold, until, at),
    lost: 'another run took the payout over',
  });

  /** Ends a payout from its recorded transaction's fate; false when it is still unresolved. */
  async function conclude(
    hold: PayoutHold,
    signed: SignedPayout,
    outcome: PayoutTxStatus,
    recovered: boolean,
  ) {
    const rows = await heldRows(hold.id);
    const ref = { id: hold.id, tx: signed.tx };
    if (outcome.kind === 'landed') {
      const settled = await store.payables.settlePayout(hold, now());
      if (!settled) {
        fail(
          `payout ${hold.id}: landed as ${signed.tx}, but another run took the payout over before marking it`,
        );
        return false;
      }
      addLines(rows, ref, 'paid', recovered);
      report.transactions.push(signed.tx);
      log(`payout ${hold.id}: ${signed.tx} landed, ${settled.paid} payables paid`);
      return true;
    }
    if (outcome.kind === 'failed') {
      const released = await store.payables.failPayout(hold, outcome.reason, now());
      addLines(rows, ref, 'failed', recovered, outcome.reason);
      const line = `payout ${hold.id} (${signed.tx}) did not pay: ${outcome.reason}; ${released?.released ?? 0} payables are pending again`;
      // An interrupted run's failure is history: its payables are paid afresh by this run.
      if (recovered) log(line);
      else fail(line);
      return true;
    }
    // May still land: keep the record, let the next run look again at once.
    await store.payables.renewPayout(hold, now() - 1, now());
    addLines(rows, ref, 'unresolved', recovered, outcome.reason);
    fail(
      `payout ${hold.id} (${signed.tx}) is unresolved (${outcome.reason}): its payables stay assigned to it; run the payout again to check it`,
    );
    return false;
  }

  /** Resolves a payout an interrupted run left behind. */
  async function recover(payout: Payout): Promise<boolean> {
    const hold = { id: payout.id, attempt: payout.attempt };
    log(`payout ${payout.id}: left ${payout.state} by an interrupted run, resolving it first`);
    if (payout.state === 'open' || payout.tx === null || payout.txBytes === null) {
      // Nothing was recorded as signed, so nothing was sent: the rows are simply owed again.
      const rows = await heldRows(payout.id);
      await store.payables.failPayout(hold, 'interrupted before a transaction was sent', now());
      if (rows.length > 0)
        log(`payout ${payout.id}: nothing was sent; ${rows.length} recipients are pending again`);
      return true;
    }
    const signed: SignedPayout = { tx: payout.tx, txBytes: payout.txBytes, txExpiry: payout.txExpiry };
    const outcome = await recheckRecorded(chain, signed, {
      ...waitFor(hold),
      label: `payout ${payout.id}`,
    });
    return conclude(hold, signed, outcome, true);
  }

  /** Why the platform wallet cannot pay `need` now, or null. */
  async function fundsProblem(need: bigint): Promise<string | null> {
    const have = await chain.usdcBalance();
    if (have < need)
      return `the platform wallet ${chain.address} holds ${usdc(have)} USDC, the payout needs ${usdc(need)}`;
    if ((await chain.gasBalance()) === 0n) {
      return `the platform wallet ${chain.address} holds no ${chain.chain === 'solana' ? 'SOL' : 'SUI'} to pay transaction fees`;
    }
    return null;
  }

  const quota = opts.maxRecipients ?? Number.POSITIVE_INFINITY;
  let served = 0;

  if (report.dryRun) {
    const open = await store.payables.unfinishedPayout(chain.chain, network);
    if (open) {
      log(
        `payout ${open.id} is unfinished (${open.state}${open.tx ? `, ${open.tx}` : ''}): a real run resolves it first`,
      );
      addLines(await heldRows(open.id), open, 'unresolved', true, `unfinished payout (${open.state})`);
    }
    const plan = await due(Math.min(quota, MAX_DUE));
    addLines(plan, { id: null, tx: null }, 'planned', false);
    const need = plan.reduce((s, d) => s + d.amount, 0n);
    if (need > 0n) {
      const problem = await fundsProblem(need);
      if (problem) fail(problem);
    }
    return report;
  }

  for (;;) {
    const batch = await due(Math.min(quota - served, chain.maxTransfersPerTx));
    if (batch.length === 0 && !(await store.payables.unfinishedPayout(chain.chain, network))) break;
    const begin = await store.payables.beginPayout({ chain: chain.chain, network, nowMs: now(), leaseMs });
    if (begin.kind === 'busy') {
      report.busy = { payoutId: begin.payout.id, leaseUntilMs: begin.payout.leaseUntilMs };
      fail(
        `another payout run holds the ${chain.chain} lock (payout ${begin.payout.id}, until ${new Date(begin.payout.leaseUntilMs).toISOString()}); if that run died, run again after then`,
      );
      break;
    }
    if (begin.kind === 'recover') {
      if (!(await recover(begin.payout))) break;
      continue;
    }
    const hold = { id: begin.payout.id, attempt: begin.payout.attempt };
    if (batch.length === 0) {
      // Another run paid the rest meanwhile.
      await store.payables.failPayout(hold, 'nothing to pay', now());
      break;
    }
    let problem: string | null;
    try {
      problem = await fundsProblem(batch.reduce((s, d) => s + d.amount, 0n));
    } catch (e) {
      problem = `could not read the platform wallet's balances: ${message(e)}`;
    }
    if (problem) {
      await store.payables.failPayout(hold, problem, now());
      fail(`${problem}: nothing sent`);
      break;
    }

    const assigned = await store.payables.assignToPayout(hold, {
      recipients: batch.map((d) => d.recipient),
      nowMs: now(),
    });
    if (assigned === null) {
      fail(`payout ${hold.id} was taken over by another run`);
      break;
    }
    if (assigned.length === 0) {
      await store.payables.failPayout(hold, 'nothing to pay', now());
      continue;
    }
    crash('after_assign');

    let signed: SignedPayout;
    try {
      signed = await chain.sign(assigned, `tollgate payout ${hold.id}`);
    } catch (e) {
      await store.payables.failPayout(hold, `signing failed: ${message(e)}`, now());
      addLines(assigned, { id: hold.id, tx: null }, 'failed', false, message(e));
      fail(`payout ${hold.id}: could not build the transaction: ${message(e)}`);
      break;
    }
    const recorded = await store.payables.recordPayoutSent(hold, { ...signed, nowMs: now() });
    if (!recorded) {
      // Not recorded means not ours to send.
      fail(`payout ${hold.id} was taken over by another run before sending; nothing sent`);
      break;
    }
    crash('after_record');
    log(`payout ${hold.id}: sending ${signed.tx} to ${assigned.length} recipients`);

    try {
      const sent = await chain.send(signed);
      if (sent.kind === 'refused') {
        // Refused before execution on its only broadcast: it did not run and nobody else sends it.
        const released = await store.payables.failPayout(hold, `refused: ${sent.reason}`, now());
        addLines(assigned, { id: hold.id, tx: signed.tx }, 'failed', false, sent.reason);
        fail(
          `payout ${hold.id}: the node refused ${signed.tx}: ${sent.reason}; ${released?.released ?? 0} payables are pending again`,
        );
        break;
      }
    } catch (e) {
      log(`payout ${hold.id}: sending ${signed.tx} failed (${message(e)}); checking whether it landed`);
    }
    crash('after_send');

    const outcome = await awaitOutcome(chain, signed, waitFor(hold));
    const done = await conclude(hold, signed, outcome, false);
    if (!done || outcome.kind !== 'landed') break;
    served += assigned.length;
    if (served >= quota) break;
  }
  return report;
}
