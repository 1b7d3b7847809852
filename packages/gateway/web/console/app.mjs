/**
 * The provider console (docs/web.md, "Console"): sign-in with a Wallet Standard wallet or a
 * token handed over by `tollgate console`, then the caller's projects. Preact + htm, served
 * as modules: no build step, nothing fetched from anywhere but this gateway.
 */

import { html, render } from '/assets/vendor/htm-preact.mjs';
import { useEffect, useState } from '/assets/vendor/preact-hooks.mjs';
import { api, SESSION_ENDED, storedToken, storeToken, takeFragmentToken } from './api.mjs';
import { Projects } from './projects.mjs';
import { ErrorAlert, Status, useAction } from './ui.mjs';
import { chainsOf, signInWith, watchWallets } from './wallet.mjs';

const CHAIN_NAME = { solana: 'Solana', sui: 'Sui' };

function SignIn({ onSignedIn }) {
  const [wallets, setWallets] = useState([]);
  const { busy, error, status, run } = useAction();
  useEffect(() => watchWallets(setWallets), []);

  const signIn = (wallet, chain) =>
    run(async () => {
      const session = await signInWith(wallet, chain);
      storeToken(session.accessToken);
      onSignedIn({ kind: 'owner', owner: session.owner });
    });

  return html`<section aria-labelledby="signin-title">
    <h2 id="signin-title">Sign in</h2>
    <p>Sign in with a Solana or Sui wallet: it signs a one-time message (no transaction, no fee).
      Or run <code>tollgate console</code>, which signs in with your CLI wallet and opens this page.</p>
    ${
      wallets.length === 0
        ? html`<p>No Solana or Sui wallet found in this browser. Install a Wallet Standard wallet, or use <code>tollgate console</code>.</p>`
        : html`<ul class="wallets" aria-label="Wallets">
            ${wallets.map((w) =>
              chainsOf(w).map(
                (chain) => html`<li key=${`${w.name}-${chain}`}>
                  <button type="button" disabled=${busy} onClick=${() => signIn(w, chain)}>
                    ${w.icon ? html`<img src=${w.icon} alt="" />` : null}Sign in with ${w.name} (${CHAIN_NAME[chain]})
                  </button>
                </li>`,
              ),
            )}
          </ul>`
    }
    <${ErrorAlert} error=${error} />
    <${Status} busy=${busy} text=${status} />
  </section>`;
}

function App() {
  const [who, setWho] = useState(null);
  const [checking, setChecking] = useState(true);
  const [error, setError] = useState(null);

  useEffect(() => {
    const token = takeFragmentToken() ?? storedToken();
    if (!token) {
      setChecking(false);
      return;
    }
    api('GET', '/v1/auth/session')
      .then(setWho, (e) => e.status !== 401 && setError(`The session could not be checked: ${e.message}`))
      .finally(() => setChecking(false));
  }, []);

  useEffect(() => {
    const ended = () => {
      setWho(null);
      setError('Your session has ended (it expired or was signed out elsewhere): sign in again.');
    };
    window.addEventListener(SESSION_ENDED, ended);
    return () => window.removeEventListener(SESSION_ENDED, ended);
  }, []);

  const signOut = async () => {
    try {
      await api('POST', '/v1/auth/logout');
      setError(null);
    } catch (e) {
      // An expired or revoked token is signed out already; anything else is worth saying.
      setError(e.status === 401 ? null : e.message);
    }
    storeToken(null);
    setWho(null);
  };

  const label =
    who?.kind === 'operator'
      ? 'the operator'
      : who
        ? `${CHAIN_NAME[who.owner.chain]} ${who.owner.address}`
        : '';
  return html`
    <div class="console-top">
      <h1>Provider console</h1>
      ${
        who
          ? html`<p class="who">Signed in as <span class="address">${label}</span>
              ${' '}<button type="button" onClick=${signOut}>Sign out</button></p>`
          : null
      }
    </div>
    <${ErrorAlert} error=${error} />
    ${checking ? html`<p role="status" aria-live="polite">Checking your session…</p>` : null}
    ${
      !checking && !who
        ? html`<${SignIn} onSignedIn=${(w) => {
            setError(null);
            setWho(w);
          }} />`
        : null
    }
    ${who ? html`<${Projects} />` : null}`;
}

render(html`<${App} />`, document.getElementById('app'));
