/**
 * The ledger as the reconciliation reads it (ops/reconcile.ts): redemptions with their
 * stored `meta` (the quoted splits) in a time range, and the payouts that recorded a
 * transaction. Read only, paged by a key so a large range never loads at once.
 */
import type { Chain, LedgerRedemption, LedgerRepo } from '../store.ts';
import type { Backend } from './backend.ts';
import { toPayout } from './fenced-rows.ts';
import { pageSize, toNum } from './rows.ts';

export function ledgerRepo(backend: Backend): LedgerRepo {
  const { db } = backend;
  return {
    async redemptions(q) {
      let query = db
        .selectFrom('redemptions')
        .select([
          'id',
          'chain',
          'network',
          'tx_id',
          'nonce',
          'payer',
          'state',
          'created_at_ms',
          'project_id',
          'endpoint_id',
          'amount',
          'fee',
          'refund_state',
          'meta',
        ])
        .where('created_at_ms', '>=', q.fromMs)
        .where('created_at_ms', '<', q.toMs);
      if (q.chain) query = query.where('chain', '=', q.chain);
      const after = q.after;
      if (after) {
        query = query.where((eb) =>
          eb.or([
            eb('created_at_ms', '>', after.createdAtMs),
            eb.and([eb('created_at_ms', '=', after.createdAtMs), eb('id', '>', after.id)]),
          ]),
        );
      }
      const rows = await query
        .orderBy('created_at_ms', 'asc')
        .orderBy('id', 'asc')
        .limit(pageSize(q.limit))
        .execute();
      return rows.map(
        (r): LedgerRedemption => ({
          id: r.id,
          chain: r.chain as Chain,
          network: r.network,
          txId: r.tx_id,
          nonce: r.nonce,
          payer: r.payer,
          state: r.state as LedgerRedemption['state'],
          createdAtMs: toNum(r.created_at_ms),
          projectId: r.project_id,
          endpointId: r.endpoint_id,
          amount: r.amount === null ? null : BigInt(r.amount),
          fee: r.fee === null ? null : BigInt(r.fee),
          refundState: r.refund_state,
          meta: r.meta,
        }),
      );
    },

    async payouts(q) {
      let query = db
        .selectFrom('payouts')
        .selectAll()
        .where('tx', 'is not', null)
        .where('created_at_ms', '>=', q.fromMs)
        .where('created_at_ms', '<', q.toMs);
      if (q.chain) query = query.where('chain', '=', q.chain);
      const rows = await query.orderBy('created_at_ms', 'asc').orderBy('id', 'asc').execute();
      return rows.map(toPayout);
    },
  };
}
