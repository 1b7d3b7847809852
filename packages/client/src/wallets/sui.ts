/**
 * Pays Tollgate accept options on Sui: ONE programmable transaction that merges the
 * payer's coins of the option's coin type, splits one coin per split, transfers each to
 * its recipient, and carries the option's memo as a Pure string input. Gas is chosen by
 * the node while the SDK builds the transaction (SimulateTransaction).
 */
import type { Signer } from '@mysten/sui/cryptography';
import { SuiGrpcClient } from '@mysten/sui/grpc';
import { Transaction, TransactionDataBuilder } from '@mysten/sui/transactions';
import { isValidSuiAddress, normalizeStructTag, normalizeSuiAddress, toBase64 } from '@mysten/sui/utils';
import type {
  AcceptOption,
  ProtocolErrorCode,
  V2PaymentPayload,
  V2Requirements,
  V2Resource,
} from '@tollgate/protocol';
import {
  encodePaymentSignature,
  ProtocolError,
  parseAmount,
  suiCaip2,
  USDC_DECIMALS,
  USDC_SUI_COIN_TYPE,
} from '@tollgate/protocol';
import { assertNetwork, cachedIdentity } from './network.ts';
import type { SuiSecretKey } from './sui-keys.ts';
import { suiSignerFrom } from './sui-keys.ts';
import type { MessageSigner, PaymentWallet } from './wallet.ts';

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
 * An x402 v2 `exact` payload on Sui: `transaction` is the base64 BCS TransactionData, signed
 * but NOT executed; `signature` the payer's base64 serialized signature over it. The payee
 * (facilitator) executes it. `digest` is what it will be on-chain, for the payer's records.
 */
export type SignedSuiExactV2 = {
  transaction: string;
  signature: string;
  digest: string;
};

/** A Sui PaymentWallet that can also sign x402 v2 `exact` payments for the payee to execute. */
export interface SuiWallet extends PaymentWallet, MessageSigner {
  readonly chain: 'sui';
  /**
   * Builds and signs, WITHOUT executing, one transaction that pays `requirements.amount` of
   * `requirements.asset` to `requirements.payTo`, with `extra.memo` (if any) as a Pure string
   * input, the payer's own SUI as gas, and an expiration at the end of the next epoch. Refuses
   * (`network_mismatch`) requirements whose CAIP-2 network is not its node's chain.
   * It spends the wallet's coins at their current versions: a second payment signed before the
   * payee executed the first spends the same versions, and only one of the two can land. Wait
   * for each paid answer before signing the next.
   */
  signExactV2(requirements: V2Requirements, opts?: { signal?: AbortSignal }): Promise<SignedSuiExactV2>;
}

/** What the wallet pays for v2 requirements (checked before anything is built). */
function v2PaymentOf(
  req: V2Requirements,
  coinTypes: Map<string, number>,
): Payment & { memo: string | undefined } {
  if (req.scheme !== 'exact')
    refuse('invalid_requirement', `the Sui wallet pays scheme exact, not ${req.scheme}`);
  if (typeof req.network !== 'string' || !req.network.startsWith('sui:')) {
    refuse('unsupported_chain', `a Sui wallet cannot pay on ${String(req.network)}`);
  }
  let coinType: string;
  try {
    coinType = normalizeStructTag(req.asset ?? '');
  } catch {
    refuse('invalid_requirement', 'the requirements have no valid Sui coin type as asset');
  }
  if (!coinTypes.has(coinType)) refuse('invalid_requirement', `the wallet does not pay in ${coinType}`);
  if (typeof req.amount !== 'string' || !/^[1-9][0-9]{0,24}$/.test(req.amount)) {
    refuse('invalid_requirement', 'amount must be a positive integer of atomic units');
  }
  const to = typeof req.payTo === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(req.payTo) ? req.payTo : '';
  if (!to || !isValidSuiAddress(normalizeSuiAddress(to)))
    refuse('invalid_requirement', 'payTo is not a Sui address');
  const method = req.extra?.assetTransferMethod;
  if (method !== undefined && method !== 'coin') {
    refuse('invalid_requirement', `the wallet pays with coins and its own gas, not ${String(method)}`);
  }
  const memo = req.extra?.memo;
  if (memo !== undefined) {
    const bytes = typeof memo === 'string' ? new TextEncoder().encode(memo).length : 0;
    if (bytes === 0 || bytes > MAX_MEMO_BYTES)
      refuse('invalid_requirement', 'extra.memo is not a usable memo');
  }
  const amount = BigInt(req.amount);
  return {
    coinType,
    legs: [{ to: normalizeSuiAddress(to), amount }],
    total: amount,
    memo: memo as string | undefined,
  };
}

/**
 * The `PAYMENT-SIGNATURE` header value for paying `accepted` (one entry of a 402's
 * `PAYMENT-REQUIRED` accepts, echoed verbatim) with `wallet`. Nothing is executed: the
 * payee does that, and `digest` is what the payment will be on-chain.
 * @example
 * const { header } = await suiExactV2PaymentSignature(wallet, required.accepts[0], { resource: required.resource });
 * await fetch(url, { headers: { 'PAYMENT-SIGNATURE': header } });
 */
export async function suiExactV2PaymentSignature(
  wallet: SuiWallet,
  accepted: V2Requirements,
  opts: { resource?: V2Resource; signal?: AbortSignal } = {},
): Promise<{ header: string; paymentPayload: V2PaymentPayload; digest: string }> {
  const { transaction, signature, digest } = await wallet.signExactV2(
    accepted,
    opts.signal ? { signal: opts.signal } : {},
  );
  const paymentPayload: V2PaymentPayload = {
    x402Version: 2,
    ...(opts.resource ? { resource: opts.resource } : {}),
    accepted,
    payload: { signature, transaction },
  };
  return { header: encodePaymentSignature(paymentPayload), paymentPayload, digest };
}

/**
 * @example
 * const wallet = suiWallet({ secretKey: 'suiprivkey1…', rpcUrl: 'https://fullnode.mainnet.sui.io:443', network: 'mainnet' });
 * const digest = await wallet.pay(requirement.accepts.find((a) => a.chain === 'sui')!);
 */
export function suiWallet(opts: SuiWalletOptions): SuiWallet {
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

  async function build(
    memo: string | undefined,
    p: Payment,
    signal?: AbortSignal,
    expiration?: { Epoch: number },
  ): Promise<Uint8Array> {
    const coins = await coinsFor(p, signal);
    const tx = new Transaction();
    tx.setSender(owner);
    if (expiration) tx.setExpiration(expiration);
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
    if (memo !== undefined) tx.pure.string(memo);
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
    async signMessage(message) {
      return (await signer.signPersonalMessage(new TextEncoder().encode(message))).signature;
    },
    async pay(option, payOpts = {}) {
      const { signal } = payOpts;
      const payment = paymentOf(option, coinTypes);
      signal?.throwIfAborted();
      await checkNetwork(option, signal);
      const bytes = await build(option.memo, payment, signal);
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
    async signExactV2(requirements, signOpts = {}) {
      const { signal } = signOpts;
      const payment = v2PaymentOf(requirements, coinTypes);
      signal?.throwIfAborted();
      const network = suiCaip2(await chainIdentity(signal ? { signal } : {}));
      if (network !== requirements.network) {
        refuse(
          'network_mismatch',
          `the requirements are on ${requirements.network}, but the node at ${opts.rpcUrl} is on ${network}; nothing was signed`,
        );
      }
      let epoch: number;
      try {
        epoch = Number((await client.core.getCurrentSystemState({ signal })).systemState.epoch);
      } catch (e) {
        refuse('payment_failed', `could not read the current epoch: ${(e as Error).message}`);
      }
      if (!Number.isSafeInteger(epoch)) refuse('payment_failed', 'the node reports no current epoch');
      // Valid to the end of the next epoch: a signed payment nobody executes does not linger.
      const bytes = await build(payment.memo, payment, signal, { Epoch: epoch + 1 });
      const { signature } = await signer.signTransaction(bytes);
      return {
        transaction: toBase64(bytes),
        signature,
        digest: TransactionDataBuilder.getDigestFromBytes(bytes),
      };
    },
  };
}
