/**
 * Pays Tollgate accept options on Sui: ONE programmable transaction that merges the
 * payer's coins of the option's coin type, splits one coin per split, transfers each to
 * its recipient, and carries the option's memo as a Pure string input. Gas is chosen by
 * the node while the SDK builds the transaction (SimulateTransaction).
 */
import type { Signer } from '@mysten/sui/cryptography';
import { SuiGrpcClient } from '@mysten/sui/grpc';
import { Transaction, TransactionDataBuilder } from '@mysten/sui/transactions';
import { isValidSuiAddress, normalizeStructTag, normalizeSuiAddress } from '@mysten/sui/utils';
import type { AcceptOption, ProtocolErrorCode } from '@tollgate/protocol';
import { ProtocolError, parseAmount, USDC_DECIMALS, USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import { assertNetwork, cachedIdentity } from './network.ts';
import type { SuiSecretKey } from './sui-keys.ts';
import { suiSignerFrom } from './sui-keys.ts';
import type { PaymentWallet } from './wallet.ts';

export { loadSuiKeyFile, parseSuiKeyFile, type SuiSecretKey } from './sui-keys.ts';

const MAX_MEMO_BYTES = 256;
/** Sui allows a few hundred object inputs; this many coins is already a wallet to tidy up. */
const MAX_COINS = 200;

export interface SuiWalletOptions {
  /** `suiprivkey1…` (Sui CLI), 32 secret-key bytes, or an Ed25519Keypair / other Sui signer. */
  secretKey: SuiSecretKey;
  /** gRPC(-web) URL of a full node, e.g. `https://fullnode.mainnet.sui.io:443`. */
  rpcUrl: string;
  /**
   * Only pay options on this network. Whatever it is, the wallet asks the node which chain
   * it is on and refuses to pay a `mainnet` option elsewhere, or any other option on mainnet.
   */
  network?: string;
  /** Coin types the wallet agrees to pay in, with their decimals. Default: USDC (6). */
  coinTypes?: Record<string, number>;
  /** How long to wait for the node to show the executed transaction. Default 30 s. */
  waitTimeoutMs?: number;
}

/** A refused or failed payment. `digest` is set once a transaction was sent: check it before paying again. */
export class SuiPaymentError extends ProtocolError {
  readonly digest: string | undefined;
  constructor(code: ProtocolErrorCode, message: string, digest?: string) {
    super(code, message);
    this.digest = digest;
  }
}

function refuse(code: ProtocolErrorCode, message: string): never {
  throw new SuiPaymentError(code, message);
}

interface Payment {
  coinType: string;
  legs: { to: string; amount: bigint }[];
  total: bigint;
}

function paymentOf(option: AcceptOption, coinTypes: Map<string, number>): Payment {
  if (option.chain !== 'sui') refuse('unsupported_chain', `a Sui wallet cannot pay on ${option.chain}`);
  let coinType: string;
  try {
    coinType = normalizeStructTag(option.coinType ?? '');
  } catch {
    refuse('invalid_requirement', 'the Sui option has no valid coinType');
  }
  const decimals = coinTypes.get(coinType);
  if (decimals === undefined) refuse('invalid_requirement', `the wallet does not pay in ${coinType}`);
  // Amounts are read with the option's decimals, so a wrong value would change what is paid.
  if (option.decimals !== decimals) refuse('invalid_requirement', `${coinType} has ${decimals} decimals`);
  const memoBytes = new TextEncoder().encode(typeof option.memo === 'string' ? option.memo : '').length;
  if (memoBytes === 0 || memoBytes > MAX_MEMO_BYTES)
    refuse('invalid_requirement', 'the option has no usable memo');
  const legs: Payment['legs'] = [];
  for (const split of option.splits ?? []) {
    const to =
      typeof split.payTo === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(split.payTo) ? split.payTo : '';
    if (!to || !isValidSuiAddress(normalizeSuiAddress(to)))
      refuse('invalid_requirement', 'a split has an invalid Sui address');
    const amount = parseAmount(split.amount, decimals);
    if (amount > 0n) legs.push({ to: normalizeSuiAddress(to), amount });
  }
  const total = legs.reduce((s, l) => s + l.amount, 0n);
  if (total === 0n) refuse('invalid_requirement', 'the option has nothing to pay');
  if (total !== parseAmount(option.totalAmount, decimals)) {
    refuse('invalid_requirement', 'the splits do not add up to totalAmount');
  }
  return { coinType, legs, total };
}

/**
 * @example
 * const wallet = suiWallet({ secretKey: 'suiprivkey1…', rpcUrl: 'https://fullnode.mainnet.sui.io:443', network: 'mainnet' });
 * const digest = await wallet.pay(requirement.accepts.find((a) => a.chain === 'sui')!);
 */
export function suiWallet(opts: SuiWalletOptions): PaymentWallet {
  const signer: Signer = suiSignerFrom(opts.secretKey);
  const owner = signer.toSuiAddress();
  const client = new SuiGrpcClient({ network: opts.network ?? 'mainnet', baseUrl: opts.rpcUrl });
  const waitTimeoutMs = opts.waitTimeoutMs ?? 30_000;
  const coinTypes = new Map(
    Object.entries(opts.coinTypes ?? { [USDC_SUI_COIN_TYPE]: USDC_DECIMALS }).map(([t, d]) => [
      normalizeStructTag(t),
      d,
    ]),
  );

  const chainIdentity = cachedIdentity(
    async (signal) => (await client.core.getChainIdentifier({ signal })).chainIdentifier,
  );

  async function checkNetwork(option: AcceptOption, signal?: AbortSignal): Promise<void> {
    if (opts.network !== undefined && option.network !== opts.network) {
      refuse('network_mismatch', `this wallet pays on ${opts.network}, not ${option.network}`);
    }
    assertNetwork(option, await chainIdentity({ signal }), `the node at ${opts.rpcUrl}`);
  }

  async function coinsFor(p: Payment, signal?: AbortSignal) {
    const coins: { objectId: string; version: string; digest: string; balance: bigint }[] = [];
    let cursor: string | null = null;
    do {
      const page = await client.core.listCoins({ owner, coinType: p.coinType, cursor, limit: 50, signal });
      for (const c of page.objects) coins.push({ ...c, balance: BigInt(c.balance) });
      cursor = page.hasNextPage ? page.cursor : null;
    } while (cursor);
    coins.sort((a, b) => (a.balance < b.balance ? 1 : a.balance > b.balance ? -1 : 0));
    const chosen: typeof coins = [];
    let sum = 0n;
    for (const c of coins) {
      if (sum >= p.total || chosen.length >= MAX_COINS) break;
      chosen.push(c);
      sum += c.balance;
    }
    if (sum < p.total) {
      refuse('payment_failed', `not enough ${p.coinType}: need ${p.total} atomic units, can use ${sum}`);
    }
    return chosen;
  }

  async function build(option: AcceptOption, p: Payment, signal?: AbortSignal): Promise<Uint8Array> {
    const coins = await coinsFor(p, signal);
    const tx = new Transaction();
    tx.setSender(owner);
    const [first, ...rest] = coins.map((c) => tx.objectRef(c));
    if (rest.length > 0) tx.mergeCoins(first!, rest);
    const parts = tx.splitCoins(
      first!,
      p.legs.map((l) => tx.pure.u64(l.amount)),
    );
    p.legs.forEach((leg, i) => {
      tx.transferObjects([parts[i]!], leg.to);
    });
    // Unused by any command, it stays in the signed bytes: it binds this payment to the quote.
    tx.pure.string(option.memo);
    try {
      return await tx.build({ client });
    } catch (e) {
      refuse('payment_failed', `could not build the payment: ${(e as Error).message}`);
    }
  }

  return {
    chain: 'sui',
    address: owner,
    chainIdentity,
    async pay(option, payOpts = {}) {
      const { signal } = payOpts;
      const payment = paymentOf(option, coinTypes);
      signal?.throwIfAborted();
      await checkNetwork(option, signal);
      const bytes = await build(option, payment, signal);
      const { signature } = await signer.signTransaction(bytes);
      const digest = TransactionDataBuilder.getDigestFromBytes(bytes);
      signal?.throwIfAborted();

      // From here the payment may be on-chain, so the caller's signal no longer stops us.
      let result: Awaited<ReturnType<typeof client.core.executeTransaction>>;
      try {
        result = await client.core.executeTransaction({ transaction: bytes, signatures: [signature] });
      } catch (e) {
        throw new SuiPaymentError(
          'payment_failed',
          `sending the payment failed: ${(e as Error).message}; check ${digest} before paying again`,
          digest,
        );
      }
      if (result.$kind === 'FailedTransaction') {
        const why = result.FailedTransaction.status.error?.message ?? 'unknown error';
        throw new SuiPaymentError('payment_failed', `payment transaction failed on-chain: ${why}`, digest);
      }
      try {
        await client.core.waitForTransaction({ digest, timeout: waitTimeoutMs });
      } catch {
        throw new SuiPaymentError(
          'payment_failed',
          `payment ${digest} not visible on the node within ${waitTimeoutMs} ms; check it before paying again`,
          digest,
        );
      }
      return digest;
    },
  };
}
