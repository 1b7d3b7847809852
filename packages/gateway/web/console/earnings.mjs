/**
 * Earnings for a date range (GET /v1/projects/:slug/earnings, groupBy=day): the totals per
 * chain as the API gives them (exact decimal USDC strings) and an SVG bar chart of the net
 * per UTC day and chain, with the same numbers as a table for screen readers.
 */

import { html } from '/assets/vendor/htm-preact.mjs';
import { useState } from '/assets/vendor/preact-hooks.mjs';
import { api, projectPath } from './api.mjs';
import { ErrorAlert, Field, Status, useLoad } from './ui.mjs';

const DAY_MS = 86_400_000;
const CHAINS = ['solana', 'sui'];
const day = (ms) => new Date(ms).toISOString().slice(0, 10);

/** The query for UTC days `from`..`to`, both inclusive (the API's `to` is exclusive). */
export function rangeQuery(from, to) {
  const end = Date.parse(`${to}T00:00:00Z`) + DAY_MS;
  return `from=${encodeURIComponent(`${from}T00:00:00.000Z`)}&to=${encodeURIComponent(new Date(end).toISOString())}`;
}

function Chart({ rows, from, to }) {
  const days = [];
  for (
    let t = Date.parse(`${from}T00:00:00Z`);
    t <= Date.parse(`${to}T00:00:00Z`) && days.length < 366;
    t += DAY_MS
  ) {
    days.push(day(t));
  }
  const net = new Map(rows.map((r) => [`${r.key} ${r.chain}`, r]));
  const max = Math.max(0, ...rows.map((r) => Number(r.net)));
  const W = 720;
  const H = 200;
  const slot = W / Math.max(days.length, 1);
  const bar = Math.max(1, (slot * 0.8) / CHAINS.length);
  const bars = [];
  days.forEach((d, i) => {
    CHAINS.forEach((chain, j) => {
      const r = net.get(`${d} ${chain}`);
      if (!r || max === 0) return;
      const h = Math.max(1, (Number(r.net) / max) * (H - 20));
      bars.push(html`<rect key=${`${d}-${chain}`} class=${`bar chain-${chain}`} x=${i * slot + slot * 0.1 + j * bar}
        y=${H - h} width=${bar} height=${h}><title>${d} ${chain}: net ${r.net} USDC from ${r.requests} requests</title></rect>`);
    });
  });
  return html`<figure>
    <svg class="chart" viewBox=${`0 0 ${W} ${H + 16}`} role="img" aria-labelledby="chart-title chart-desc">
      <title id="chart-title">Net earnings per day</title>
      <desc id="chart-desc">Bars per UTC day from ${from} to ${to}, one per chain (Solana, Sui); the tallest is ${max} USDC.</desc>
      <line class="axis" x1="0" y1=${H} x2=${W} y2=${H} />
      ${bars}
      <text class="tick" x="0" y=${H + 14}>${days[0]}</text>
      <text class="tick" x=${W} y=${H + 14} text-anchor="end">${days[days.length - 1]}</text>
    </svg>
    <figcaption><span class="swatch chain-solana"></span> Solana <span class="swatch chain-sui"></span> Sui (net USDC per UTC day)</figcaption>
  </figure>`;
}

function AmountsTable({ caption, rows, keyHeader }) {
  return html`<table>
    <caption>${caption}</caption>
    <thead><tr>
      ${keyHeader ? html`<th scope="col">${keyHeader}</th>` : null}
      <th scope="col">Chain</th><th scope="col">Requests</th><th scope="col">Gross (USDC)</th>
      <th scope="col">Fee (USDC)</th><th scope="col">Net (USDC)</th>
    </tr></thead>
    <tbody>${rows.map(
      (r) => html`<tr key=${`${r.key ?? ''}-${r.chain}`}>
        ${keyHeader ? html`<td>${r.key}</td>` : null}
        <th scope="row">${r.chain}</th><td>${r.requests}</td><td>${r.gross}</td><td>${r.fee}</td><td>${r.net}</td>
      </tr>`,
    )}</tbody>
  </table>`;
}

export function Earnings({ slug }) {
  const today = Date.now();
  const [from, setFrom] = useState(day(today - 29 * DAY_MS));
  const [to, setTo] = useState(day(today));
  const [range, setRange] = useState({ from, to });
  const { data, error, reload } = useLoad(
    () => api('GET', projectPath(slug, `/earnings?groupBy=day&${rangeQuery(range.from, range.to)}`)),
    [slug, range.from, range.to],
  );
  const submit = (e) => {
    e.preventDefault();
    if (from === range.from && to === range.to) reload();
    else setRange({ from, to });
  };
  return html`<section aria-labelledby="earnings-title">
    <h3 id="earnings-title">Earnings</h3>
    <form class="inline" onSubmit=${submit} aria-label="Earnings range">
      <${Field} label="From (UTC day)" type="date" value=${from} onInput=${setFrom} required />
      <${Field} label="To (UTC day, included)" type="date" value=${to} onInput=${setTo} required />
      <button type="submit">Show earnings</button>
    </form>
    <${ErrorAlert} error=${error} />
    <${Status} busy=${!data && !error} text=${data ? `Earnings from ${range.from} to ${range.to}.` : ''} />
    ${
      data
        ? html`
          ${
            data.totals.length === 0
              ? html`<p>No delivered payments in this range.</p>`
              : html`<${AmountsTable} caption="Totals per chain" rows=${data.totals} />`
          }
          <${Chart} rows=${data.rows} from=${range.from} to=${range.to} />
          ${
            data.rows.length > 0
              ? html`<details><summary>Earnings per day as a table</summary>
                  <${AmountsTable} caption="Earnings per day and chain" rows=${data.rows} keyHeader="Day" /></details>`
              : null
          }`
        : null
    }
  </section>`;
}
