/**
 * The JSON-RPC methods the sandbox serves, answering with mainnet's shapes. Numbers
 * that can exceed 2^53 stay bigint; the server writes them as raw JSON integers.
 */
import {
  getBase58Decoder,
  getBase58Encoder,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  isAddress,
  isSignature,
} from '@solana/kit';
import { RPC, RpcError } from './errors.ts';
import type { Faucet } from './faucet.ts';
import type { SolanaLedger } from './ledger.ts';
import {
  readMintDecimals,
  readTokenAccount,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  uiTokenAmount,
} from './parse.ts';
import { transactionBodies } from './record.ts';

export type SolanaFault = 'none' | 'rpc_down' | 'hold_finality' | 'not_found' | 'slow' | 'error_500';

export interface MethodContext {
  ledger: SolanaLedger;
  faucet: Faucet;
  genesisHash: string;
  fault(): SolanaFault;
}

export type Handler = (params: unknown[]) => unknown;

const API_VERSION = '2.2.16';
const RENT_EXEMPT_EPOCH = 18446744073709551615n;

const invalid = (what: string) => new RpcError(RPC.invalidParams, `Invalid param: ${what}`);

function addressParam(v: unknown): string {
  if (typeof v !== 'string' || !isAddress(v)) throw invalid('Invalid');
  return v;
}

function config(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

type ReadAccount = ReturnType<SolanaLedger['read']>;

function encodeAccount(
  ctx: MethodContext,
  acc: ReadAccount,
  encoding: unknown,
): Record<string, unknown> | null {
  if (!acc.exists) return null;
  const data = acc.data ?? new Uint8Array(0);
  const base = {
    executable: acc.executable,
    lamports: acc.lamports,
    owner: acc.programAddress,
    rentEpoch: RENT_EXEMPT_EPOCH,
    space: acc.space,
  };
  const enc = encoding ?? 'base58';
  if (enc === 'jsonParsed') {
    const token = readTokenAccount(acc);
    if (token) {
      const decimals = readMintDecimals(ctx.ledger.read(token.mint)) ?? 0;
      const info = {
        isNative: false,
        mint: token.mint,
        owner: token.owner,
        state: 'initialized',
        tokenAmount: uiTokenAmount(token.amount, decimals),
      };
      const program = token.programId === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
      return { ...base, data: { program, parsed: { type: 'account', info }, space: acc.space } };
    }
    // Mainnet falls back to base64 for data it cannot parse.
    return { ...base, data: [getBase64Decoder().decode(data), 'base64'] };
  }
  if (enc === 'base64') return { ...base, data: [getBase64Decoder().decode(data), 'base64'] };
  if (enc === 'base58') return { ...base, data: [getBase58Decoder().decode(data), 'base58'] };
  throw invalid(`unsupported encoding ${JSON.stringify(enc)}`);
}

function decodeWire(payload: unknown, encoding: unknown): Uint8Array {
  if (typeof payload !== 'string') throw invalid('transaction must be a string');
  try {
    if (encoding === 'base64') return new Uint8Array(getBase64Encoder().encode(payload));
    if (encoding === undefined || encoding === 'base58')
      return new Uint8Array(getBase58Encoder().encode(payload));
  } catch {
    throw new RpcError(
      RPC.invalidParams,
      `invalid transaction: failed to decode ${String(encoding ?? 'base58')}`,
    );
  }
  throw invalid(`unsupported encoding ${JSON.stringify(encoding)}`);
}

const ACCOUNT_STATUS = { processed: 0, confirmed: 1, finalized: 2 } as const;

export function createMethods(ctx: MethodContext): Record<string, Handler> {
  const { ledger } = ctx;
  const withContext = (value: unknown) => ({
    context: { apiVersion: API_VERSION, slot: ledger.slot },
    value,
  });

  const tokenAccountsOf = (owner: string, filter: Record<string, unknown>) => {
    const mint = typeof filter['mint'] === 'string' ? filter['mint'] : null;
    const programId = typeof filter['programId'] === 'string' ? filter['programId'] : null;
    if (!mint && !programId) throw invalid('filter must have mint or programId');
    if (programId && programId !== TOKEN_PROGRAM && programId !== TOKEN_2022_PROGRAM) {
      throw invalid('unrecognized Token program id');
    }
    return ledger.tokenAccountsOf(owner, { mint, programs: programId ? [programId] : undefined });
  };

  return {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': API_VERSION, 'feature-set': 3294202862 }),
    getGenesisHash: () => ctx.genesisHash,
    getSlot: () => ledger.slot,
    getBlockHeight: () => ledger.blockHeight,
    getEpochInfo: () => {
      const slotsInEpoch = 432_000n;
      return {
        absoluteSlot: ledger.slot,
        blockHeight: ledger.blockHeight,
        epoch: ledger.slot / slotsInEpoch,
        slotIndex: ledger.slot % slotsInEpoch,
        slotsInEpoch,
        transactionCount: null,
      };
    },
    getLatestBlockhash: () => withContext(ledger.latestBlockhash()),
    isBlockhashValid: ([hash]) => withContext(typeof hash === 'string' && ledger.isBlockhashValid(hash)),
    getFeeForMessage: ([msg]) => {
      if (typeof msg !== 'string') throw invalid('message must be base64');
      try {
        const m = getCompiledTransactionMessageDecoder().decode(getBase64Encoder().encode(msg));
        if (!ledger.isBlockhashValid(m.lifetimeToken)) return withContext(null);
        return withContext(5000n * BigInt(m.header.numSignerAccounts));
      } catch {
        throw invalid('invalid message');
      }
    },
    getMinimumBalanceForRentExemption: ([len]) => {
      if (typeof len !== 'number' || !Number.isSafeInteger(len) || len < 0) throw invalid('data length');
      return ledger.svm.minimumBalanceForRentExemption(BigInt(len));
    },
    getBalance: ([addr]) => withContext(ledger.read(addressParam(addr)).lamports),
    getAccountInfo: ([addr, cfg]) =>
      withContext(encodeAccount(ctx, ledger.read(addressParam(addr)), config(cfg)['encoding'])),
    getMultipleAccounts: ([addrs, cfg]) => {
      if (!Array.isArray(addrs) || addrs.length > 100) throw invalid('expected up to 100 addresses');
      const encoding = config(cfg)['encoding'];
      return withContext(addrs.map((a) => encodeAccount(ctx, ledger.read(addressParam(a)), encoding)));
    },
    getTokenAccountsByOwner: ([owner, filter, cfg]) => {
      const encoding = config(cfg)['encoding'];
      const found = tokenAccountsOf(addressParam(owner), config(filter));
      return withContext(
        found.map(({ pubkey }) => ({ pubkey, account: encodeAccount(ctx, ledger.read(pubkey), encoding) })),
      );
    },
    getTokenAccountBalance: ([addr]) => {
      const token = readTokenAccount(ledger.read(addressParam(addr)));
      if (!token) throw invalid('not a Token account');
      return withContext(uiTokenAmount(token.amount, readMintDecimals(ledger.read(token.mint)) ?? 0));
    },
    getSignatureStatuses: ([sigs]) => {
      if (!Array.isArray(sigs) || sigs.length > 256) throw invalid('expected up to 256 signatures');
      return withContext(
        sigs.map((s) => {
          const r = typeof s === 'string' ? ledger.record(s) : undefined;
          if (!r) return null;
          return {
            slot: r.slot,
            confirmations: r.confirmationStatus === 'finalized' ? null : 1,
            err: r.err,
            status: r.err === null ? { Ok: null } : { Err: r.err },
            confirmationStatus: r.confirmationStatus,
          };
        }),
      );
    },
    getTransaction: ([sig, cfg]) => {
      if (typeof sig !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(sig) || !isSignature(sig)) {
        throw invalid('Invalid');
      }
      const c = config(cfg);
      const commitment = (c['commitment'] ?? 'finalized') as string;
      if (commitment === 'processed') {
        throw invalid('Method does not support commitment below `confirmed`');
      }
      if (!(commitment in ACCOUNT_STATUS)) throw invalid(`unknown commitment ${commitment}`);
      const encoding = c['encoding'] ?? 'json';
      if (encoding !== 'jsonParsed' && encoding !== 'json' && encoding !== 'base64') {
        throw invalid(`unsupported encoding ${JSON.stringify(encoding)}`);
      }
      if (ctx.fault() === 'not_found') return null;
      const r = ledger.record(sig);
      if (!r) return null;
      if (ACCOUNT_STATUS[r.confirmationStatus] < ACCOUNT_STATUS[commitment as keyof typeof ACCOUNT_STATUS]) {
        return null;
      }
      const body = transactionBodies(r.view)[encoding];
      if (body['version'] !== 'legacy' && c['maxSupportedTransactionVersion'] === undefined) {
        throw new RpcError(
          RPC.unsupportedTransactionVersion,
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
        );
      }
      return body;
    },
    simulateTransaction: ([payload, cfg]) => {
      const c = config(cfg);
      const sigVerify = c['sigVerify'] === true;
      const replaceRecentBlockhash = c['replaceRecentBlockhash'] === true;
      if (sigVerify && replaceRecentBlockhash) {
        throw invalid('sigVerify may not be used with replaceRecentBlockhash');
      }
      const sim = ledger.simulate(decodeWire(payload, c['encoding']), { sigVerify, replaceRecentBlockhash });
      return withContext({
        err: sim.err,
        logs: sim.logs,
        accounts: null,
        unitsConsumed: sim.unitsConsumed,
        returnData: null,
        innerInstructions: null,
        ...(sim.replacementBlockhash ? { replacementBlockhash: sim.replacementBlockhash } : {}),
      });
    },
    sendTransaction: ([payload, cfg]) => {
      const c = config(cfg);
      return ledger.submit(decodeWire(payload, c['encoding']), {
        skipPreflight: c['skipPreflight'] === true,
      });
    },
    requestAirdrop: ([addr, amount]) => {
      if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0)
        throw invalid('lamports');
      return ctx.faucet.airdrop(addressParam(addr), BigInt(amount));
    },
  };
}
