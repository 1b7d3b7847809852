/**
 * A project's APIs (origins and how the gateway authenticates to them: secrets are sent,
 * never shown back, only their last 4 characters) and its rails (who gets paid per chain).
 */

import { html } from '/assets/vendor/htm-preact.mjs';
import { useState } from '/assets/vendor/preact-hooks.mjs';
import { api, enc, projectPath } from './api.mjs';
import { ErrorAlert, Field, Select, Status, useAction, useLoad } from './ui.mjs';

const AUTH_TYPES = [
  ['none', 'None'],
  ['bearer', 'Bearer token (Authorization header)'],
  ['header', 'Custom header'],
  ['query', 'Query parameter'],
];

function authText(auth) {
  if (!auth) return 'none';
  return `${auth.type}${auth.name ? ` ${auth.name}` : ''}${auth.secretLast4 ? ` (secret ${auth.secretLast4})` : ''}`;
}

/** Create (no `api`) or edit form; on edit, an empty secret keeps the stored auth. */
function ApiForm({ slug, api: current, onDone, onClose }) {
  const [name, setName] = useState(current?.name ?? '');
  const [baseUrl, setBaseUrl] = useState(current?.baseUrl ?? '');
  const [authType, setAuthType] = useState(current?.auth?.type ?? 'none');
  const [authName, setAuthName] = useState(current?.auth?.name ?? '');
  const [secret, setSecret] = useState('');
  const { busy, error, status, run, setError } = useAction();
  /** The `auth` field to send: a new secret, null to remove, or undefined to keep what is stored. */
  const authField = () => {
    if (authType === 'none') return current?.auth ? null : undefined;
    if (secret) {
      return { type: authType, secret, ...(authType !== 'bearer' && authName ? { name: authName } : {}) };
    }
    const unchanged = current?.auth?.type === authType && (current.auth.name ?? '') === authName;
    if (unchanged) return undefined;
    throw new Error('Enter the origin secret to set or change how the gateway authenticates.');
  };
  const submit = (e) => {
    e.preventDefault();
    let auth;
    try {
      auth = authField();
    } catch (err) {
      setError(err.message);
      return;
    }
    const body = { name, baseUrl, ...(auth !== undefined ? { auth } : {}) };
    run(
      async () => {
        if (current) await api('PATCH', projectPath(slug, `/apis/${enc(current.id)}`), body);
        else await api('POST', projectPath(slug, '/apis'), body);
        setSecret('');
        if (!current) {
          setName('');
          setBaseUrl('');
          setAuthType('none');
          setAuthName('');
        }
        onDone();
      },
      current ? 'API saved.' : 'API added.',
    );
  };
  const prefix = current ? 'Edit API: ' : 'API ';
  return html`<form onSubmit=${submit} aria-label=${current ? `Edit API ${current.name}` : 'New API'}>
    <${Field} label=${`${prefix}name`} value=${name} onInput=${setName} required />
    <${Field} label=${`${prefix}base URL`} type="url" value=${baseUrl} onInput=${setBaseUrl} required
      hint="The origin the gateway forwards paid requests to." />
    <${Select} label=${`${prefix}origin authentication`} value=${authType} onChange=${setAuthType} options=${AUTH_TYPES} />
    ${
      authType === 'header' || authType === 'query'
        ? html`<${Field} label=${`${prefix}${authType === 'header' ? 'header' : 'parameter'} name`} value=${authName} onInput=${setAuthName} required />`
        : null
    }
    ${
      authType !== 'none'
        ? html`<${Field} label=${`${prefix}secret`} type="password" autocomplete="off" value=${secret} onInput=${setSecret}
            hint=${current?.auth ? `Stored secret ends ${current.auth.secretLast4}; leave empty to keep it.` : 'Stored encrypted; never shown again.'} />`
        : null
    }
    <button type="submit" disabled=${busy}>${current ? 'Save API' : 'Add API'}</button>
    ${onClose ? html`<button type="button" class="secondary" onClick=${onClose}>Close</button>` : null}
    <${ErrorAlert} error=${error} />
    <${Status} busy=${busy} text=${status} />
  </form>`;
}

export function Apis({ slug, apis, error: loadError, reload }) {
  const [editing, setEditing] = useState(null);
  const { busy, error, status, run } = useAction();
  const remove = (a) =>
    run(async () => {
      await api('DELETE', projectPath(slug, `/apis/${enc(a.id)}`));
      reload();
    }, `API ${a.name} deleted.`);
  return html`<section aria-labelledby="apis-title">
    <h3 id="apis-title">APIs</h3>
    <${ErrorAlert} error=${loadError ?? error} />
    ${
      apis && apis.length > 0
        ? html`<table>
            <caption>Origins of this project</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">Base URL</th><th scope="col">Origin authentication</th><th scope="col">Actions</th></tr></thead>
            <tbody>${apis.map(
              (a) => html`<tr key=${a.id}>
                <th scope="row">${a.name}</th><td>${a.baseUrl}</td><td>${authText(a.auth)}</td>
                <td>
                  <button type="button" onClick=${() => setEditing(a.id)} aria-label=${`Edit API ${a.name}`}>Edit</button>
                  ${' '}<button type="button" class="danger" disabled=${busy} onClick=${() => remove(a)} aria-label=${`Delete API ${a.name}`}>Delete</button>
                </td>
              </tr>`,
            )}</tbody>
          </table>`
        : html`<p>${apis ? 'No APIs yet.' : 'Loading…'}</p>`
    }
    <${Status} busy=${busy} text=${status} />
    ${
      editing && apis?.find((a) => a.id === editing)
        ? html`<${ApiForm} key=${editing} slug=${slug} api=${apis.find((a) => a.id === editing)}
            onDone=${reload} onClose=${() => setEditing(null)} />`
        : null
    }
    <h4>Add an API</h4>
    <${ApiForm} slug=${slug} onDone=${reload} />
  </section>`;
}

/** The chains and network this gateway takes payments on (its public x402 manifest). */
async function acceptedChains() {
  const manifest = await api('GET', '/.well-known/x402', undefined, { auth: false });
  return manifest?.extensions?.tollgate?.info?.spec?.chains ?? [];
}

function RailRow({ slug, chain, network, rail, onDone }) {
  const [recipient, setRecipient] = useState(rail?.providerRecipient ?? '');
  const { busy, error, status, run } = useAction();
  const label = chain === 'sui' ? 'Sui' : 'Solana';
  const save = (e) => {
    e.preventDefault();
    run(async () => {
      await api('PUT', projectPath(slug, `/rails/${chain}`), { network, providerRecipient: recipient });
      onDone();
    }, `${label} rail saved.`);
  };
  const remove = () =>
    run(async () => {
      await api('DELETE', projectPath(slug, `/rails/${chain}`));
      setRecipient('');
      onDone();
    }, `${label} rail removed.`);
  return html`<form onSubmit=${save} aria-label=${`${label} rail`}>
    <h4>${label} (${network})</h4>
    <p>${rail ? html`Paid to <span class="address">${rail.providerRecipient}</span>` : 'Not accepting payments on this chain.'}</p>
    <${Field} label=${`${label} recipient address`} value=${recipient} onInput=${setRecipient} required
      hint="The wallet that receives your share of every payment on this chain." />
    <button type="submit" disabled=${busy}>Save ${label} rail</button>
    ${rail ? html`${' '}<button type="button" class="danger" disabled=${busy} onClick=${remove}>Remove ${label} rail</button>` : null}
    <${ErrorAlert} error=${error} />
    <${Status} busy=${busy} text=${status} />
  </form>`;
}

export function Rails({ slug }) {
  const chains = useLoad(acceptedChains, []);
  const rails = useLoad(() => api('GET', projectPath(slug, '/rails')), [slug]);
  const byChain = Object.fromEntries((rails.data?.rails ?? []).map((r) => [r.chain, r]));
  return html`<section aria-labelledby="rails-title">
    <h3 id="rails-title">Rails</h3>
    <${ErrorAlert} error=${chains.error ?? rails.error} />
    ${
      chains.data && rails.data
        ? chains.data.map(
            (c) => html`<${RailRow} key=${c.chain} slug=${slug} chain=${c.chain}
              network=${c.network} rail=${byChain[c.chain]} onDone=${rails.reload} />`,
          )
        : html`<p>Loading…</p>`
    }
  </section>`;
}
