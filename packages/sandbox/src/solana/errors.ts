/**
 * litesvm reports errors as native objects and numeric enums; mainnet RPC reports
 * them as serde JSON (`"AlreadyProcessed"`, `{"InstructionError":[1,{"Custom":1}]}`).
 * The sandbox must speak the mainnet dialect, so this file translates.
 */

/** A JSON-RPC error the server sends back as `{ error: { code, message, data } }`. */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** Mainnet's JSON-RPC error codes that the sandbox emits. */
export const RPC = {
  invalidParams: -32602,
  methodNotFound: -32601,
  internal: -32603,
  parse: -32700,
  invalidRequest: -32600,
  preflightFailure: -32002,
  signatureVerification: -32003,
  unsupportedTransactionVersion: -32015,
  nodeUnhealthy: -32005,
} as const;

// Order = litesvm's TransactionErrorFieldless numbering (litesvm/dist/internal.d.ts).
const TX_ERRORS = [
  'AccountInUse',
  'AccountLoadedTwice',
  'AccountNotFound',
  'ProgramAccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'CallChainTooDeep',
  'MissingSignatureForFee',
  'InvalidAccountIndex',
  'SignatureFailure',
  'InvalidProgramForExecution',
  'SanitizeFailure',
  'ClusterMaintenance',
  'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion',
  'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit',
  'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit',
  'CommitCancelled',
] as const;

// Order = litesvm's InstructionErrorFieldless numbering.
const IX_ERRORS = [
  'GenericError',
  'InvalidArgument',
  'InvalidInstructionData',
  'InvalidAccountData',
  'AccountDataTooSmall',
  'InsufficientFunds',
  'IncorrectProgramId',
  'MissingRequiredSignature',
  'AccountAlreadyInitialized',
  'UninitializedAccount',
  'UnbalancedInstruction',
  'ModifiedProgramId',
  'ExternalAccountLamportSpend',
  'ExternalAccountDataModified',
  'ReadonlyLamportChange',
  'ReadonlyDataModified',
  'DuplicateAccountIndex',
  'ExecutableModified',
  'RentEpochModified',
  'NotEnoughAccountKeys',
  'AccountDataSizeChanged',
  'AccountNotExecutable',
  'AccountBorrowFailed',
  'AccountBorrowOutstanding',
  'DuplicateAccountOutOfSync',
  'InvalidError',
  'ExecutableDataModified',
  'ExecutableLamportChange',
  'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId',
  'CallDepth',
  'MissingAccount',
  'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded',
  'InvalidSeeds',
  'InvalidRealloc',
  'ComputationalBudgetExceeded',
  'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete',
  'ProgramFailedToCompile',
  'Immutable',
  'IncorrectAuthority',
  'AccountNotRentExempt',
  'InvalidAccountOwner',
  'ArithmeticOverflow',
  'UnsupportedSysvar',
  'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
  'BorshIoError',
] as const;

/** Mainnet's serde JSON for an error, e.g. `"BlockhashNotFound"` or `{"InstructionError":[1,{"Custom":1}]}`. */
export type TransactionErrorJson = string | Record<string, unknown>;

type LiteSvmError = ReturnType<import('litesvm').FailedTransactionMetadata['err']>;

function instructionErrorJson(e: unknown): unknown {
  if (typeof e === 'number') return IX_ERRORS[e] ?? `InstructionError${e}`;
  if (e && typeof e === 'object' && 'code' in e) return { Custom: Number((e as { code: number }).code) };
  if (e && typeof e === 'object' && 'msg' in e) return { BorshIoError: String((e as { msg: string }).msg) };
  return 'GenericError';
}

export function transactionErrorJson(err: LiteSvmError): TransactionErrorJson {
  if (typeof err === 'number') return TX_ERRORS[err] ?? `TransactionError${err}`;
  const e = err as unknown as Record<string, unknown>;
  if (typeof e['err'] === 'function' && typeof e['index'] === 'number') {
    return { InstructionError: [e['index'], instructionErrorJson((e['err'] as () => unknown).call(err))] };
  }
  if (typeof e['index'] === 'number') return { DuplicateInstruction: e['index'] };
  const name = err.constructor.name.replace(/^TransactionError/, '');
  if (typeof e['accountIndex'] === 'number') return { [name]: { account_index: e['accountIndex'] } };
  return name;
}

const TX_MESSAGES: Record<string, string> = {
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  SignatureFailure: 'Transaction did not pass signature verification',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
};

/** Human text in the style of mainnet's preflight messages. */
export function describeTransactionError(err: TransactionErrorJson): string {
  if (typeof err === 'string') return TX_MESSAGES[err] ?? err;
  const ix = err['InstructionError'];
  if (Array.isArray(ix)) {
    const [index, inner] = ix as [number, unknown];
    const custom =
      inner && typeof inner === 'object' && 'Custom' in inner ? (inner as { Custom: number }).Custom : null;
    const text = custom !== null ? `custom program error: 0x${custom.toString(16)}` : JSON.stringify(inner);
    return `Error processing Instruction ${index}: ${text}`;
  }
  return JSON.stringify(err);
}
