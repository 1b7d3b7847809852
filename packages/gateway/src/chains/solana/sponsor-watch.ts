/**
 * Keeps an eye on the x402 v2 fee payer's SOL: every sponsored payment costs it a fee,
 * and an empty sponsor turns every v2 payment into a 503. The balance is read on an
 * interval (and at start), published as a gauge, shown in /readyz, and a warning is
 * logged when it falls below the threshold (once per crossing).
 */
import type { Metrics } from '../../metrics.ts';

export interface SponsorBalanceSource {
  address: string;
  balanceLamports(): Promise<bigint>;
}

export interface SponsorStatus {
  address: string;
  lamports: string | null;
  state: 'ok' | 'low' | 'unknown';
  checkedAt: string | null;
}

export function watchSponsor(opts: {
  sponsor: SponsorBalanceSource;
  lowLamports: bigint;
  metrics: Metrics;
  log?: { warn(obj: unknown, msg: string): void; info(obj: unknown, msg: string): void };
  intervalMs?: number;
}) {
  const { sponsor } = opts;
  let lamports: bigint | null = null;
  let checkedAt: Date | null = null;
  let low = false;
  let timer: NodeJS.Timeout | null = null;

  async function read(): Promise<void> {
    try {
      lamports = await sponsor.balanceLamports();
      checkedAt = new Date();
    } catch {
      return; // unknown for now; the next round tries again
    }
    opts.metrics.sponsorBalance.set({ chain: 'solana', address: sponsor.address }, Number(lamports));
    const nowLow = lamports < opts.lowLamports;
    if (nowLow && !low) {
      opts.log?.warn(
        { sponsor: sponsor.address, lamports: lamports.toString(), threshold: opts.lowLamports.toString() },
        'x402 v2 sponsor balance is low: fund it or v2 payments on Solana will fail',
      );
    } else if (!nowLow && low)
      opts.log?.info({ sponsor: sponsor.address }, 'x402 v2 sponsor balance is back above the threshold');
    low = nowLow;
  }

  return {
    start(): void {
      if (timer) return;
      void read();
      timer = setInterval(() => void read(), opts.intervalMs ?? 60_000);
      timer.unref();
    },
    /** Reads now (for /readyz when nothing was read yet). */
    refresh: read,
    status(): SponsorStatus {
      return {
        address: sponsor.address,
        lamports: lamports === null ? null : lamports.toString(),
        state: lamports === null ? 'unknown' : low ? 'low' : 'ok',
        checkedAt: checkedAt?.toISOString() ?? null,
      };
    },
    stop(): void {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

export type SponsorWatch = ReturnType<typeof watchSponsor>;
