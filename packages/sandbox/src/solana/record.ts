/**
 * Builds the body `getTransaction` returns for an executed transaction, in the
 * encodings mainnet serves: `jsonParsed` (what verifiers read), `json` (compiled
 * instructions) and `base64` (the signed wire bytes, for callers that check
 * signatures themselves).
 */
import type {
  CompiledTransactionMessageWithLifetime,
  LegacyCompiledTransactionMessage,
  V0CompiledTransactionMessage,
} from '@solana/kit';
import { getBase58Decoder } from '@solana/kit';
import type { TransactionErrorJson } from './errors.ts';
import type { ParsedInstruction, TokenBalance } from './parse.ts';
import { parseInstruction } from './parse.ts';

/** The message versions mainnet runs (v1 is not live there, so the sandbox refuses it). */
export type ExecutableMessage = (LegacyCompiledTransactionMessage | V0CompiledTransactionMessage) &
  CompiledTransactionMessageWithLifetime;

export interface InnerInstructionView {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
  stackHeight: number;
}

export interface ExecutionView {
  signatures: string[];
  wireBase64: string;
  message: ExecutableMessage;
  slot: bigint;
  blockTime: number;
  err: TransactionErrorJson | null;
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  /** Per top-level instruction, the instructions it invoked. */
  inner: InnerInstructionView[][];
  logs: string[];
  computeUnits: bigint;
}

export interface TransactionBodies {
  jsonParsed: Record<string, unknown>;
  json: Record<string, unknown>;
  base64: Record<string, unknown>;
}

function isWritable(message: ExecutableMessage, index: number): boolean {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  if (index < numSignerAccounts) return index < numSignerAccounts - numReadonlySignerAccounts;
  return index < message.staticAccounts.length - numReadonlyNonSignerAccounts;
}

export function transactionBodies(x: ExecutionView): TransactionBodies {
  const keys: string[] = [...x.message.staticAccounts];
  const base58 = getBase58Decoder();
  const parsed = (
    programIndex: number,
    accounts: readonly number[],
    data: Uint8Array,
    height: number | null,
  ) =>
    parseInstruction(
      keys[programIndex] ?? '',
      accounts.map((i) => keys[i] ?? ''),
      data,
      height,
    );

  const parsedInner: { index: number; instructions: ParsedInstruction[] }[] = [];
  const compiledInner: { index: number; instructions: unknown[] }[] = [];
  x.inner.forEach((list, index) => {
    if (list.length === 0) return;
    parsedInner.push({
      index,
      instructions: list.map((i) => parsed(i.programIdIndex, i.accounts, i.data, i.stackHeight)),
    });
    compiledInner.push({
      index,
      instructions: list.map((i) => ({
        programIdIndex: i.programIdIndex,
        accounts: i.accounts,
        data: base58.decode(i.data),
        stackHeight: i.stackHeight,
      })),
    });
  });

  const meta = (innerInstructions: unknown) => ({
    err: x.err,
    status: x.err === null ? { Ok: null } : { Err: x.err },
    fee: x.fee,
    preBalances: x.preBalances,
    postBalances: x.postBalances,
    innerInstructions,
    logMessages: x.logs,
    preTokenBalances: x.preTokenBalances,
    postTokenBalances: x.postTokenBalances,
    rewards: [],
    loadedAddresses: { readonly: [], writable: [] },
    computeUnitsConsumed: x.computeUnits,
  });
  const version = x.message.version === 'legacy' ? 'legacy' : x.message.version;
  const common = { slot: x.slot, blockTime: x.blockTime, version };

  const message: Record<string, unknown> = {
    accountKeys: keys.map((pubkey, i) => ({
      pubkey,
      signer: i < x.message.header.numSignerAccounts,
      source: 'transaction',
      writable: isWritable(x.message, i),
    })),
    instructions: x.message.instructions.map((ix) =>
      parsed(ix.programAddressIndex, ix.accountIndices ?? [], new Uint8Array(ix.data ?? []), null),
    ),
    recentBlockhash: x.message.lifetimeToken,
  };
  if (version !== 'legacy') message['addressTableLookups'] = [];

  const { header } = x.message;
  const compiledMessage: Record<string, unknown> = {
    accountKeys: keys,
    header: {
      numReadonlySignedAccounts: header.numReadonlySignerAccounts,
      numReadonlyUnsignedAccounts: header.numReadonlyNonSignerAccounts,
      numRequiredSignatures: header.numSignerAccounts,
    },
    instructions: x.message.instructions.map((ix) => ({
      programIdIndex: ix.programAddressIndex,
      accounts: ix.accountIndices ?? [],
      data: base58.decode(new Uint8Array(ix.data ?? [])),
      stackHeight: null,
    })),
    recentBlockhash: x.message.lifetimeToken,
  };
  if (version !== 'legacy') compiledMessage['addressTableLookups'] = [];

  return {
    jsonParsed: { ...common, meta: meta(parsedInner), transaction: { message, signatures: x.signatures } },
    json: {
      ...common,
      meta: meta(compiledInner),
      transaction: { message: compiledMessage, signatures: x.signatures },
    },
    base64: { ...common, meta: meta(compiledInner), transaction: [x.wireBase64, 'base64'] },
  };
}
