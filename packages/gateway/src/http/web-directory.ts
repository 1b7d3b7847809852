/**
 * The web directory (docs/web.md): `GET /` lists the listed APIs with search, a category
 * filter and pages; `GET /directory/:slug` shows one API's endpoints, the price per
 * chain and copy-paste snippets. Server-rendered HTML (content needs no JavaScript; a
 * small module adds copy buttons), over the same domain functions as /v1/directory/*.
 * Prices come from the quote the 402 is built from, so the page shows what a 402 asks.
 */
import { formatAmount, USDC_DECIMALS } from '@tollgate/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { marketplaceQuote } from '../marketplace/quote.ts';
import { toAcceptOption } from '../payments/requirement.ts';
import {
  directorySummary,
  isListed,
  type Listing,
  listDirectory,
  loadListing,
} from '../providers/directory.ts';
import { CATEGORY_PATTERN, isSlug } from '../providers/rules.ts';
import { pricing, protectedUrl } from '../providers/views.ts';
import type { Endpoint } from '../store/store.ts';
import { DIRECTORY_DEFAULT_LIMIT, decodeCursor, encodeCursor } from './directory.ts';
import { html, page, type SafeHtml } from './web-html.ts';
import { curlSnippet, payFetchSnippet, type SnippetInput, stockX402Snippet } from './web-snippets.ts';
import { HIDDEN_ROUTE, webSecurityHeaders } from './web-static.ts';

const CATEGORY = new RegExp(CATEGORY_PATTERN);
const MAX_Q = 100;
type Query = Record<string, string | string[] | undefined>;

class BadInput extends Error {}

/** A single optional text parameter; repeated or over-long values are bad input. */
function param(query: Query, name: string, max: number): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > max) throw new BadInput(`${name} is not valid`);
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function sendPage(reply: FastifyReply, status: number, body: string, cache: string) {
  return webSecurityHeaders(reply)
    .code(status)
    .headers({ 'cache-control': cache })
    .type('text/html; charset=utf-8')
    .send(body);
}

function messagePage(reply: FastifyReply, status: number, title: string, text: string) {
  const main = html`<h1>${title}</h1><p>${text}</p><p><a href="/">Back to the directory</a></p>`;
  return sendPage(reply, status, page({ title: `${title} · Tollgate`, main }), 'no-store');
}

function homeUrl(q: string | undefined, category: string | undefined, cursor?: string): string {
  const params = new URLSearchParams();
  if (q) params.set('q', q);
  if (category) params.set('category', category);
  if (cursor) params.set('cursor', cursor);
  const search = params.toString();
  return search ? `/?${search}` : '/';
}

function apiCard(deps: Deps, l: Listing): SafeHtml {
  const s = directorySummary(deps, l);
  return html`<li class="card">
<h3><a href="/directory/${s.slug}">${s.name}</a></h3>
<p>${s.description || 'No description.'}</p>
<dl class="facts">
<div><dt>Category</dt><dd>${s.category}</dd></div>
<div><dt>Chains</dt><dd>${s.chains.join(', ')}</dd></div>
<div><dt>Endpoints</dt><dd>${s.endpointCount}</dd></div>
</dl>
</li>`;
}

async function home(request: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply, deps: Deps) {
  let q: string | undefined;
  let category: string | undefined;
  let after: string | undefined;
  let cursor: string | undefined;
  try {
    q = param(request.query, 'q', MAX_Q);
    category = param(request.query, 'category', 64);
    if (category !== undefined && !CATEGORY.test(category)) throw new BadInput('category is not valid');
    cursor = param(request.query, 'cursor', 200);
    after = cursor === undefined ? undefined : decodeCursor(cursor);
  } catch (err) {
    if (!(err instanceof BadInput || err instanceof ApiError)) throw err;
    return messagePage(reply, 400, 'Invalid search', `${err.message}.`);
  }
  const [{ listings, nextAfter }, categories] = await Promise.all([
    listDirectory(deps, {
      ...(q ? { q } : {}),
      ...(category ? { category } : {}),
      ...(after ? { after } : {}),
      limit: DIRECTORY_DEFAULT_LIMIT,
    }),
    deps.store.projects.listedCategories(),
  ]);
  const filtered = q !== undefined || category !== undefined;
  const count = `${listings.length} API${listings.length === 1 ? '' : 's'}`;
  const main = html`<h1>API directory</h1>
<p class="lede">Paid APIs you can call with USDC on Sui or Solana: no account, no API key. An unpaid request answers <code>402 Payment Required</code> with the price.</p>
<form class="search" method="get" action="/" role="search" aria-label="APIs">
<div class="field"><label for="q">Search</label>
<input id="q" name="q" type="search" maxlength="${MAX_Q}" value="${q ?? ''}" placeholder="Name or description"></div>
<div class="field"><label for="category">Category</label>
<select id="category" name="category">
<option value="">All categories</option>
${categories.map(
  (c) =>
    html`<option value="${c.category}"${category === c.category ? html` selected` : ''}>${c.category} (${c.count})</option>`,
)}
</select></div>
<button type="submit">Search</button>
${filtered ? html`<a class="clear" href="/">Clear</a>` : ''}
</form>
<section aria-labelledby="results-heading">
<h2 id="results-heading">${cursor ? `${count} (continued)` : count}${q ? html` matching “${q}”` : ''}${category ? html` in ${category}` : ''}</h2>
${
  listings.length === 0
    ? html`<p>No listed API matches. <a href="/">Show all APIs</a>.</p>`
    : html`<ul class="cards">${listings.map((l) => apiCard(deps, l))}</ul>`
}
${
  cursor || nextAfter
    ? html`<nav class="pages" aria-label="Pages">
${cursor ? html`<a href="${homeUrl(q, category)}">First page</a>` : ''}
${nextAfter ? html`<a rel="next" href="${homeUrl(q, category, encodeCursor(nextAfter))}">Next page</a>` : ''}
</nav>`
    : ''
}
</section>`;
  return sendPage(reply, 200, page({ title: 'API directory · Tollgate', main }), 'public, max-age=10');
}

function snippet(id: string, label: string, code: string): SafeHtml {
  return html`<figure class="snippet">
<figcaption><span id="${id}-label">${label}</span> <button type="button" class="copy" data-copy="${id}" aria-describedby="${id}-label" hidden>Copy</button></figcaption>
<pre><code id="${id}">${code}</code></pre>
</figure>`;
}

function endpointSection(
  deps: Deps,
  l: Listing,
  rails: Parameters<typeof marketplaceQuote>[2],
  e: Endpoint,
  index: number,
) {
  const slug = l.project.slug;
  // The quote the 402 is built from: same rails, same fee rule, same per-chain splits.
  const quote = marketplaceQuote(slug, e, rails, deps.config, deps.verifiers);
  const options = quote.options.map((o) => toAcceptOption({ ...o, memo: '' }));
  const price = pricing(deps.config, e.price);
  const free = quote.price + quote.fee === 0n;
  const url = protectedUrl(deps.config, slug, e.path);
  const maxTotal = formatAmount(quote.price + quote.fee, USDC_DECIMALS);
  const input: SnippetInput = {
    method: e.method,
    url,
    maxTotal,
    chains: options.map((o) => o.chain),
    network: deps.config.chainNetwork,
  };
  const available = e.enabled && deps.health.isHealthy(e.id);
  const id = `endpoint-${index + 1}`;
  return html`<section class="endpoint" aria-labelledby="${id}">
<h3 id="${id}"><span class="method">${e.method}</span> <code>/${e.path}</code></h3>
<p>${e.description || 'No description.'}</p>
<p class="status ${available ? 'up' : 'down'}">${available ? 'Available' : 'Currently unavailable'}</p>
${
  free
    ? html`<p>Free: no payment needed.</p>`
    : html`<table class="prices">
<caption>Price per request: ${price.price} USDC + ${price.fee} USDC platform fee</caption>
<thead><tr><th scope="col">Chain</th><th scope="col">Network</th><th scope="col">Total (USDC)</th><th scope="col">To provider</th><th scope="col">Platform fee</th></tr></thead>
<tbody>${options.map(
        (o) => html`<tr data-chain="${o.chain}">
<th scope="row">${o.chain}</th><td>${o.network}</td><td class="total">${o.totalAmount}</td>
<td>${o.splits.find((s) => s.recipientType === 'provider')?.amount ?? '0'}</td>
<td>${o.splits.find((s) => s.recipientType === 'platform')?.amount ?? '0'}</td>
</tr>`,
      )}</tbody>
</table>`
}
${snippet(`${id}-curl`, 'curl (shows the 402 with the price)', curlSnippet(input))}
${!free && options.length > 0 ? snippet(`${id}-payfetch`, 'Node.js with @tollgate/client payFetch', payFetchSnippet(input)) : ''}
${l.project.x402Exact && input.chains.includes('solana') ? snippet(`${id}-x402`, 'A stock x402 v2 client (Solana)', stockX402Snippet(input)) : ''}
</section>`;
}

async function detail(
  request: FastifyRequest<{ Params: { slug: string } }>,
  reply: FastifyReply,
  deps: Deps,
) {
  const { slug } = request.params;
  const listing = isSlug(slug) ? await loadListing(deps, slug) : null;
  // The catalogue entry (cached) holds the rails exactly as the 402 prices them.
  const entry = listing && isListed(listing) ? await deps.catalog.get(slug) : null;
  if (!listing || !entry || !isListed(listing)) {
    return messagePage(reply, 404, 'API not found', `No listed API is called “${slug}”.`);
  }
  const s = directorySummary(deps, listing);
  const endpoints = listing.endpoints
    .filter((e) => e.enabled)
    .sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  const main = html`<p class="crumbs"><a href="/">API directory</a> › ${s.category}</p>
<h1>${s.name}</h1>
<p class="lede">${s.description}</p>
<dl class="facts">
<div><dt>Category</dt><dd><a href="${homeUrl(undefined, s.category)}">${s.category}</a></dd></div>
<div><dt>Pay on</dt><dd>${s.chains.join(', ')} (USDC)</dd></div>
<div><dt>Stock x402 v2 clients</dt><dd>${listing.project.x402Exact ? 'accepted (Solana)' : 'not accepted'}</dd></div>
<div><dt>JSON</dt><dd><a href="/v1/directory/apis/${s.slug}">/v1/directory/apis/${s.slug}</a></dd></div>
</dl>
<h2>Endpoints</h2>
${endpoints.map((e, i) => endpointSection(deps, listing, entry.rails, e, i))}`;
  return sendPage(
    reply,
    200,
    page({ title: `${s.name} · Tollgate`, main, scripts: ['/assets/directory.mjs'] }),
    'public, max-age=10',
  );
}

export function directoryPages(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: Query }>('/', HIDDEN_ROUTE, (request, reply) => home(request, reply, deps));
  app.get('/directory', HIDDEN_ROUTE, (_request, reply) => reply.redirect('/', 302));
  app.get<{ Params: { slug: string } }>('/directory/:slug', HIDDEN_ROUTE, (request, reply) =>
    detail(request, reply, deps),
  );
}
