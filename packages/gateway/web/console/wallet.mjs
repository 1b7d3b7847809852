/**
 * Wallet Standard sign-in (docs/provider-api.md, "Signing in"): the wallets the page
 * can use, and the challenge → sign → verify exchange with one of them. Solana wallets
 * sign the exact message bytes (`solana:signMessage`, sent base64); Sui wallets return a
 * serialized personal-message signature (`sui:signPersonalMessage`), sent as is.
 */
import { getWallets } from '/assets/vendor/wallet-standard-app.mjs';
import { api } from './api.mjs';

const SIGNERS = { solana: 'solana:signMessage', sui: 'sui:signPersonalMessage' };
const ACCOUNT = { solana: 'Solana', sui: 'Sui' };

/** The chains a wallet can sign in with (it must also connect). */
export function chainsOf(wallet) {
  const f = wallet.features ?? {};
  if (!f['standard:connect']) return [];
  return Object.keys(SIGNERS).filter((chain) => f[SIGNERS[chain]]);
}

/** Calls `onChange(list)` now and whenever a wallet registers or leaves; returns the unsubscribe. */
export function watchWallets(onChange) {
  const wallets = getWallets();
  const publish = () => onChange(wallets.get().filter((w) => chainsOf(w).length > 0));
  const offs = [wallets.on('register', publish), wallets.on('unregister', publish)];
  publish();
  return () => {
    for (const off of offs) off();
  };
}

function base64(bytes) {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function accountFor(accounts, chain) {
  return accounts.find((a) => (a.chains ?? []).some((c) => c.startsWith(`${chain}:`))) ?? accounts[0];
}

/** Refuses to have the wallet sign anything but a sign-in message for this account. */
function checkMessage(message, chain, address) {
  const [first = '', second = ''] = typeof message === 'string' ? message.split('\n') : [];
  const same = chain === 'sui' ? second.toLowerCase() === address.toLowerCase() : second === address;
  if (!first.endsWith(` wants you to sign in with your ${ACCOUNT[chain]} account:`) || !same) {
    throw new Error('the gateway did not send a sign-in message for this account; nothing was signed');
  }
}

/** Connects, signs the gateway's challenge and returns the issued session ({ accessToken, owner, … }). */
export async function signInWith(wallet, chain) {
  const { accounts } = await wallet.features['standard:connect'].connect();
  const account = accountFor(accounts ?? wallet.accounts ?? [], chain);
  if (!account) throw new Error(`${wallet.name} did not share an account`);
  const address = account.address;
  const { message } = await api('POST', '/v1/auth/challenge', { chain, address }, { auth: false });
  checkMessage(message, chain, address);
  const bytes = new TextEncoder().encode(message);
  let signature;
  if (chain === 'solana') {
    const [out] = await wallet.features['solana:signMessage'].signMessage({ account, message: bytes });
    signature = base64(out.signature);
  } else {
    const out = await wallet.features['sui:signPersonalMessage'].signPersonalMessage({
      account,
      message: bytes,
    });
    signature = out.signature;
  }
  return api('POST', '/v1/auth/verify', { chain, address, message, signature }, { auth: false });
}
