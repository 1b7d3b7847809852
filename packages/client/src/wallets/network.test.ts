import { SOLANA_MAINNET_GENESIS_HASH, SUI_MAINNET_CHAIN_ID } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import { assertNetwork, cachedIdentity } from './network.ts';

describe('assertNetwork', () => {
  it.each([
    ['solana', 'mainnet', SOLANA_MAINNET_GENESIS_HASH, true],
    ['solana', 'mainnet', 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG', false],
    ['solana', 'localnet', SOLANA_MAINNET_GENESIS_HASH, false],
    ['solana', 'devnet', 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG', true],
    ['sui', 'mainnet', SUI_MAINNET_CHAIN_ID, true],
    ['sui', 'mainnet', SOLANA_MAINNET_GENESIS_HASH, false],
    ['sui', 'testnet', SUI_MAINNET_CHAIN_ID, false],
  ] as const)('%s %s on a node with identity %s: payable=%s', (chain, network, identity, ok) => {
    const check = () => assertNetwork({ chain, network }, identity, 'the node at http://n');
    if (ok) expect(check).not.toThrow();
    else expect(check).toThrow(expect.objectContaining({ code: 'network_mismatch' }));
  });
});

describe('cachedIdentity', () => {
  it('asks once, however many callers', async () => {
    let asked = 0;
    const identity = cachedIdentity(async () => `id-${++asked}`);
    expect(await Promise.all([identity(), identity()])).toEqual(['id-1', 'id-1']);
    expect(await identity()).toBe('id-1');
    expect(asked).toBe(1);
  });

  it('asks again after a failure instead of keeping it', async () => {
    let asked = 0;
    const identity = cachedIdentity(async () => {
      if (++asked === 1) throw new Error('node down');
      return 'id';
    });
    await expect(identity()).rejects.toThrow('node down');
    expect(await identity()).toBe('id');
  });

  it("stops only the aborted caller's wait, not the shared question", async () => {
    let answer!: (id: string) => void;
    const identity = cachedIdentity(() => new Promise((resolve) => (answer = resolve)));
    const ctl = new AbortController();
    const aborted = identity({ signal: ctl.signal });
    const patient = identity();
    ctl.abort(new Error('caller gave up'));
    answer('id');
    await expect(aborted).rejects.toThrow('caller gave up');
    expect(await patient).toBe('id');
  });
});
