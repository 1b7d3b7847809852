/**
 * One contract suite for every Store backend (DESIGN §3): each backend's test file
 * calls runStoreContract with a factory that opens a fresh, empty store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.ts';
import { authContract } from './contract/auth.ts';
import { catalogContract } from './contract/catalog.ts';
import { conversationContract } from './contract/conversations.ts';
import { directoryContract } from './contract/directory.ts';
import { ledgerContract } from './contract/ledger.ts';
import { payableContract } from './contract/payables.ts';
import { paymentReadContract } from './contract/payment-reads.ts';
import { redemptionContract } from './contract/redemptions.ts';
import { refundContract } from './contract/refunds.ts';

export function runStoreContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
    let store: Store | undefined;
    const get = (): Store => {
      if (!store) throw new Error('store not open');
      return store;
    };
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    it('answers ping', async () => {
      await expect(get().ping()).resolves.toBeUndefined();
    });

    catalogContract(get);
    directoryContract(get);
    redemptionContract(get);
    authContract(get);
    conversationContract(get);
    payableContract(get);
    ledgerContract(get);
    paymentReadContract(get);
    refundContract(get);
  });
}
