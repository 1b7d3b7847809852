/**
 * Files the web pages need: our own (packages/gateway/web/) and a few vendor ES modules
 * from node_modules, served to the browser without a build step or a CDN.
 *
 * A file path from a URL is accepted only if every segment is a plain name (letters,
 * digits, `.`, `_`, `-`, not starting with a dot) with a known extension, and the
 * resolved path still lies under the root: no `..`, no encoded separators, no dotfiles.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { findPackageJSON } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
// Types only: `schema.hide` (keeps web routes out of the OpenAPI document) is @fastify/swagger's.
import type {} from '@fastify/swagger';
import type { FastifyReply } from 'fastify';

/** packages/gateway/web/ */
export const WEB_ROOT = fileURLToPath(new URL('../../web/', import.meta.url));

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers for every web answer (pages and assets). */
export function webSecurityHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers({
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  });
}

/** Route options for web routes: not part of the API, so not in /openapi.json. */
export const HIDDEN_ROUTE = { schema: { hide: true } } as const;

export const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

export interface WebFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot) : '';
}

function webFile(body: Buffer, name: string): WebFile {
  const contentType = CONTENT_TYPES[extensionOf(name)] ?? 'application/octet-stream';
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, contentType, etag };
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/**
 * The absolute path of `relative` under `root`, or null when the name is not a plain
 * relative path to a file type we serve (the caller answers 404).
 */
export function safeJoin(root: string, relative: string): string | null {
  if (relative.length === 0 || relative.length > 512) return null;
  const segments = relative.split('/');
  if (!segments.every((s) => SEGMENT.test(s))) return null;
  if (!(extensionOf(segments[segments.length - 1]!) in CONTENT_TYPES)) return null;
  const base = resolve(root);
  const full = resolve(base, ...segments);
  return full.startsWith(base + sep) ? full : null;
}

/**
 * Reads files under a root once and keeps them (the files ship with the gateway and do
 * not change while it runs).
 */
export function createFileCache(root: string) {
  const files = new Map<string, Promise<WebFile | null>>();
  return async (relative: string): Promise<WebFile | null> => {
    const full = safeJoin(root, relative);
    if (!full) return null;
    let pending = files.get(full);
    if (!pending) {
      pending = readFile(full).then(
        (body) => webFile(body, full),
        () => {
          // Misses are not kept: made-up names must not grow the cache, and a file may appear later.
          files.delete(full);
          return null;
        },
      );
      files.set(full, pending);
    }
    return pending;
  };
}

/**
 * Vendor modules by the name they are served under (/assets/vendor/<name>). Bare and
 * relative imports inside them are rewritten to these names, so the browser needs no
 * import map (an inline one would need a CSP exception). An import that is not in the
 * table fails loudly when the module is first read, not in the browser.
 */
const VENDOR: Record<string, { pkg: string; file: string; imports?: Record<string, string> }> = {
  'preact.mjs': { pkg: 'preact', file: 'dist/preact.mjs' },
  'preact-hooks.mjs': { pkg: 'preact', file: 'hooks/dist/hooks.mjs', imports: { preact: './preact.mjs' } },
  'htm.mjs': { pkg: 'htm', file: 'dist/htm.mjs' },
  'htm-preact.mjs': {
    pkg: 'htm',
    file: 'preact/index.mjs',
    imports: { preact: './preact.mjs', htm: './htm.mjs' },
  },
  'wallet-standard-app.mjs': {
    pkg: '@wallet-standard/app',
    file: 'lib/esm/index.js',
    imports: { './wallets.js': './wallet-standard-app-wallets.mjs' },
  },
  'wallet-standard-app-wallets.mjs': { pkg: '@wallet-standard/app', file: 'lib/esm/wallets.js' },
};

export const VENDOR_MODULES = Object.keys(VENDOR);

// `from"x"`, `from 'x'`, `import"x"`, `import('x')`: every static and dynamic specifier.
const SPECIFIER = /\b(from|import)(\s*\(?\s*)(["'])([^"'\n]+)\3/g;

/** The module's source with its imports rewritten; throws on an import we do not serve. */
export function rewriteImports(source: string, imports: Record<string, string>, name: string): string {
  return source
    .replace(SPECIFIER, (_all, keyword: string, gap: string, quote: string, spec: string) => {
      const target = imports[spec];
      if (target === undefined)
        throw new Error(`vendor module ${name} imports "${spec}", which is not served`);
      return `${keyword}${gap}${quote}${target}${quote}`;
    })
    .replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n');
}

const vendorFiles = new Map<string, WebFile>();

/** A vendor module, read and rewritten on first use; null for a name not in the table. */
export function vendorModule(name: string): WebFile | null {
  const hit = vendorFiles.get(name);
  if (hit) return hit;
  // Own keys only: `constructor` or `__proto__` are names too.
  const spec = Object.hasOwn(VENDOR, name) ? VENDOR[name] : undefined;
  if (!spec) return null;
  const pkgJson = findPackageJSON(spec.pkg, import.meta.url);
  if (!pkgJson) throw new Error(`vendor package ${spec.pkg} is not installed`);
  const source = readFileSync(join(dirname(pkgJson), spec.file), 'utf8');
  const file = webFile(Buffer.from(rewriteImports(source, spec.imports ?? {}, name), 'utf8'), name);
  vendorFiles.set(name, file);
  return file;
}
