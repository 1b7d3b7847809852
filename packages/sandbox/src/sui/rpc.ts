/**
 * The sui.rpc.v2 methods SuiGrpcClient uses to read state, build (simulate) and execute
 * transactions, answered from the ledger. Keys are `service/method` as on the wire.
 */
import { GrpcStatusCode, GrpcTypes } from '@mysten/sui/grpc';
import {
  isValidSuiAddress,
  isValidTransactionDigest,
  normalizeStructTag,
  normalizeSuiAddress,
} from '@mysten/sui/utils';
import { coinObjectType, PROTOCOL_VERSION } from './constants.ts';
import type { SuiLedger } from './ledger.ts';
import type { Coin } from './objects.ts';
import { planFromBcs, planFromProto, Rejected } from './plan.ts';
import { coinMetadata, coinObject, executedTransaction, timestamp } from './proto.ts';

/** An RPC answered with a non-OK gRPC status. */
export class RpcFailure extends Error {
  readonly code: GrpcStatusCode;
  constructor(code: GrpcStatusCode, message: string) {
    super(message);
    this.code = code;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: requests are decoded by the method's own MessageType
export type Handler = (request: any) => object | Promise<object>;

function address(value: string | undefined, field: string): string {
  const a = value ? normalizeSuiAddress(value) : '';
  if (!isValidSuiAddress(a)) throw new RpcFailure(GrpcStatusCode.INVALID_ARGUMENT, `invalid ${field}`);
  return a;
}

function coinType(value: string | undefined): string {
  try {
    return normalizeStructTag(value ?? '');
  } catch {
    throw new RpcFailure(GrpcStatusCode.INVALID_ARGUMENT, 'invalid coin_type');
  }
}

/** Matches `0x2::coin::Coin<T>` exactly, or any Coin when the filter has no type parameters. */
function typeMatcher(filter: string | undefined): (c: Coin) => boolean {
  if (!filter) return () => true;
  let norm: string;
  try {
    norm = normalizeStructTag(filter);
  } catch {
    throw new RpcFailure(GrpcStatusCode.INVALID_ARGUMENT, 'invalid object_type');
  }
  return (c) => {
    const t = normalizeStructTag(coinObjectType(c.coinType));
    return norm.includes('<') ? t === norm : t.startsWith(`${norm}<`);
  };
}

function page<T>(items: T[], pageSize: number | undefined, token: Uint8Array | undefined) {
  const start = token?.length ? Number(new TextDecoder().decode(token)) : 0;
  if (!Number.isSafeInteger(start) || start < 0)
    throw new RpcFailure(GrpcStatusCode.INVALID_ARGUMENT, 'bad page_token');
  const size = Math.min(Math.max(pageSize || 50, 1), 1000);
  const slice = items.slice(start, start + size);
  const next = start + size < items.length ? new TextEncoder().encode(String(start + size)) : undefined;
  return { slice, next };
}

function wrapRejected<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof Rejected) throw new RpcFailure(GrpcStatusCode.INVALID_ARGUMENT, e.message);
    throw e;
  }
}

export function makeHandlers(ledger: SuiLedger, opts: { chain: string; forceNotFound: () => boolean }) {
  const findTx = (digest: string | undefined) => {
    if (!digest || !isValidTransactionDigest(digest)) {
      throw new RpcFailure(GrpcStatusCode.INVALID_ARGUMENT, 'invalid transaction digest');
    }
    const t = opts.forceNotFound() ? undefined : ledger.getTransaction(digest);
    if (!t) throw new RpcFailure(GrpcStatusCode.NOT_FOUND, `Transaction ${digest} not found`);
    return executedTransaction(t, ledger.epoch);
  };
  const findObject = (req: GrpcTypes.GetObjectRequest) => {
    const coin = ledger.objects.get(address(req.objectId, 'object_id'));
    if (!coin || (req.version !== undefined && req.version !== coin.version)) {
      throw new RpcFailure(GrpcStatusCode.NOT_FOUND, `Object ${req.objectId} not found`);
    }
    return coinObject(coin);
  };
  const balanceOf = (owner: string, type: string): GrpcTypes.Balance => {
    const total = ledger.objects.ownedBy(owner, type).reduce((s, c) => s + c.balance, 0n);
    return { coinType: type, balance: total, coinBalance: total, addressBalance: 0n };
  };
  const epoch = (): GrpcTypes.Epoch => ({
    epoch: ledger.epoch,
    referenceGasPrice: ledger.referenceGasPrice,
    firstCheckpoint: 0n,
    start: timestamp(ledger.epochStartMs),
    protocolConfig: { protocolVersion: PROTOCOL_VERSION, featureFlags: {}, attributes: {}, configs: {} },
    systemState: {
      version: 2n,
      epoch: ledger.epoch,
      protocolVersion: PROTOCOL_VERSION,
      referenceGasPrice: ledger.referenceGasPrice,
      safeMode: false,
      epochStartTimestampMs: BigInt(ledger.epochStartMs),
      parameters: { epochDurationMs: 86_400_000n },
      validatorReportRecords: [],
    },
  });

  const handlers: Record<string, Handler> = {
    'sui.rpc.v2.LedgerService/GetServiceInfo': (): GrpcTypes.GetServiceInfoResponse => ({
      chainId: ledger.chainId,
      chain: opts.chain,
      epoch: ledger.epoch,
      checkpointHeight: ledger.checkpointHeight,
      timestamp: timestamp(ledger.checkpointTimestampMs),
      lowestAvailableCheckpoint: 0n,
      lowestAvailableCheckpointObjects: 0n,
      server: 'tollgate-sui-sandbox',
    }),
    'sui.rpc.v2.LedgerService/GetEpoch': (): GrpcTypes.GetEpochResponse => ({ epoch: epoch() }),
    'sui.rpc.v2.LedgerService/GetTransaction': (
      r: GrpcTypes.GetTransactionRequest,
    ): GrpcTypes.GetTransactionResponse => ({
      transaction: findTx(r.digest),
    }),
    'sui.rpc.v2.LedgerService/BatchGetTransactions': (
      r: GrpcTypes.BatchGetTransactionsRequest,
    ): GrpcTypes.BatchGetTransactionsResponse => ({
      transactions: r.digests.map((d) => {
        try {
          return { result: { oneofKind: 'transaction', transaction: findTx(d) } };
        } catch (e) {
          const f = e as RpcFailure;
          return { result: { oneofKind: 'error', error: { code: f.code, message: f.message, details: [] } } };
        }
      }),
    }),
    'sui.rpc.v2.LedgerService/GetObject': (r: GrpcTypes.GetObjectRequest): GrpcTypes.GetObjectResponse => ({
      object: findObject(r),
    }),
    'sui.rpc.v2.LedgerService/BatchGetObjects': (
      r: GrpcTypes.BatchGetObjectsRequest,
    ): GrpcTypes.BatchGetObjectsResponse => ({
      objects: r.requests.map((req) => {
        try {
          return { result: { oneofKind: 'object', object: findObject(req) } };
        } catch (e) {
          if (!(e instanceof RpcFailure)) throw e;
          return { result: { oneofKind: 'error', error: { code: e.code, message: e.message, details: [] } } };
        }
      }),
    }),
    'sui.rpc.v2.StateService/ListOwnedObjects': (
      r: GrpcTypes.ListOwnedObjectsRequest,
    ): GrpcTypes.ListOwnedObjectsResponse => {
      const match = typeMatcher(r.objectType);
      const all = ledger.objects.ownedBy(address(r.owner, 'owner')).filter(match);
      const { slice, next } = page(all, r.pageSize, r.pageToken);
      return { objects: slice.map(coinObject), ...(next ? { nextPageToken: next } : {}) };
    },
    'sui.rpc.v2.StateService/GetBalance': (r: GrpcTypes.GetBalanceRequest): GrpcTypes.GetBalanceResponse => ({
      balance: balanceOf(address(r.owner, 'owner'), coinType(r.coinType)),
    }),
    'sui.rpc.v2.StateService/ListBalances': (
      r: GrpcTypes.ListBalancesRequest,
    ): GrpcTypes.ListBalancesResponse => {
      const owner = address(r.owner, 'owner');
      const types = [...new Set(ledger.objects.ownedBy(owner).map((c) => c.coinType))].sort();
      const { slice, next } = page(types, r.pageSize, r.pageToken);
      return { balances: slice.map((t) => balanceOf(owner, t)), ...(next ? { nextPageToken: next } : {}) };
    },
    'sui.rpc.v2.StateService/GetCoinInfo': (
      r: GrpcTypes.GetCoinInfoRequest,
    ): GrpcTypes.GetCoinInfoResponse => {
      const type = coinType(r.coinType);
      const metadata = coinMetadata(type);
      if (!metadata) throw new RpcFailure(GrpcStatusCode.NOT_FOUND, `no coin metadata for ${type}`);
      return { coinType: type, metadata };
    },
    'sui.rpc.v2.TransactionExecutionService/SimulateTransaction': (
      r: GrpcTypes.SimulateTransactionRequest,
    ): GrpcTypes.SimulateTransactionResponse =>
      wrapRejected(() => {
        const tx = r.transaction;
        if (!tx) throw new Rejected('missing transaction');
        const plan = tx.bcs?.value?.length ? planFromBcs(tx.bcs.value) : planFromProto(tx);
        const checks = r.checks !== GrpcTypes.SimulateTransactionRequest_TransactionChecks.DISABLED;
        const sim = ledger.simulate(plan, { doGasSelection: r.doGasSelection ?? false, checks });
        const executed = executedTransaction(
          { ...sim, signatures: [], checkpoint: null, timestampMs: null },
          ledger.epoch,
        );
        return { transaction: executed, commandOutputs: [], suggestedGasPrice: ledger.referenceGasPrice };
      }),
    'sui.rpc.v2.TransactionExecutionService/ExecuteTransaction': async (
      r: GrpcTypes.ExecuteTransactionRequest,
    ): Promise<GrpcTypes.ExecuteTransactionResponse> => {
      const bytes = r.transaction?.bcs?.value;
      if (!bytes?.length)
        throw new RpcFailure(GrpcStatusCode.INVALID_ARGUMENT, 'transaction.bcs is required');
      const signatures = r.signatures.map((s) => s.bcs?.value ?? new Uint8Array());
      try {
        const record = await ledger.execute(bytes, signatures);
        return { transaction: executedTransaction(record, ledger.epoch) };
      } catch (e) {
        if (e instanceof Rejected) throw new RpcFailure(GrpcStatusCode.INVALID_ARGUMENT, e.message);
        throw e;
      }
    },
  };
  return handlers;
}
