import { SuiGrpcClient } from '@mysten/sui/grpc';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { Transaction } from '@mysten/sui/transactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SuiSandbox } from './index.ts';
import { startSuiSandbox } from './index.ts';

let sui: SuiSandbox;
let client: SuiGrpcClient;

beforeAll(async () => {
  sui = await startSuiSandbox({ slowMs: 300 });
  client = new SuiGrpcClient({ network: 'localnet', baseUrl: sui.url });
});
afterAll(async () => {
  await sui?.close();
});

function funded(usdc = 5_000_000n): Ed25519Keypair {
  const kp = Ed25519Keypair.generate();
  sui.faucet(kp.toSuiAddress(), usdc);
  return kp;
}

/** Builds (through the sandbox's simulation) a payment of `amounts` from the signer's first USDC coin. */
async function buildPayment(signer: Ed25519Keypair, to: string, amounts: bigint[]): Promise<Uint8Array> {
  const owner = signer.toSuiAddress();
  const [coin] = (await client.core.listCoins({ owner, coinType: sui.coinType })).objects;
  const tx = new Transaction();
  tx.setSender(owner);
  const parts = tx.splitCoins(tx.object(coin!.objectId), amounts);
  tx.transferObjects(
    amounts.map((_, i) => parts[i]!),
    to,
  );
  return tx.build({ client });
}

async function execute(signer: Ed25519Keypair, bytes: Uint8Array) {
  const { signature } = await signer.signTransaction(bytes);
  return client.core.executeTransaction({
    transaction: bytes,
    signatures: [signature],
    include: { balanceChanges: true, effects: true },
  });
}

describe('sui sandbox ledger', () => {
  it('moves coins and reports balance changes that add up per coin type', async () => {
    const payer = funded();
    const to = Ed25519Keypair.generate().toSuiAddress();
    const r = await execute(payer, await buildPayment(payer, to, [700_000n, 300_000n]));
    expect(r.$kind).toBe('Transaction');
    expect(sui.balance(to)).toBe(1_000_000n);
    expect(sui.balance(payer.toSuiAddress())).toBe(4_000_000n);
    const changes = r.Transaction!.balanceChanges;
    const usdcSum = changes
      .filter((c) => c.coinType === sui.coinType)
      .reduce((s, c) => s + BigInt(c.amount), 0n);
    expect(usdcSum).toBe(0n);
    const gas = r.Transaction!.effects.gasUsed;
    const charged = BigInt(gas.computationCost) + BigInt(gas.storageCost) - BigInt(gas.storageRebate);
    expect(changes.find((c) => c.coinType === sui.suiCoinType)?.amount).toBe((-charged).toString());
  });

  it('refuses a second transaction that spends an already spent coin version', async () => {
    const payer = funded();
    const to = Ed25519Keypair.generate().toSuiAddress();
    const first = await buildPayment(payer, to, [1_000_000n]);
    const second = await buildPayment(payer, to, [2_000_000n]);
    await execute(payer, first);
    await expect(execute(payer, second)).rejects.toThrow(/unavailable for consumption/);
    expect(sui.balance(to)).toBe(1_000_000n);
  });

  it('lets exactly one of two concurrent conflicting transactions through', async () => {
    const payer = funded();
    const to = Ed25519Keypair.generate().toSuiAddress();
    const a = await buildPayment(payer, to, [1_000_000n]);
    const b = await buildPayment(payer, to, [3_000_000n]);
    const results = await Promise.allSettled([execute(payer, a), execute(payer, b)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect([1_000_000n, 3_000_000n]).toContain(sui.balance(to));
  });

  it('answers a resubmission of the same signed bytes with the same transaction', async () => {
    const payer = funded();
    const to = Ed25519Keypair.generate().toSuiAddress();
    const bytes = await buildPayment(payer, to, [1_000_000n]);
    const one = await execute(payer, bytes);
    const two = await execute(payer, bytes);
    expect(two.Transaction?.digest).toBe(one.Transaction?.digest);
    expect(sui.balance(to)).toBe(1_000_000n);
  });

  it('refuses a transaction signed by a key that is not the sender', async () => {
    const payer = funded();
    const thief = Ed25519Keypair.generate();
    const bytes = await buildPayment(payer, thief.toSuiAddress(), [1_000_000n]);
    await expect(execute(thief, bytes)).rejects.toThrow(/Signature is not valid/);
    expect(sui.balance(thief.toSuiAddress())).toBe(0n);
  });

  it('refuses to build a payment larger than the coin, because simulation fails', async () => {
    const payer = funded(1_000_000n);
    await expect(buildPayment(payer, payer.toSuiAddress(), [1_000_001n])).rejects.toThrow(
      /InsufficientCoinBalance/,
    );
  });

  it('includes a failed execution with gas charged and every coin left where it was', async () => {
    const payer = funded(1_000_000n);
    const owner = payer.toSuiAddress();
    const to = Ed25519Keypair.generate().toSuiAddress();
    const [usdc] = (await client.core.listCoins({ owner, coinType: sui.coinType })).objects;
    const [gas] = (await client.core.listCoins({ owner })).objects;
    const tx = new Transaction();
    tx.setSender(owner);
    tx.setGasPayment([gas!]);
    tx.setGasPrice(1000);
    tx.setGasBudget(20_000_000);
    const [part] = tx.splitCoins(tx.objectRef(usdc!), [2_000_000n]);
    tx.transferObjects([part!], to);
    const r = await execute(payer, await tx.build({ client }));
    expect(r.$kind).toBe('FailedTransaction');
    expect(r.FailedTransaction!.status.error?.message).toMatch(/InsufficientCoinBalance/);
    expect(sui.balance(owner)).toBe(1_000_000n);
    expect(sui.balance(to)).toBe(0n);
    expect(sui.balance(owner, sui.suiCoinType)).toBeLessThan(BigInt(gas!.balance));
    const [after] = (await client.core.listCoins({ owner, coinType: sui.coinType })).objects;
    expect(BigInt(after!.version)).toBeGreaterThan(BigInt(usdc!.version));
  });

  it('merges several coins of the payer before splitting', async () => {
    const payer = funded(400_000n);
    const owner = payer.toSuiAddress();
    sui.faucet(owner, 700_000n, 0n);
    const coins = (await client.core.listCoins({ owner, coinType: sui.coinType })).objects;
    expect(coins).toHaveLength(2);
    const to = Ed25519Keypair.generate().toSuiAddress();
    const tx = new Transaction();
    tx.setSender(owner);
    const [primary, ...rest] = coins.map((c) => tx.object(c.objectId));
    tx.mergeCoins(primary!, rest);
    const [part] = tx.splitCoins(primary!, [1_000_000n]);
    tx.transferObjects([part!], to);
    expect((await execute(payer, await tx.build({ client }))).$kind).toBe('Transaction');
    expect(sui.balance(to)).toBe(1_000_000n);
    expect(sui.balance(owner)).toBe(100_000n);
    expect((await client.core.listCoins({ owner, coinType: sui.coinType })).objects).toHaveLength(1);
  });
});

describe('sui sandbox sponsorship', () => {
  async function sponsoredBytes(
    payer: Ed25519Keypair,
    sponsor: Ed25519Keypair,
    to: string,
  ): Promise<Uint8Array> {
    const tx = new Transaction();
    const [part] = tx.splitCoins(
      tx.object(
        (await client.core.listCoins({ owner: payer.toSuiAddress(), coinType: sui.coinType })).objects[0]!
          .objectId,
      ),
      [1_000_000n],
    );
    tx.transferObjects([part!], to);
    const kind = await tx.build({ client, onlyTransactionKind: true });
    const sponsored = Transaction.fromKind(kind);
    sponsored.setSender(payer.toSuiAddress());
    sponsored.setGasOwner(sponsor.toSuiAddress());
    sponsored.setGasPayment((await client.core.listCoins({ owner: sponsor.toSuiAddress() })).objects);
    return sponsored.build({ client });
  }

  it('runs a transaction whose gas a sponsor pays, only with both signatures', async () => {
    const payer = funded();
    const sponsor = Ed25519Keypair.generate();
    sui.faucet(sponsor.toSuiAddress(), 0n);
    const to = Ed25519Keypair.generate().toSuiAddress();
    const bytes = await sponsoredBytes(payer, sponsor, to);
    await expect(execute(payer, bytes)).rejects.toThrow(/Signature is not valid/);
    const signatures = [
      (await payer.signTransaction(bytes)).signature,
      (await sponsor.signTransaction(bytes)).signature,
    ];
    const r = await client.core.executeTransaction({ transaction: bytes, signatures });
    expect(r.$kind).toBe('Transaction');
    expect(sui.balance(to)).toBe(1_000_000n);
    expect(sui.balance(payer.toSuiAddress(), sui.suiCoinType)).toBe(10_000_000_000n);
    expect(sui.balance(sponsor.toSuiAddress(), sui.suiCoinType)).toBeLessThan(10_000_000_000n);
  });
});

describe('sui sandbox faults', () => {
  it('holds new transactions without a checkpoint until finalizeAll', async () => {
    const payer = funded();
    const bytes = await buildPayment(payer, payer.toSuiAddress(), [1n]);
    sui.setFault('hold_finality');
    let digest: string;
    try {
      digest = (await execute(payer, bytes)).Transaction!.digest;
      const held = await client.core.getTransaction({ digest });
      expect(held.Transaction?.checkpoint).toBeNull();
      expect(held.Transaction?.timestampMs).toBeNull();
    } finally {
      sui.setFault('none');
    }
    sui.finalizeAll();
    const final = await client.core.getTransaction({ digest });
    expect(final.Transaction?.checkpoint).not.toBeNull();
    expect(final.Transaction?.timestampMs).toEqual(expect.any(Number));
  });

  it.each([
    ['rpc_down', 'UNAVAILABLE'],
    ['error_500', 'UNKNOWN'],
  ] as const)('fails every call under %s', async (fault, code) => {
    sui.setFault(fault);
    try {
      await expect(client.core.getReferenceGasPrice()).rejects.toMatchObject({ code });
    } finally {
      sui.setFault('none');
    }
  });

  it('answers NOT_FOUND for a known transaction under not_found, and again normally afterwards', async () => {
    const payer = funded();
    const r = await execute(payer, await buildPayment(payer, payer.toSuiAddress(), [1n]));
    const digest = r.Transaction!.digest;
    sui.setFault('not_found');
    try {
      await expect(client.core.getTransaction({ digest })).rejects.toMatchObject({ reason: 'notFound' });
    } finally {
      sui.setFault('none');
    }
    expect((await client.core.getTransaction({ digest })).Transaction?.digest).toBe(digest);
  });

  it('delays answers under slow past a client deadline', async () => {
    sui.setFault('slow');
    try {
      await expect(client.core.getReferenceGasPrice({ signal: AbortSignal.timeout(50) })).rejects.toThrow();
    } finally {
      sui.setFault('none');
    }
  });
});
