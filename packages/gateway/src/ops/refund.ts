/**
 * The operator's refund of undelivered payments (issue 13; docs/operations-refunds.md):
 * pays a payer back the gross it paid for a request that was never delivered, from the
 * platform wallet on the payment's chain, exactly once, and marks the payment refunded.
 *
 * Per payment: a v2 payment must have landed on-chain (its payer is charged only when
 * the answer is about to go out); begin the refund (one fenced step: the payment can no
 * longer be claimed, a pending provider payable is cancelled); sign one transfer to the
 * payer; record the signed transaction BEFORE broadcasting it; broadcast; wait until it
 * landed or cannot land; then finish (refund and payment 'refunded') or reopen it (the
 * money did not move; the next attempt signs afresh). A refund an interrupted run left
 * behind is resolved from its recorded transaction, re-sending the same bytes while it
 * may still land, so no second transfer is signed while the first could land.
 */
import { formatAmount, USDC_DECIMALS } from '@tollgate/protocol';
import { undeliveredBefore } from '../payments/payment-status.ts';
import type { Chain, Refund, RefundCandidate, RefundHold, Store } from '../store/store.ts';
import type { PayoutChain, PayoutTxStatus, SignedPayout } from './payout-chain.ts';
import { fundsProblem, platformWallets } from './refund-wallets.ts';
import {
  awaitOutcome,
  errorMessage as message,
  type OutcomeWait,
  recheckRecorded,
  type TransferTiming,
  transferTiming,
} from './transfer-outcome.ts';

export interface RefundOptions extends TransferTiming {
  store: Store;
  /** The platform wallet on a chain, opened only for chains with work; throws if it cannot be. */
  openChain(chain: Chain): Promise<PayoutChain>;
  /** The gateway's network name in redemptions (`localnet` in sandbox mode, `mainnet`). */
  network: string;
  /** TOLLGATE_UNDELIVERED_AFTER_SEC in ms: only payments older than this are refunded. */
  undeliveredAfterMs: number;
  /** One payment, or every undelivered payment (of one chain). */
  target: { id: string } | { all: true; chain?: Chain };
  /** Plan only: read, check, print; write and send nothing. */
  dryRun?: boolean;
  /** Tests only: stop as if the process died at this step. */
  crashAt?: RefundCrashPoint;
}

export type RefundCrashPoint = 'after_begin' | 'after_record' | 'after_send';

export class SimulatedRefundCrash extends Error {
  override readonly name = 'SimulatedRefundCrash';
}

export type RefundLineState =
  /** Dry run: would be refunded. */
  | 'planned'
  | 'refunded'
  /** A v2 payment whose transaction never landed: the payer was not charged, nothing to pay back. */
  | 'not_charged'
  /** Not refundable now (delivered, in its window, leased, its payout running); nothing changed. */
  | 'skipped'
  | 'failed'
  /** Sent, fate unknown yet: the next run checks it. */
  | 'unresolved';

export interface RefundLine {
  redemptionId: string;
  chain: Chain;
  payer: string;
  /** Gross paid back (atomic units). */
  amount: bigint;
  /** What the provider had already received and owes back (atomic units). */
  providerKept: bigint;
  /** A pending provider payable this refund cancelled. */
  payableId: string | null;
  refundId: string | null;
  tx: string | null;
  state: RefundLineState;
  /** Finished or resolved from an earlier, interrupted run. */
  recovered: boolean;
  reason?: string;
}

export interface RefundReport {
  network: string;
  dryRun: boolean;
  lines: RefundLine[];
  /** Payments paid back in this run, and how much (atomic units). */
  refunded: number;
  totalRefunded: bigint;
  errors: string[];
  ok: boolean;
}

/** Payments considered per run at most (the rest wait for the next run). */
const MAX_PAYMENTS = 1_000;

const usdc = (a: bigint) => formatAmount(a, USDC_DECIMALS);

export async function runRefund(opts: RefundOptions): Promise<RefundReport> {
  const { store, network } = opts;
  const timing = transferTiming(opts);
  const { now, leaseMs, log } = timing;
  const report: RefundReport = {
    network,
    dryRun: opts.dryRun === true,
    lines: [],
    refunded: 0,
    totalRefunded: 0n,
    errors: [],
    ok: true,
  };
  const fail = (why: string) => {
    report.errors.push(why);
    report.ok = false;
  };
  const crash = (point: RefundCrashPoint) => {
    if (opts.crashAt === point) throw new SimulatedRefundCrash(`simulated crash ${point}`);
  };

  const walletOf = platformWallets(opts.openChain, network);
  /** Dry run: what the plan needs from each chain's platform wallet. */
  const planned = new Map<Chain, bigint>();
  async function checkPlan(): Promise<RefundReport> {
    for (const [chain, need] of planned) {
      const problem = await fundsProblem(await walletOf(chain), need);
      if (problem) fail(problem);
    }
    return report;
  }

  function line(
    c: Pick<RefundCandidate, 'id' | 'chain' | 'payer' | 'amount'>,
    refund: Refund | null,
    state: RefundLineState,
    extra: { tx?: string | null; recovered?: boolean; reason?: string } = {},
  ): void {
    report.lines.push({
      redemptionId: c.id,
      chain: c.chain,
      payer: c.payer,
      amount: refund?.amount ?? c.amount,
      providerKept: refund?.providerKept ?? 0n,
      payableId: refund?.payableId ?? null,
      refundId: refund?.id ?? null,
      tx: extra.tx ?? refund?.tx ?? null,
      state,
      recovered: extra.recovered ?? false,
      ...(extra.reason ? { reason: extra.reason } : {}),
    });
  }

  /** How this run waits for a refund's transaction, renewing its lease meanwhile. */
  const waitFor = (hold: RefundHold): OutcomeWait => ({
    ...timing,
    renew: (until, at) => store.refunds.renew(hold, until, at),
    lost: 'another run took the refund over',
  });

  /**
   * Ends a sent refund from its transaction's fate. True when an interrupted run's transaction
   * (`inherited`) can never land, so this run may sign afresh now.
   */
  async function conclude(
    c: RefundCandidate,
    refund: Refund,
    hold: RefundHold,
    signed: SignedPayout,
    outcome: PayoutTxStatus,
    recovered: boolean,
    inherited: boolean,
  ): Promise<boolean> {
    if (outcome.kind === 'landed') {
      if (!(await store.refunds.finish(hold, now()))) {
        fail(
          `refund ${refund.id}: ${signed.tx} landed, but another run took the refund over before marking it`,
        );
        return false;
      }
      log(`refund ${refund.id}: ${signed.tx} landed; payment ${c.id} refunded ${usdc(refund.amount)} USDC`);
      report.refunded += 1;
      report.totalRefunded += refund.amount;
      line(c, refund, 'refunded', { tx: signed.tx, recovered });
      return false;
    }
    if (outcome.kind === 'failed') {
      await store.refunds.reopen(hold, `${signed.tx}: ${outcome.reason}`, now());
      // An interrupted run's failed transaction is history: this run signs afresh.
      if (inherited) {
        log(`refund ${refund.id}: ${signed.tx} did not pay (${outcome.reason}); signing a new transfer`);
        return true;
      }
      line(c, refund, 'failed', { tx: signed.tx, reason: outcome.reason });
      fail(`refund ${refund.id} (${signed.tx}) did not pay: ${outcome.reason}; run the refund again`);
      return false;
    }
    await store.refunds.release(hold, `${signed.tx}: ${outcome.reason}`, now());
    line(c, refund, 'unresolved', { tx: signed.tx, recovered, reason: outcome.reason });
    fail(
      `refund ${refund.id} (${signed.tx}) is unresolved (${outcome.reason}): run the refund again to check it`,
    );
    return false;
  }

  /** Signs, records, sends and settles a fresh transfer for an 'open' refund this run holds. */
  async function pay(c: RefundCandidate, refund: Refund, hold: RefundHold, recovered: boolean) {
    // Also re-arms the lease a reopened refund gave up, so nobody else signs for it meanwhile.
    if (!(await store.refunds.renew(hold, now() + leaseMs, now()))) {
      fail(`refund ${refund.id} was taken over by another run; nothing sent`);
      return;
    }
    const wallet = await walletOf(c.chain);
    const problem = await fundsProblem(wallet, refund.amount);
    if (problem) {
      await store.refunds.reopen(hold, problem, now());
      line(c, refund, 'failed', { recovered, reason: problem });
      fail(`refund ${refund.id} of payment ${c.id}: ${problem}; nothing sent, run again once funded`);
      return;
    }
    let signed: SignedPayout;
    try {
      signed = await wallet.sign(
        [{ recipient: refund.recipient, amount: refund.amount }],
        `tollgate refund ${refund.id}`,
      );
    } catch (e) {
      await store.refunds.reopen(hold, `signing failed: ${message(e)}`, now());
      line(c, refund, 'failed', { recovered, reason: message(e) });
      fail(`refund ${refund.id}: could not build the transaction: ${message(e)}`);
      return;
    }
    if (!(await store.refunds.recordSent(hold, { ...signed, nowMs: now() }))) {
      fail(`refund ${refund.id} was taken over by another run before sending; nothing sent`);
      return;
    }
    crash('after_record');
    log(
      `refund ${refund.id}: sending ${signed.tx}, ${usdc(refund.amount)} USDC to ${refund.recipient} for payment ${c.id}`,
    );
    try {
      const sent = await wallet.send(signed);
      if (sent.kind === 'refused') {
        await store.refunds.reopen(hold, `refused: ${sent.reason}`, now());
        line(c, refund, 'failed', { tx: signed.tx, recovered, reason: sent.reason });
        fail(`refund ${refund.id}: the node refused ${signed.tx}: ${sent.reason}; nothing moved, run again`);
        return;
      }
    } catch (e) {
      log(`refund ${refund.id}: sending ${signed.tx} failed (${message(e)}); checking whether it landed`);
    }
    crash('after_send');
    const outcome = await awaitOutcome(wallet, signed, waitFor(hold));
    await conclude(c, refund, hold, signed, outcome, recovered, false);
  }

  /** Resolves a refund taken over from an interrupted run: its recorded transaction first. */
  async function recover(c: RefundCandidate, refund: Refund) {
    const hold = { id: refund.id, attempt: refund.attempt };
    log(`refund ${refund.id}: left ${refund.state} by an interrupted run, resolving it`);
    if (refund.state === 'open' || refund.tx === null || refund.txBytes === null) {
      // Nothing recorded as signed, so nothing was sent: sign now.
      return pay(c, refund, hold, true);
    }
    const wallet = await walletOf(c.chain);
    const signed: SignedPayout = { tx: refund.tx, txBytes: refund.txBytes, txExpiry: refund.txExpiry };
    const outcome = await recheckRecorded(wallet, signed, {
      ...waitFor(hold),
      label: `refund ${refund.id}`,
    });
    if (await conclude(c, refund, hold, signed, outcome, true, true)) await pay(c, refund, hold, true);
  }

  /** One payment, from its candidate row (its refund, if any, is begun or taken over here). */
  async function refundOne(c: RefundCandidate, strict: boolean) {
    if (c.network !== network) {
      line(c, null, 'skipped', { reason: `on network ${c.network}, not the gateway's ${network}` });
      if (strict) fail(`payment ${c.id} is on network ${c.network}, not the gateway's ${network}`);
      return;
    }
    let wallet: PayoutChain;
    try {
      wallet = await walletOf(c.chain);
    } catch (e) {
      line(c, null, 'failed', { reason: message(e) });
      fail(`payment ${c.id}: cannot pay from the ${c.chain} platform wallet: ${message(e)}`);
      return;
    }
    if (c.refundState === null) {
      if (c.state === 'delivered') {
        line(c, null, 'skipped', { reason: 'delivered' });
        if (strict) fail(`payment ${c.id} was delivered: nothing to refund`);
        return;
      }
      if (c.x402Version === 2) {
        // A v2 payment is sent on-chain only when its answer is about to go out: most undelivered ones never were.
        let outcome: Awaited<ReturnType<PayoutChain['txOutcome']>>;
        try {
          outcome = await wallet.txOutcome(c.txId);
        } catch (e) {
          line(c, null, 'failed', { reason: `could not check its transaction: ${message(e)}` });
          fail(`payment ${c.id}: could not check its transaction ${c.txId}: ${message(e)}`);
          return;
        }
        if (outcome !== 'landed') {
          line(c, null, 'not_charged', {
            reason: `its transaction ${c.txId} ${outcome === 'failed' ? 'failed on-chain' : 'never landed'}: the payer was not charged`,
          });
          return;
        }
      }
      if (!wallet.isRecipient(c.payer)) {
        line(c, null, 'failed', { reason: 'the payer is not a valid address on this chain' });
        fail(`payment ${c.id}: the payer ${c.payer} is not a valid ${c.chain} address`);
        return;
      }
      if (report.dryRun) {
        line(c, null, 'planned');
        planned.set(c.chain, (planned.get(c.chain) ?? 0n) + c.amount);
        return;
      }
      const problem = await fundsProblem(wallet, c.amount);
      if (problem) {
        line(c, null, 'failed', { reason: problem });
        fail(`payment ${c.id}: ${problem}; not begun, the payer may still retry`);
        return;
      }
    } else if (report.dryRun) {
      const refund = await store.refunds.byRedemption(c.id);
      line(c, refund, refund?.state === 'refunded' ? 'refunded' : 'unresolved', {
        recovered: true,
        reason: refund?.state === 'refunded' ? 'refunded earlier' : `unfinished refund (${refund?.state})`,
      });
      return;
    }

    const begun = await store.refunds.begin({
      redemptionId: c.id,
      nowMs: now(),
      undeliveredBeforeMs: undeliveredBefore(now(), opts.undeliveredAfterMs),
      leaseMs,
    });
    switch (begun.kind) {
      case 'refused': {
        line(c, null, 'skipped', { reason: begun.reason });
        log(`payment ${c.id}: not refunded (${begun.reason})`);
        if (strict) fail(`payment ${c.id} cannot be refunded now: ${begun.reason}`);
        return;
      }
      case 'refunded':
        line(c, begun.refund, 'refunded', { recovered: true, reason: 'refunded earlier' });
        return;
      case 'busy':
        line(c, begun.refund, 'skipped', { reason: 'another run holds this refund' });
        fail(
          `refund ${begun.refund.id} of payment ${c.id} is held by another run until ${new Date(begun.refund.leaseUntilMs).toISOString()}; if that run died, run again after then`,
        );
        return;
      case 'recover':
        return recover(c, begun.refund);
      case 'begun':
        log(
          `refund ${begun.refund.id}: begun for payment ${c.id}${begun.refund.payableId ? `, payable ${begun.refund.payableId} cancelled` : ''}`,
        );
        crash('after_begin');
        return pay(c, begun.refund, { id: begun.refund.id, attempt: begun.refund.attempt }, false);
    }
  }

  const target = opts.target;
  if ('id' in target) {
    const c = await store.refunds.candidate(target.id);
    if (!c) {
      fail(`no payment ${target.id}`);
      return report;
    }
    await refundOne(c, true);
    return checkPlan();
  }
  // Refunds an interrupted run left first, then every payment undelivered past its window.
  const seen = new Set<string>();
  for (const r of await store.refunds.unfinished({
    network,
    ...(target.chain ? { chain: target.chain } : {}),
  })) {
    const c = await store.refunds.candidate(r.redemptionId);
    if (!c) continue;
    seen.add(c.id);
    await refundOne(c, false);
  }
  const due = await store.refunds.undelivered({
    createdBeforeMs: undeliveredBefore(now(), opts.undeliveredAfterMs),
    network,
    ...(target.chain ? { chain: target.chain } : {}),
    limit: MAX_PAYMENTS,
  });
  for (const c of due) if (!seen.has(c.id)) await refundOne(c, false);
  return checkPlan();
}
