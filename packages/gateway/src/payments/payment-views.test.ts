import { describe, expect, it } from 'vitest';
import type { PaymentRecord } from '../store/store.ts';
import { csvHeader, csvLine, payerPaymentView, providerPaymentView } from './payment-views.ts';

const record: PaymentRecord = {
  id: 'rdm_1',
  chain: 'solana',
  network: 'localnet',
  txId: 'Tx1',
  payer: '=HYPERLINK("x")',
  requirementId: 'req',
  state: 'delivered',
  projectId: 'prj_1',
  projectSlug: 'demo',
  endpointId: 'ep_1',
  endpoint: { id: 'ep_1', method: 'GET', path: 'a,b"c' },
  subject: 'ep:ep_1',
  x402Version: 1,
  amount: 2n ** 60n + 10_100n,
  fee: 100n,
  replays: 0,
  refundState: null,
  createdAtMs: Date.UTC(2026, 10, 25),
  deliveredAtMs: null,
};
const clock = { nowMs: Date.UTC(2026, 10, 26), undeliveredAfterMs: 3_600_000 };

describe('payment views', () => {
  it('shows exact decimal USDC and net = gross - fee', () => {
    expect(providerPaymentView(record, clock)).toMatchObject({
      createdAt: '2026-11-25T00:00:00.000Z',
      deliveredAt: null,
      gross: '1152921504606.857076',
      fee: '0.0001',
      net: '1152921504606.856976',
      unit: 'USDC',
      status: 'delivered',
    });
  });

  it('writes CSV cells quoted and never as spreadsheet formulas', () => {
    expect(csvHeader()).toMatch(/^id,createdAt,deliveredAt,endpointId,method,path,chain,/);
    const line = csvLine(providerPaymentView(record, clock));
    expect(line).toContain(`,"a,b""c",`);
    expect(line).toContain(`,"'=HYPERLINK(""x"")",`);
    expect(line.endsWith('\r\n')).toBe(true);
  });

  it("gives a payer the receipt of its payment's wire format and names inference routes", () => {
    const v1 = payerPaymentView(record, clock, () => 'unused');
    expect(v1.receipt).toEqual({
      success: true,
      chain: 'solana',
      network: 'localnet',
      txHashOrDigest: 'Tx1',
      payer: record.payer,
      paymentRequirementId: 'req',
    });
    const v2 = payerPaymentView(
      { ...record, x402Version: 2, subject: 'inf:chat:m', state: 'retryable' },
      clock,
      () => 'solana:abc',
    );
    expect(v2).toMatchObject({ route: 'chat', status: 'undelivered' });
    expect(v2.receipt).toEqual({
      success: false,
      transaction: '',
      network: 'solana:abc',
      payer: record.payer,
      errorReason: 'not_settled',
    });
  });
});
