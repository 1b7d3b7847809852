/**
 * Mainnet's `jsonParsed` rendering of instructions and token balances, rebuilt from
 * raw bytes because litesvm only reports account state, logs and compiled
 * instructions. Shapes follow Agave's solana-transaction-status parsers.
 */
import { getBase58Decoder } from '@solana/kit';
import {
  formatAmount,
  SOLANA_MEMO_PROGRAMS,
  SPL_TOKEN_2022_PROGRAM,
  SPL_TOKEN_PROGRAM,
} from '@tollgate/protocol';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const TOKEN_PROGRAM = SPL_TOKEN_PROGRAM;
export const TOKEN_2022_PROGRAM = SPL_TOKEN_2022_PROGRAM;
export const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const MEMO_PROGRAMS = SOLANA_MEMO_PROGRAMS;

const TOKEN_ACCOUNT_LEN = 165;
const MINT_LEN = 82;

export type ParsedInstruction =
  | { program: string; programId: string; parsed: unknown; stackHeight: number | null }
  | { programId: string; accounts: string[]; data: string; stackHeight: number | null };

export interface UiTokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number;
  uiAmountString: string;
}

export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  return {
    amount: amount.toString(),
    decimals,
    uiAmount: Number(amount) / 10 ** decimals,
    uiAmountString: formatAmount(amount, decimals),
  };
}

const u64 = (data: Uint8Array, at: number) =>
  new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(at, true);
const u32 = (data: Uint8Array, at: number) =>
  new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(at, true);
const base58 = (bytes: Uint8Array) => getBase58Decoder().decode(bytes);

/** The signing authority as Agave names it: `authority`, or `multisigAuthority` + `signers`. */
function authorityInfo(accounts: string[], at: number, key = 'authority'): Record<string, unknown> {
  if (accounts.length > at + 1) {
    const multisig = `multisig${key[0]!.toUpperCase()}${key.slice(1)}`;
    return { [multisig]: accounts[at], signers: accounts.slice(at + 1) };
  }
  return { [key]: accounts[at] };
}

const EXTENSION_NAMES: Record<number, string> = { 7: 'immutableOwner' };

type Parsed = { type: string; info: Record<string, unknown> };

/** SPL Token instructions by tag; only the ones payments and account set-up use. */
function parseToken(data: Uint8Array, a: string[]): Parsed | null {
  const tag = data[0];
  const amount = () => u64(data, 1).toString();
  const checked = () => uiTokenAmount(u64(data, 1), data[9]!);
  switch (tag) {
    case 1:
      if (a.length < 4) return null;
      return {
        type: 'initializeAccount',
        info: { account: a[0], mint: a[1], owner: a[2], rentSysvar: a[3] },
      };
    case 3:
      if (data.length < 9 || a.length < 3) return null;
      return {
        type: 'transfer',
        info: { source: a[0], destination: a[1], amount: amount(), ...authorityInfo(a, 2) },
      };
    case 7:
      if (data.length < 9 || a.length < 3) return null;
      return {
        type: 'mintTo',
        info: { mint: a[0], account: a[1], amount: amount(), ...authorityInfo(a, 2, 'mintAuthority') },
      };
    case 9:
      if (a.length < 3) return null;
      return {
        type: 'closeAccount',
        info: { account: a[0], destination: a[1], ...authorityInfo(a, 2, 'owner') },
      };
    case 12:
      if (data.length < 10 || a.length < 4) return null;
      return {
        type: 'transferChecked',
        info: { source: a[0], mint: a[1], destination: a[2], tokenAmount: checked(), ...authorityInfo(a, 3) },
      };
    case 14:
      if (data.length < 10 || a.length < 3) return null;
      return {
        type: 'mintToChecked',
        info: { mint: a[0], account: a[1], tokenAmount: checked(), ...authorityInfo(a, 2, 'mintAuthority') },
      };
    case 18:
      if (data.length < 33 || a.length < 2) return null;
      return {
        type: 'initializeAccount3',
        info: { account: a[0], mint: a[1], owner: base58(data.subarray(1, 33)) },
      };
    case 21: {
      if (a.length < 1 || data.length % 2 === 0) return null;
      const extensionTypes: string[] = [];
      for (let at = 1; at < data.length; at += 2) {
        const n = new DataView(data.buffer, data.byteOffset).getUint16(at, true);
        extensionTypes.push(EXTENSION_NAMES[n] ?? `extension${n}`);
      }
      return {
        type: 'getAccountDataSize',
        info: extensionTypes.length ? { mint: a[0], extensionTypes } : { mint: a[0] },
      };
    }
    case 22:
      if (a.length < 1) return null;
      return { type: 'initializeImmutableOwner', info: { account: a[0] } };
    default:
      return null;
  }
}

function parseSystem(data: Uint8Array, a: string[]): Parsed | null {
  if (data.length < 4) return null;
  const tag = u32(data, 0);
  if (tag === 2 && data.length >= 12 && a.length >= 2) {
    return { type: 'transfer', info: { source: a[0], destination: a[1], lamports: u64(data, 4) } };
  }
  if (tag === 0 && data.length >= 52 && a.length >= 2) {
    return {
      type: 'createAccount',
      info: {
        source: a[0],
        newAccount: a[1],
        lamports: u64(data, 4),
        space: u64(data, 12),
        owner: base58(data.subarray(20, 52)),
      },
    };
  }
  return null;
}

function parseAta(data: Uint8Array, a: string[]): Parsed | null {
  if (a.length < 6 || data.length > 1 || (data.length === 1 && data[0]! > 1)) return null;
  return {
    type: data[0] === 1 ? 'createIdempotent' : 'create',
    info: { source: a[0], account: a[1], wallet: a[2], mint: a[3], systemProgram: a[4], tokenProgram: a[5] },
  };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** One instruction as mainnet's jsonParsed shows it; unparsable ones stay raw (data in base58). */
export function parseInstruction(
  programId: string,
  accounts: string[],
  data: Uint8Array,
  stackHeight: number | null,
): ParsedInstruction {
  const parsed = (program: string, value: unknown): ParsedInstruction => ({
    program,
    programId,
    parsed: value,
    stackHeight,
  });
  if (MEMO_PROGRAMS.includes(programId)) {
    try {
      return parsed('spl-memo', strictUtf8.decode(data));
    } catch {
      // not UTF-8: mainnet leaves it raw
    }
  } else if (programId === TOKEN_PROGRAM || programId === TOKEN_2022_PROGRAM) {
    const p = parseToken(data, accounts);
    if (p) return parsed('spl-token', p);
  } else if (programId === SYSTEM_PROGRAM) {
    const p = parseSystem(data, accounts);
    if (p) return parsed('system', p);
  } else if (programId === ATA_PROGRAM) {
    const p = parseAta(data, accounts);
    if (p) return parsed('spl-associated-token-account', p);
  }
  return { programId, accounts, data: base58(data), stackHeight };
}

export interface AccountView {
  exists: boolean;
  programAddress?: string;
  data?: Uint8Array;
}

export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: UiTokenAmount;
}

export interface TokenAccountState {
  mint: string;
  owner: string;
  amount: bigint;
  programId: string;
}

/** Decodes an initialised SPL token account (classic or 2022), or null for anything else. */
export function readTokenAccount(acc: AccountView): TokenAccountState | null {
  const { programAddress, data } = acc;
  if (!acc.exists || !data || data.length < TOKEN_ACCOUNT_LEN) return null;
  if (programAddress !== TOKEN_PROGRAM && programAddress !== TOKEN_2022_PROGRAM) return null;
  // A token-2022 mint with extensions is longer than 165 bytes but carries AccountType 1 at 165.
  if (data.length > TOKEN_ACCOUNT_LEN && data[TOKEN_ACCOUNT_LEN] !== 2) return null;
  if (data[108] === 0) return null; // uninitialised
  return {
    mint: base58(data.subarray(0, 32)),
    owner: base58(data.subarray(32, 64)),
    amount: u64(data, 64),
    programId: programAddress,
  };
}

/** Decimals of a mint account, or null when the account is not a mint. */
export function readMintDecimals(acc: AccountView): number | null {
  const { programAddress, data } = acc;
  if (!acc.exists || !data || data.length < MINT_LEN) return null;
  if (programAddress !== TOKEN_PROGRAM && programAddress !== TOKEN_2022_PROGRAM) return null;
  if (data.length === TOKEN_ACCOUNT_LEN) return null;
  return data[44]!;
}

/** pre/postTokenBalances: one entry per token account among the message's keys. */
export function tokenBalances(keys: string[], read: (address: string) => AccountView): TokenBalance[] {
  const out: TokenBalance[] = [];
  keys.forEach((key, accountIndex) => {
    const state = readTokenAccount(read(key));
    if (!state) return;
    const decimals = readMintDecimals(read(state.mint)) ?? 0;
    out.push({
      accountIndex,
      mint: state.mint,
      owner: state.owner,
      programId: state.programId,
      uiTokenAmount: uiTokenAmount(state.amount, decimals),
    });
  });
  return out;
}
