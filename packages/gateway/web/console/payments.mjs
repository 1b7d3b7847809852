/**
 * Payments (GET /v1/projects/:slug/payments): newest first, one page at a time with the
 * API's `nextCursor`, a status filter, and a CSV export (fetched with the bearer token,
 * then saved from memory: a plain link could not carry the token).
 */

import { html } from '/assets/vendor/htm-preact.mjs';
import { useEffect, useState } from '/assets/vendor/preact-hooks.mjs';
import { api, formatTime, projectPath, shortId } from './api.mjs';
import { ErrorAlert, Select, Status, useAction } from './ui.mjs';

const STATUSES = ['delivered', 'replayed', 'retryable', 'undelivered', 'refunding', 'refunded'];
const PAGE = 25;

export function Payments({ slug }) {
  const [status, setStatus] = useState('');
  const [pages, setPages] = useState([]);
  const [nextCursor, setNextCursor] = useState(null);
  const [download, setDownload] = useState(null);
  const { busy, error, status: note, run } = useAction();

  const query = (cursor) =>
    `/payments?limit=${PAGE}${status ? `&status=${status}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;

  const load = (cursor) =>
    run(async () => {
      const page = await api('GET', projectPath(slug, query(cursor)));
      setPages((old) => (cursor ? [...old, ...page.payments] : page.payments));
      setNextCursor(page.nextCursor);
    });

  // The first page again whenever the project or the status filter changes.
  useEffect(() => {
    load(null);
  }, [slug, status]);

  // The object URL of an earlier export is freed once it is replaced or the view goes.
  useEffect(() => () => download && URL.revokeObjectURL(download.url), [download]);

  const exportCsv = () =>
    run(async () => {
      const res = await api(
        'GET',
        projectPath(slug, `${query(null).replace(`limit=${PAGE}`, 'format=csv')}`),
        undefined,
        {
          raw: true,
        },
      );
      const blob = await res.blob();
      setDownload({ url: URL.createObjectURL(blob), name: `${slug}-payments.csv` });
    }, 'CSV ready: use the download link.');

  return html`<section aria-labelledby="payments-title">
    <h3 id="payments-title">Payments</h3>
    <div class="inline">
      <${Select} label="Status" value=${status} onChange=${setStatus}
        options=${[['', 'All statuses'], ...STATUSES.map((s) => [s, s])]} />
      <button type="button" onClick=${() => load(null)} disabled=${busy}>Refresh payments</button>
      <button type="button" onClick=${exportCsv} disabled=${busy}>Export CSV</button>
      ${download ? html`<a href=${download.url} download=${download.name}>Download ${download.name}</a>` : null}
    </div>
    <${ErrorAlert} error=${error} />
    <${Status} busy=${busy} text=${note || `${pages.length} payment${pages.length === 1 ? '' : 's'} shown.`} />
    ${
      pages.length === 0
        ? html`<p>No payments${status ? ` with status ${status}` : ''} yet.</p>`
        : html`<table class="payments">
            <caption>Payments, newest first</caption>
            <thead><tr>
              <th scope="col">Time (UTC)</th><th scope="col">Endpoint</th><th scope="col">Chain</th>
              <th scope="col">Transaction</th><th scope="col">Payer</th><th scope="col">Gross</th>
              <th scope="col">Fee</th><th scope="col">Net</th><th scope="col">Status</th>
            </tr></thead>
            <tbody>${pages.map(
              (p) => html`<tr key=${p.id} data-payment=${p.id}>
                <td>${formatTime(p.createdAt)}</td>
                <td>${p.endpoint ? html`<code>${p.endpoint.method} ${p.endpoint.path}</code>` : 'deleted endpoint'}</td>
                <td>${p.chain}</td>
                <td class="address" title=${p.txId}>${shortId(p.txId, 8)}</td>
                <td class="address" title=${p.payer}>${shortId(p.payer, 6)}</td>
                <td>${p.gross}</td><td>${p.fee}</td><td>${p.net}</td>
                <td>${p.status}${p.replays ? ` (${p.replays} replays)` : ''}</td>
              </tr>`,
            )}</tbody>
          </table>`
    }
    ${nextCursor ? html`<button type="button" onClick=${() => load(nextCursor)} disabled=${busy}>Load older payments</button>` : null}
  </section>`;
}
