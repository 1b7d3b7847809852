/**
 * A tiny HTML template: `html` escapes every interpolated value unless it is already
 * SafeHtml (another `html` result), so text from providers (names, descriptions,
 * paths) can never become markup. Attribute values must be quoted in templates;
 * escaping covers both quote characters.
 */

export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

type Value = SafeHtml | string | number | bigint | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<p>${text}</p>\`` with `text` escaped. */
export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}

export interface PageOptions {
  title: string;
  /** The page's main content (inside <main>). */
  main: SafeHtml;
  /** Module scripts by absolute URL (same origin; the CSP forbids inline scripts). */
  scripts?: string[];
  /** Pre-rendered <link rel> or <meta> lines for the head. */
  head?: SafeHtml;
}

/** A whole page: skip link, header with navigation, main, footer. */
export function page(opts: PageOptions): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title}</title>
<link rel="stylesheet" href="/assets/style.css">
<link rel="icon" href="data:,">
${opts.head}
${(opts.scripts ?? []).map((src) => html`<script type="module" src="${src}"></script>\n`)}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site">
<nav aria-label="Site">
<a class="brand" href="/">Tollgate</a>
<a href="/">API directory</a>
<a href="/console">Provider console</a>
</nav>
</header>
<main id="main" tabindex="-1">
${opts.main}
</main>
<footer class="site">
<p>Paid with x402 in USDC on Sui and Solana. Machine-readable: <a href="/v1/directory/apis">/v1/directory/apis</a>.</p>
</footer>
</body>
</html>
`.value;
}
