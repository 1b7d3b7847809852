/**
 * A project's endpoints (method, path, price, description, timeout, enabled) and their
 * health. Health is what the gateway tells payers: the public directory's `available`
 * (enabled and its upstream answering); a project is listed once it has a rail and an
 * enabled endpoint, so an unlisted project has no health to show yet.
 */

import { html } from '/assets/vendor/htm-preact.mjs';
import { useState } from '/assets/vendor/preact-hooks.mjs';
import { ApiError, api, enc, projectPath } from './api.mjs';
import { Checkbox, ErrorAlert, Field, Select, Status, useAction, useLoad } from './ui.mjs';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'].map((m) => [m, m]);

/**
 * `{ listed, available }`: `METHOD path` → available. The directory is asked only when the
 * project can be listed (a rail and an enabled endpoint), so no expected 404 is logged.
 */
async function loadHealth(slug, endpoints) {
  const unlisted = { listed: false, available: new Map() };
  if (!endpoints?.some((e) => e.enabled)) return unlisted;
  const { rails } = await api('GET', projectPath(slug, '/rails'));
  if (rails.length === 0) return unlisted;
  try {
    const detail = await api('GET', `/v1/directory/apis/${enc(slug)}`, undefined, { auth: false });
    return {
      listed: true,
      available: new Map(detail.endpoints.map((e) => [`${e.method} ${e.path}`, e.available])),
    };
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return unlisted;
    throw e;
  }
}

function healthText(health, e) {
  if (!e.enabled) return 'disabled';
  if (!health.listed) return 'not listed yet';
  const available = health.available.get(`${e.method} ${e.path}`);
  return available === undefined ? 'unknown' : available ? 'healthy' : 'unavailable (upstream failing)';
}

function EndpointForm({ slug, apis, endpoint: current, onDone, onClose }) {
  const [picked, setApiId] = useState(current?.apiId ?? '');
  // The APIs load (and change) while the form is open: an unknown choice means the first.
  const apiId = apis.some((a) => a.id === picked) ? picked : (apis[0]?.id ?? '');
  const [method, setMethod] = useState(current?.method ?? 'GET');
  const [path, setPath] = useState(current?.path ?? '');
  const [price, setPrice] = useState(current?.price ?? '');
  const [description, setDescription] = useState(current?.description ?? '');
  const [timeoutMs, setTimeoutMs] = useState(String(current?.timeoutMs ?? 30000));
  const [enabled, setEnabled] = useState(current?.enabled ?? true);
  const { busy, error, status, run } = useAction();
  const submit = (e) => {
    e.preventDefault();
    const body = {
      apiId,
      method,
      path,
      price,
      description,
      timeoutMs: Number(timeoutMs),
      enabled,
    };
    run(
      async () => {
        if (!body.apiId)
          throw new Error('Add an API first: an endpoint forwards to one of the project’s APIs.');
        if (current) await api('PATCH', projectPath(slug, `/endpoints/${enc(current.id)}`), body);
        else await api('POST', projectPath(slug, '/endpoints'), body);
        if (!current) {
          setPath('');
          setPrice('');
          setDescription('');
        }
        onDone();
      },
      current ? 'Endpoint saved.' : 'Endpoint created.',
    );
  };
  const p = current ? 'Edit endpoint: ' : 'Endpoint ';
  return html`<form onSubmit=${submit} aria-label=${current ? `Edit endpoint ${current.method} ${current.path}` : 'New endpoint'}>
    <${Select} label=${`${p}API`} value=${apiId} onChange=${setApiId} options=${apis.map((a) => [a.id, a.name])} />
    <${Select} label=${`${p}method`} value=${method} onChange=${setMethod} options=${METHODS} />
    <${Field} label=${`${p}path`} value=${path} onInput=${setPath} required hint="Relative to the API's base URL, e.g. v1/forecast" />
    <${Field} label=${`${p}price (USDC)`} value=${price} onInput=${setPrice} required inputmode="decimal"
      hint="Your share per request, e.g. 0.01; the platform fee is added on top." />
    <${Field} label=${`${p}description`} value=${description} onInput=${setDescription} />
    <${Field} label=${`${p}timeout (ms)`} type="number" min="100" max="120000" value=${timeoutMs} onInput=${setTimeoutMs} />
    <${Checkbox} label=${`${p}enabled`} checked=${enabled} onChange=${setEnabled} />
    <button type="submit" disabled=${busy}>${current ? 'Save endpoint' : 'Create endpoint'}</button>
    ${onClose ? html`<button type="button" class="secondary" onClick=${onClose}>Close</button>` : null}
    <${ErrorAlert} error=${error} />
    <${Status} busy=${busy} text=${status} />
  </form>`;
}

export function Endpoints({ slug, apis }) {
  const list = useLoad(() => api('GET', projectPath(slug, '/endpoints')), [slug]);
  const health = useLoad(() => loadHealth(slug, list.data?.endpoints), [slug, list.data]);
  const [editing, setEditing] = useState(null);
  const { busy, error, status, run } = useAction();
  const endpoints = list.data?.endpoints;
  const remove = (e) =>
    run(async () => {
      await api('DELETE', projectPath(slug, `/endpoints/${enc(e.id)}`));
      list.reload();
    }, `Endpoint ${e.method} ${e.path} deleted.`);
  const current = editing && endpoints?.find((e) => e.id === editing);
  return html`<section aria-labelledby="endpoints-title">
    <h3 id="endpoints-title">Endpoints</h3>
    <${ErrorAlert} error=${list.error ?? health.error ?? error} />
    ${
      endpoints && endpoints.length > 0
        ? html`<table>
            <caption>Paid endpoints and their health</caption>
            <thead><tr>
              <th scope="col">Endpoint</th><th scope="col">Price</th><th scope="col">Payer pays</th>
              <th scope="col">Timeout</th><th scope="col">Health</th><th scope="col">Description</th><th scope="col">Actions</th>
            </tr></thead>
            <tbody>${endpoints.map(
              (e) => html`<tr key=${e.id}>
                <th scope="row"><code>${e.method} ${e.path}</code></th>
                <td>${e.price} USDC</td><td>${e.total} USDC</td><td>${e.timeoutMs} ms</td>
                <td>${health.data ? healthText(health.data, e) : '…'}</td>
                <td>${e.description}</td>
                <td>
                  <button type="button" onClick=${() => setEditing(e.id)} aria-label=${`Edit endpoint ${e.method} ${e.path}`}>Edit</button>
                  ${' '}<button type="button" class="danger" disabled=${busy} onClick=${() => remove(e)} aria-label=${`Delete endpoint ${e.method} ${e.path}`}>Delete</button>
                </td>
              </tr>`,
            )}</tbody>
          </table>
          ${health.data?.listed === false ? html`<p>Health shows once the project is listed: it needs a rail and an enabled endpoint.</p>` : null}
          <button type="button" onClick=${health.reload}>Refresh health</button>`
        : html`<p>${endpoints ? 'No endpoints yet.' : 'Loading…'}</p>`
    }
    <${Status} busy=${busy} text=${status} />
    ${
      current
        ? html`<${EndpointForm} key=${current.id} slug=${slug} apis=${apis} endpoint=${current} onDone=${list.reload}
            onClose=${() => setEditing(null)} />`
        : null
    }
    <h4>Add an endpoint</h4>
    <${EndpointForm} slug=${slug} apis=${apis} onDone=${list.reload} />
  </section>`;
}
