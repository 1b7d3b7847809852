import { sql } from 'kysely';
import type { Store } from '../store.ts';
import { apiRepo } from './api-repo.ts';
import { authRepo } from './auth-repo.ts';
import type { Backend } from './backend.ts';
import { conversationRepo } from './conversation-repo.ts';
import { endpointRepo } from './endpoint-repo.ts';
import { ledgerRepo } from './ledger-repo.ts';
import { payableRepo } from './payable-repo.ts';
import { paymentReadRepo } from './payment-read-repo.ts';
import { projectRepo } from './project-repo.ts';
import { railRepo } from './rail-repo.ts';
import { redemptionRepo } from './redemption-repo.ts';
import { refundRepo } from './refund-repo.ts';

/** The one Store implementation; the backend supplies only what differs between databases. */
export function kyselyStore(backend: Backend, onClose: () => Promise<void> = async () => {}): Store {
  const { db } = backend;
  let closed: Promise<void> | undefined;
  return {
    kind: backend.kind,
    projects: projectRepo(backend),
    apis: apiRepo(backend),
    endpoints: endpointRepo(backend),
    rails: railRepo(backend),
    redemptions: redemptionRepo(backend),
    auth: authRepo(backend),
    conversations: conversationRepo(backend),
    payables: payableRepo(backend),
    ledger: ledgerRepo(backend),
    refunds: refundRepo(backend),
    paymentReads: paymentReadRepo(backend),
    async ping() {
      await sql`select 1`.execute(db);
    },
    close() {
      closed ??= db.destroy().then(onClose);
      return closed;
    },
  };
}
