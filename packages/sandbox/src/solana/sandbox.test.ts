import type { Address, Instruction, KeyPairSigner, Rpc, SolanaRpcApi } from '@solana/kit';
import {
  address,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  isSolanaError,
  lamports,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getAddMemoInstruction } from '@solana-program/memo';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { SPL_MEMO_PROGRAM, USDC_SOLANA_MINT } from '@tollgate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SolanaSandbox } from './index.ts';
import { startSolanaSandbox } from './index.ts';

let sb: SolanaSandbox;
let rpc: Rpc<SolanaRpcApi>;
let payer: KeyPairSigner;
let recipient: Address;

const ata = async (owner: string, mint = USDC_SOLANA_MINT) =>
  (
    await findAssociatedTokenPda({
      owner: address(owner),
      mint: address(mint),
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    })
  )[0];

async function pay(
  amount: bigint,
  memo: string,
  opts: { blockhash?: { blockhash: string; lastValidBlockHeight: bigint } } = {},
) {
  const mint = address(USDC_SOLANA_MINT);
  const ixs: Instruction[] = [
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer, owner: recipient, mint }),
    getTransferCheckedInstruction({
      source: await ata(payer.address),
      mint,
      destination: await ata(recipient),
      authority: payer,
      amount,
      decimals: 6,
    }),
    getAddMemoInstruction({ memo }, { programAddress: address(SPL_MEMO_PROGRAM) }),
  ];
  const lifetime = opts.blockhash ?? (await rpc.getLatestBlockhash().send()).value;
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime as never, m),
    (m) => appendTransactionMessageInstructions(ixs, m),
  );
  const tx = await signTransactionMessageWithSigners(message);
  return { tx, wire: getBase64EncodedWireTransaction(tx), signature: getSignatureFromTransaction(tx) };
}

const send = (wire: string, skipPreflight = false) =>
  rpc.sendTransaction(wire as never, { encoding: 'base64', skipPreflight }).send();

async function rpcError(p: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  try {
    await p;
  } catch (e) {
    // Kit puts the transaction error of a preflight failure in `cause`.
    if (isSolanaError(e))
      return { code: e.context.__code, message: `${e.message} | ${(e.cause as Error)?.message}` };
    return { code: 'other', message: (e as Error).message };
  }
  throw new Error('expected the call to fail');
}

const usdcOf = async (owner: string) =>
  (await rpc.getTokenAccountBalance(await ata(owner)).send()).value.amount;

beforeAll(async () => {
  sb = await startSolanaSandbox();
  rpc = createSolanaRpc(sb.url);
  payer = await generateKeyPairSigner();
  recipient = (await generateKeyPairSigner()).address;
  await sb.faucet(payer.address, 10_000_000n);
});
afterAll(() => sb?.close());

describe('Solana sandbox chain', () => {
  it('serves USDC at the mainnet mint, on a chain that is not mainnet', async () => {
    expect(sb.mint).toBe(USDC_SOLANA_MINT);
    expect(sb.otherMint).not.toBe(USDC_SOLANA_MINT);
    expect(await rpc.getGenesisHash().send()).not.toMatch(/^5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/);
  });

  it('funds a wallet with SOL and USDC in its associated token account', async () => {
    expect((await rpc.getBalance(payer.address).send()).value).toBe(1_000_000_000n);
    expect(await usdcOf(payer.address)).toBe('10000000');
    const accounts = await rpc
      .getTokenAccountsByOwner(payer.address, { mint: address(USDC_SOLANA_MINT) }, { encoding: 'jsonParsed' })
      .send();
    expect(accounts.value.map((a) => a.pubkey)).toEqual([await ata(payer.address)]);
    expect(accounts.value[0]?.account.data.parsed.info.tokenAmount.amount).toBe('10000000');
    expect(await sb.usdcBalance(payer.address)).toBe(10_000_000n);
    expect(await sb.usdcBalance((await generateKeyPairSigner()).address)).toBe(0n);
  });

  it('mints the other mint separately from USDC', async () => {
    const w = (await generateKeyPairSigner()).address;
    await sb.mintOther(w, 42n);
    expect((await rpc.getTokenAccountBalance(await ata(w, sb.otherMint)).send()).value.amount).toBe('42');
    expect((await rpc.getBalance(address(w)).send()).value).toBe(0n);
  });

  it('answers getTransaction with mainnet jsonParsed shapes', async () => {
    const { wire, signature } = await pay(250_000n, 'memo-shape');
    expect(await send(wire)).toBe(signature);
    const tx = await rpc
      .getTransaction(signature, {
        encoding: 'jsonParsed',
        maxSupportedTransactionVersion: 0,
        commitment: 'confirmed',
      })
      .send();
    expect(tx).not.toBeNull();
    expect(tx!.meta!.err).toBeNull();
    expect(Math.abs(Number(tx!.blockTime) * 1000 - Date.now())).toBeLessThan(60_000);
    expect(tx!.transaction.signatures).toEqual([signature]);
    const keys = tx!.transaction.message.accountKeys;
    expect(keys[0]).toEqual({ pubkey: payer.address, signer: true, source: 'transaction', writable: true });
    expect(keys.filter((k) => k.signer)).toHaveLength(1);

    const ix = tx!.transaction.message.instructions as unknown as Record<string, unknown>[];
    expect(ix.map((i) => i['program'])).toEqual(['spl-associated-token-account', 'spl-token', 'spl-memo']);
    expect(ix[1]).toMatchObject({
      programId: TOKEN_PROGRAM_ADDRESS,
      parsed: {
        type: 'transferChecked',
        info: {
          source: await ata(payer.address),
          mint: USDC_SOLANA_MINT,
          destination: await ata(recipient),
          authority: payer.address,
          tokenAmount: { amount: '250000', uiAmountString: '0.25' },
        },
      },
    });
    expect(ix[2]).toMatchObject({ programId: SPL_MEMO_PROGRAM, parsed: 'memo-shape' });
    // The recipient's account was created here: its creation CPIs are parsed inner instructions.
    const inner = tx!.meta!.innerInstructions![0]!.instructions as unknown as Record<string, unknown>[];
    expect(inner.map((i) => (i['parsed'] as { type: string }).type)).toEqual([
      'getAccountDataSize',
      'createAccount',
      'initializeImmutableOwner',
      'initializeAccount3',
    ]);

    const row = (
      list: readonly { owner?: string; uiTokenAmount: { amount: string } }[] | undefined,
      owner: string,
    ) => list?.find((b) => b.owner === owner)?.uiTokenAmount.amount;
    expect(row(tx!.meta!.preTokenBalances, payer.address)).toBe('10000000');
    expect(row(tx!.meta!.postTokenBalances, payer.address)).toBe('9750000');
    expect(row(tx!.meta!.preTokenBalances, recipient)).toBeUndefined();
    expect(row(tx!.meta!.postTokenBalances, recipient)).toBe('250000');
    expect(tx!.meta!.postTokenBalances![0]).toMatchObject({
      mint: USDC_SOLANA_MINT,
      programId: TOKEN_PROGRAM_ADDRESS,
    });
  });

  it('refuses a replay, a forged signature and an unknown blockhash without recording them', async () => {
    const { wire, signature } = await pay(1n, 'replay');
    await send(wire);
    expect((await rpcError(send(wire))).message).toMatch(/already been processed/);

    const forged = await pay(2n, 'forged');
    const bytes = Buffer.from(forged.wire, 'base64');
    bytes[1] = (bytes[1] ?? 0) ^ 0xff; // inside the first signature
    const forgedErr = await rpcError(send(bytes.toString('base64'), true));
    expect(forgedErr.message).toMatch(/signature verification/i);

    const stale = await pay(3n, 'stale', {
      blockhash: { blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 10n },
    });
    expect((await rpcError(send(stale.wire, true))).message).toMatch(/Blockhash not found/);

    const statuses = await rpc.getSignatureStatuses([signature, forged.signature, stale.signature]).send();
    expect(statuses.value[0]?.confirmationStatus).toBe('finalized');
    expect(statuses.value.slice(1)).toEqual([null, null]);
  });

  it('moves to a new blockhash after each transaction and still accepts recent ones', async () => {
    const before = (await rpc.getLatestBlockhash().send()).value;
    await send((await pay(1n, 'advance')).wire);
    const after = (await rpc.getLatestBlockhash().send()).value;
    expect(after.blockhash).not.toBe(before.blockhash);
    expect((await rpc.isBlockhashValid(before.blockhash).send()).value).toBe(true);
    // Two identical payments are two different transactions.
    const a = await pay(5n, 'same');
    await send(a.wire);
    const b = await pay(5n, 'same');
    expect(b.signature).not.toBe(a.signature);
    await send(b.wire);
    // And a payment signed over an older (still valid) blockhash lands.
    const old = await pay(6n, 'older', { blockhash: before });
    expect(await send(old.wire)).toBe(old.signature);
  });

  it('rejects a failing transaction at preflight, but records it with meta.err when preflight is skipped', async () => {
    const lamportsBefore = (await rpc.getBalance(payer.address).send()).value;
    const usdcBefore = await usdcOf(payer.address);
    const tooMuch = await pay(10n ** 12n, 'overspend');
    const preflight = await rpcError(send(tooMuch.wire));
    expect(preflight.message).toMatch(/simulation failed/);
    expect((await rpc.getSignatureStatuses([tooMuch.signature]).send()).value[0]).toBeNull();

    const included = await pay(10n ** 12n, 'overspend-2');
    expect(await send(included.wire, true)).toBe(included.signature);
    const tx = await rpc
      .getTransaction(included.signature, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 })
      .send();
    expect(tx?.meta?.err).toEqual({ InstructionError: [1n, { Custom: 1n }] });
    expect((await rpc.getSignatureStatuses([included.signature]).send()).value[0]?.err).not.toBeNull();
    expect(await usdcOf(payer.address)).toBe(usdcBefore);
    expect((await rpc.getBalance(payer.address).send()).value).toBe(lamportsBefore - 5000n);
  });

  it('respects commitment: held transactions are confirmed but not finalized until finalizeAll', async () => {
    sb.setFault('hold_finality');
    const { wire, signature } = await pay(7n, 'held');
    try {
      await send(wire);
    } finally {
      sb.setFault('none');
    }
    const get = (commitment: 'confirmed' | 'finalized') =>
      rpc
        .getTransaction(signature, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment })
        .send();
    expect(await get('confirmed')).not.toBeNull();
    expect(await get('finalized')).toBeNull();
    expect((await rpc.getSignatureStatuses([signature]).send()).value[0]?.confirmationStatus).toBe(
      'confirmed',
    );
    sb.finalizeAll();
    expect(await get('finalized')).not.toBeNull();
    expect((await rpc.getSignatureStatuses([signature]).send()).value[0]).toMatchObject({
      confirmationStatus: 'finalized',
      confirmations: null,
    });
  });

  describe('simulateTransaction, blockhash validity and re-sent transactions', () => {
    const simulate = (wire: string, cfg: Record<string, unknown> = {}) =>
      rpc
        .simulateTransaction(
          wire as never,
          {
            encoding: 'base64',
            sigVerify: false,
            replaceRecentBlockhash: false,
            ...cfg,
          } as never,
        )
        .send();

    /** A transfer whose fee a second party (`sponsor`) pays: signed by the payer only. */
    async function sponsored(sponsor: KeyPairSigner, amount: bigint, memo: string) {
      const mint = address(USDC_SOLANA_MINT);
      const lifetime = (await rpc.getLatestBlockhash().send()).value;
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(sponsor, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
        (m) =>
          appendTransactionMessageInstructions(
            [
              getTransferCheckedInstruction({
                source: ataSync.payer,
                mint,
                destination: ataSync.recipient,
                authority: payer,
                amount,
                decimals: 6,
              }),
              getAddMemoInstruction({ memo }, { programAddress: address(SPL_MEMO_PROGRAM) }),
            ],
            m,
          ),
      );
      // Without the sponsor's key: the payer's signature only, the fee payer's slot empty.
      const partial = await partiallySignTransactionMessageWithSigners({
        ...message,
        feePayer: { address: sponsor.address },
      } as never);
      const full = await signTransactionMessageWithSigners(message);
      return {
        partial: getBase64EncodedWireTransaction(partial as never),
        full: getBase64EncodedWireTransaction(full),
        signature: getSignatureFromTransaction(full),
      };
    }

    const ataSync = { payer: '' as Address, recipient: '' as Address };
    let sponsor: KeyPairSigner;
    beforeAll(async () => {
      ataSync.payer = await ata(payer.address);
      ataSync.recipient = await ata(recipient);
      sponsor = await generateKeyPairSigner();
      await sb.faucet(sponsor.address, 0n);
      await send((await pay(1n, 'create the recipient account')).wire);
    });

    it('simulates like a node: the result, nothing kept, and the partially signed form with sigVerify off', async () => {
      const usdcBefore = await usdcOf(payer.address);
      const { wire } = await pay(40n, 'simulated');
      const sim = await simulate(wire, { sigVerify: true });
      expect(sim.context.slot).toBe(await rpc.getSlot().send());
      expect(sim.value).toMatchObject({ err: null, accounts: null, returnData: null });
      expect(sim.value.logs?.some((l) => l.includes('simulated'))).toBe(true);
      expect(sim.value.unitsConsumed).toBeGreaterThan(0n);
      expect(await usdcOf(payer.address)).toBe(usdcBefore);

      const tx = await sponsored(sponsor, 41n, 'partial');
      expect((await simulate(tx.partial)).value.err).toBeNull();
      // The same with sigVerify: a node refuses to check a signature that is not there.
      expect((await rpcError(simulate(tx.partial, { sigVerify: true }))).message).toMatch(/signature/i);
      expect((await simulate(tx.full, { sigVerify: true })).value.err).toBeNull();
      // Nothing happened.
      expect((await rpc.getSignatureStatuses([tx.signature]).send()).value[0]).toBeNull();
      expect(await usdcOf(payer.address)).toBe(usdcBefore);
    });

    it('reports execution failures, unknown blockhashes and replays in the result, not as errors', async () => {
      const tooMuch = await pay(10n ** 12n, 'sim-overspend');
      expect((await simulate(tooMuch.wire)).value.err).toEqual({ InstructionError: [1n, { Custom: 1n }] });

      const stale = await pay(1n, 'sim-stale', {
        blockhash: { blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 10n },
      });
      expect((await simulate(stale.wire)).value.err).toBe('BlockhashNotFound');
      const replaced = await simulate(stale.wire, { replaceRecentBlockhash: true });
      expect(replaced.value.err).toBeNull();
      expect(replaced.value.replacementBlockhash).toEqual((await rpc.getLatestBlockhash().send()).value);
      expect(
        (await rpcError(simulate(stale.wire, { sigVerify: true, replaceRecentBlockhash: true }))).message,
      ).toMatch(/sigVerify may not be used with replaceRecentBlockhash/);

      const tx = await sponsored(sponsor, 42n, 'sim-replay');
      await send(tx.full);
      // Known by its message: the partially signed form is "already processed" too.
      expect((await simulate(tx.full)).value.err).toBe('AlreadyProcessed');
      expect((await simulate(tx.partial)).value.err).toBe('AlreadyProcessed');
    });

    it('answers a re-sent, processed transaction with its signature when preflight is skipped, else -32002', async () => {
      const usdcBefore = BigInt(await usdcOf(payer.address));
      const { wire, signature } = await pay(43n, 'resent');
      expect(await send(wire)).toBe(signature);
      expect(await send(wire, true)).toBe(signature);
      const err = await rpcError(send(wire));
      expect(err.code).toBe(-32002);
      expect(err.message).toMatch(/already been processed/);
      // Executed once.
      expect(BigInt(await usdcOf(payer.address))).toBe(usdcBefore - 43n);
    });

    it('expires blockhashes 150 blocks on, as getBlockHeight and lastValidBlockHeight tell', async () => {
      const { value: lifetime } = await rpc.getLatestBlockhash().send();
      const height = await rpc.getBlockHeight().send();
      expect(lifetime.lastValidBlockHeight).toBe(height + 150n);
      const signed = await pay(44n, 'expiring', { blockhash: lifetime });

      sb.advanceBlocks(150);
      expect(await rpc.getBlockHeight().send()).toBe(lifetime.lastValidBlockHeight);
      expect((await rpc.isBlockhashValid(lifetime.blockhash).send()).value).toBe(true);
      sb.advanceBlocks(1);
      expect(await rpc.getBlockHeight().send()).toBeGreaterThan(lifetime.lastValidBlockHeight);
      expect((await rpc.isBlockhashValid(lifetime.blockhash).send()).value).toBe(false);
      expect((await rpc.getLatestBlockhash().send()).value.blockhash).not.toBe(lifetime.blockhash);

      expect((await simulate(signed.wire)).value.err).toBe('BlockhashNotFound');
      expect((await rpcError(send(signed.wire))).message).toMatch(/Blockhash not found/);
      expect((await rpc.getSignatureStatuses([signed.signature]).send()).value[0]).toBeNull();
    });
  });

  describe('fault switches', () => {
    it('rpc_down answers every call with an error', async () => {
      sb.setFault('rpc_down');
      try {
        expect((await rpcError(rpc.getSlot().send())).message).toMatch(/503/);
      } finally {
        sb.setFault('none');
      }
      expect(await rpc.getSlot().send()).toBeTypeOf('bigint');
    });

    it('error_500 answers HTTP 500', async () => {
      sb.setFault('error_500');
      try {
        expect((await rpcError(rpc.getSlot().send())).message).toMatch(/500/);
      } finally {
        sb.setFault('none');
      }
    });

    it('not_found hides transactions from getTransaction but not from getSignatureStatuses', async () => {
      const { wire, signature } = await pay(8n, 'hidden');
      await send(wire);
      sb.setFault('not_found');
      try {
        const tx = await rpc
          .getTransaction(signature, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 })
          .send();
        expect(tx).toBeNull();
        expect((await rpc.getSignatureStatuses([signature]).send()).value[0]).not.toBeNull();
      } finally {
        sb.setFault('none');
      }
    });

    it('slow holds answers back past a short client timeout', async () => {
      sb.setFault('slow');
      try {
        const err = await rpcError(rpc.getSlot().send({ abortSignal: AbortSignal.timeout(200) }));
        expect(err.code).toBe('other');
      } finally {
        sb.setFault('none');
      }
    });
  });

  it('answers the account and cluster queries wallets make', async () => {
    const w = (await generateKeyPairSigner()).address;
    const sig = await rpc.requestAirdrop(w, lamports(2_000_000n)).send();
    expect((await rpc.getSignatureStatuses([sig]).send()).value[0]?.err).toBeNull();
    expect((await rpc.getBalance(w).send()).value).toBe(2_000_000n);

    const info = await rpc.getAccountInfo(await ata(payer.address), { encoding: 'base64' }).send();
    expect(info.value?.owner).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(Buffer.from(info.value!.data[0], 'base64')).toHaveLength(165);
    const many = await rpc.getMultipleAccounts([address(USDC_SOLANA_MINT), w], { encoding: 'base64' }).send();
    expect(many.value.map((a) => a?.owner)).toEqual([
      TOKEN_PROGRAM_ADDRESS,
      '11111111111111111111111111111111',
    ]);
    expect((await rpc.getAccountInfo((await generateKeyPairSigner()).address).send()).value).toBeNull();

    expect(await rpc.getMinimumBalanceForRentExemption(165n).send()).toBe(2_039_280n);
    const epoch = await rpc.getEpochInfo().send();
    expect(epoch.absoluteSlot).toBe(await rpc.getSlot().send());
    expect(await rpc.getBlockHeight().send()).toBe(epoch.blockHeight);
  });

  it('serves a transaction in json and base64 encodings too', async () => {
    const { wire, signature } = await pay(11n, 'encodings');
    await send(wire);
    const opts = { maxSupportedTransactionVersion: 0 } as const;
    const asJson = await rpc.getTransaction(signature, { ...opts, encoding: 'json' }).send();
    expect(asJson?.transaction.message.accountKeys[0]).toBe(payer.address);
    expect(asJson?.transaction.message.header.numRequiredSignatures).toBe(1);
    const asBase64 = await rpc.getTransaction(signature, { ...opts, encoding: 'base64' }).send();
    expect(asBase64?.transaction[0]).toBe(wire);
  });

  it('refuses getTransaction at processed commitment and without maxSupportedTransactionVersion for v0', async () => {
    const { wire, signature } = await pay(9n, 'params');
    await send(wire);
    expect(
      (
        await rpcError(
          rpc.getTransaction(signature, { encoding: 'jsonParsed', commitment: 'processed' as never }).send(),
        )
      ).message,
    ).toMatch(/commitment/);
    expect(
      (await rpcError(rpc.getTransaction(signature, { encoding: 'jsonParsed' }).send())).message,
    ).toMatch(/maxSupportedTransactionVersion/);
  });
});
