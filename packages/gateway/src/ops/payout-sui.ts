/**
 * Sui payouts: one programmable transaction per batch that merges the platform's USDC
 * coins, splits one coin per recipient, transfers each, and carries a memo naming the
 * payout as an unused Pure input. Gas is the platform's SUI. The digest is known before
 * sending. A Sui transaction does not expire; it can never execute once an owned object
 * it names (gas or coin) has moved on to another version.
 */
import { TransactionError } from '@mysten/sui/client';
import { GrpcStatusCode, RpcError, SuiGrpcClient } from '@mysten/sui/grpc';
import { Transaction, TransactionDataBuilder } from '@mysten/sui/transactions';
import { fromBase64, isValidSuiAddress, normalizeSuiAddress, toBase64 } from '@mysten/sui/utils';
import { USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import type { PayoutChain, PayoutTxStatus, SendResult, SignedPayout, Transfer } from './payout-chain.ts';
import type { SuiPlatformKey } from './platform-keys.ts';

/** A PTB allows 1024 commands; a split plus one transfer per recipient stays far below. */
const MAX_TRANSFERS_PER_TX = 100;
/** Coins merged into one payout at most (Sui limits object inputs). */
const MAX_COINS = 200;
const SUI_COIN_TYPE = '0x2::sui::SUI';

export interface SuiPayoutOptions {
  key: SuiPlatformKey;
  rpcUrl: string;
  /** `mainnet`, or `localnet` for the sandbox chain. */
  network: string;
  /** Default: USDC. */
  coinType?: string;
}

interface Stored {
  bytes: string;
  signature: string;
}

interface ObjectRef {
  objectId: string;
  version: string;
}

function isNotFound(e: unknown): boolean {
  if (e instanceof TransactionError && e.reason === 'notFound') return true;
  return e instanceof RpcError && e.code === GrpcStatusCode[GrpcStatusCode.NOT_FOUND];
}

function parseStored(signed: SignedPayout): Stored {
  const s = JSON.parse(signed.txBytes) as Stored;
  if (typeof s?.bytes !== 'string' || typeof s.signature !== 'string')
    throw new Error('unreadable Sui payout');
  return s;
}

/** The owned objects a transaction consumes: its gas coins and its owned object inputs. */
function ownedInputs(bytes: Uint8Array): ObjectRef[] {
  const data = Transaction.from(bytes).getData();
  const refs: ObjectRef[] = (data.gasData.payment ?? []).map((p) => ({
    objectId: p.objectId,
    version: String(p.version),
  }));
  for (const input of data.inputs) {
    const owned = input.Object?.ImmOrOwnedObject;
    if (owned) refs.push({ objectId: owned.objectId, version: String(owned.version) });
  }
  return refs;
}

export function suiPayoutChain(opts: SuiPayoutOptions): PayoutChain {
  const client = new SuiGrpcClient({ network: opts.network, baseUrl: opts.rpcUrl });
  const owner = opts.key.address;
  const coinType = opts.coinType ?? USDC_SUI_COIN_TYPE;

  async function coins() {
    const all: { objectId: string; version: string; digest: string; balance: bigint }[] = [];
    let cursor: string | null = null;
    do {
      const page = await client.core.listCoins({ owner, coinType, cursor, limit: 50 });
      for (const c of page.objects) all.push({ ...c, balance: BigInt(c.balance) });
      cursor = page.hasNextPage ? page.cursor : null;
    } while (cursor);
    return all.sort((a, b) => (a.balance < b.balance ? 1 : a.balance > b.balance ? -1 : 0));
  }

  async function executed(digest: string): Promise<PayoutTxStatus | null> {
    try {
      const r = await client.core.getTransaction({ digest });
      const status = (r.Transaction ?? r.FailedTransaction).status;
      return status.success
        ? { kind: 'landed' }
        : { kind: 'failed', reason: `failed on-chain: ${status.error?.message ?? 'unknown error'}` };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  return {
    chain: 'sui',
    address: owner,
    maxTransfersPerTx: MAX_TRANSFERS_PER_TX,

    async identity() {
      return (await client.core.getChainIdentifier()).chainIdentifier;
    },

    isRecipient: (a) => /^0x[0-9a-fA-F]{1,64}$/.test(a) && isValidSuiAddress(normalizeSuiAddress(a)),

    async usdcBalance() {
      return (await coins()).reduce((s, c) => s + c.balance, 0n);
    },

    async gasBalance() {
      return BigInt((await client.core.getBalance({ owner, coinType: SUI_COIN_TYPE })).balance.balance);
    },

    async sign(transfers: Transfer[], memo: string): Promise<SignedPayout> {
      if (transfers.length === 0 || transfers.length > MAX_TRANSFERS_PER_TX) {
        throw new RangeError(`a Sui payout pays 1 to ${MAX_TRANSFERS_PER_TX} recipients`);
      }
      const total = transfers.reduce((s, t) => s + t.amount, 0n);
      const chosen: Awaited<ReturnType<typeof coins>> = [];
      let sum = 0n;
      for (const c of await coins()) {
        if (sum >= total || chosen.length >= MAX_COINS) break;
        chosen.push(c);
        sum += c.balance;
      }
      if (sum < total) {
        throw new Error(
          `the platform wallet can spend ${sum} atomic USDC in ${MAX_COINS} coins, the payout needs ${total}`,
        );
      }
      const tx = new Transaction();
      tx.setSender(owner);
      const [first, ...rest] = chosen.map((c) => tx.objectRef(c));
      if (rest.length > 0) tx.mergeCoins(first!, rest);
      const parts = tx.splitCoins(
        first!,
        transfers.map((t) => tx.pure.u64(t.amount)),
      );
      transfers.forEach((t, i) => {
        tx.transferObjects([parts[i]!], normalizeSuiAddress(t.recipient));
      });
      tx.pure.string(memo);
      const bytes = await tx.build({ client });
      const { signature } = await opts.key.keypair.signTransaction(bytes);
      const stored: Stored = { bytes: toBase64(bytes), signature };
      return {
        tx: TransactionDataBuilder.getDigestFromBytes(bytes),
        txBytes: JSON.stringify(stored),
        txExpiry: null,
      };
    },

    async send(signed: SignedPayout): Promise<SendResult> {
      const { bytes, signature } = parseStored(signed);
      try {
        // Executing the same signed bytes again returns the first execution's effects.
        await client.core.executeTransaction({ transaction: fromBase64(bytes), signatures: [signature] });
        return { kind: 'sent' };
      } catch (e) {
        if (e instanceof RpcError && e.code === GrpcStatusCode[GrpcStatusCode.INVALID_ARGUMENT]) {
          return { kind: 'refused', reason: e.message };
        }
        throw e;
      }
    },

    async txOutcome(tx) {
      const seen = await executed(tx);
      return seen === null ? 'unseen' : seen.kind === 'landed' ? 'landed' : 'failed';
    },

    async status(signed: SignedPayout): Promise<PayoutTxStatus> {
      const seen = await executed(signed.tx);
      if (seen) return seen;
      // Not executed (or not visible yet). It still can be while every owned input is where it names.
      const refs = ownedInputs(fromBase64(parseStored(signed).bytes));
      const { objects } = await client.core.getObjects({ objectIds: refs.map((r) => r.objectId) });
      const moved = objects.some((o, i) => o instanceof Error || o.version !== refs[i]!.version);
      if (!moved) return { kind: 'unknown', reason: 'not executed yet; its inputs are still available' };
      // The inputs moved: by this transaction (look again, it may have run between the reads) or by another.
      const again = await executed(signed.tx);
      if (again) return again;
      return {
        kind: 'failed',
        reason:
          'never executed, and its input objects have been used by another transaction: it cannot execute',
      };
    },
  };
}
