/**
 * Web assets over real HTTP: the CSP on pages and files, content types, ETag
 * revalidation, the vendor modules (imports rewritten to served URLs), and no file
 * outside web/assets or web/console reachable by any spelling of `..`.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleDeps, buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { VENDOR_MODULES } from '../../src/http/web-static.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';

let base: URL;
let close: () => Promise<void>;

beforeAll(async () => {
  const config = loadConfig(
    { TOLLGATE_SECRET: 'x'.repeat(40), LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:' },
    [],
  );
  const store: Store = await openStore(config.databaseUrl);
  const app = await buildApp(assembleDeps(config, store, {}), { logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = new URL(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
  close = async () => {
    await app.close();
    await store.close();
  };
});
afterAll(async () => {
  await close?.();
});

/** A GET with the path sent exactly as written (fetch would resolve `..` first). */
function rawGet(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('web assets', () => {
  it('serves pages and files with a strict Content-Security-Policy', async () => {
    for (const path of ['/', '/assets/style.css', '/assets/directory.mjs', '/assets/vendor/preact.mjs']) {
      const res = await rawGet(path);
      expect(res.status, path).toBe(200);
      const csp = String(res.headers['content-security-policy']);
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).not.toContain('unsafe-inline');
      expect(csp, path).not.toContain('unsafe-eval');
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('answers each file type with its content type, and 304 to a matching If-None-Match', async () => {
    const expected: Record<string, string> = {
      '/': 'text/html; charset=utf-8',
      '/assets/style.css': 'text/css; charset=utf-8',
      '/assets/directory.mjs': 'text/javascript; charset=utf-8',
    };
    for (const [path, type] of Object.entries(expected)) {
      expect((await rawGet(path)).headers['content-type'], path).toBe(type);
    }
    const first = await rawGet('/assets/style.css');
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers['cache-control']).toMatch(/max-age=\d+/);
    const again = await rawGet('/assets/style.css', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    expect((await rawGet('/assets/style.css', { 'if-none-match': '"other"' })).status).toBe(200);
  });

  it('serves every vendor module as JavaScript whose imports are all served URLs', async () => {
    expect(VENDOR_MODULES).toEqual(
      expect.arrayContaining([
        'preact.mjs',
        'preact-hooks.mjs',
        'htm.mjs',
        'htm-preact.mjs',
        'wallet-standard-app.mjs',
      ]),
    );
    for (const name of VENDOR_MODULES) {
      const res = await rawGet(`/assets/vendor/${name}`);
      expect(res.status, name).toBe(200);
      expect(res.headers['content-type'], name).toBe('text/javascript; charset=utf-8');
      expect(res.body.length, name).toBeGreaterThan(0);
      expect(res.body, name).not.toContain('sourceMappingURL');
      const specifiers = [...res.body.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map(
        (m) => m[1]!,
      );
      for (const spec of specifiers) {
        expect(spec, `${name} imports ${spec}`).toMatch(/^\.\/[a-z-]+\.mjs$/);
        expect(VENDOR_MODULES, `${name} imports ${spec}`).toContain(spec.slice(2));
      }
    }
    for (const name of ['react.mjs', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect((await rawGet(`/assets/vendor/${name}`)).status, name).toBe(404);
    }
  });

  it('never serves a file outside web/assets or web/console, however `..` is spelled', async () => {
    const attempts = [
      '/assets/../package.json',
      '/assets/../../package.json',
      '/assets/%2e%2e/package.json',
      '/assets/%2E%2E/%2E%2E/package.json',
      '/assets/..%2fpackage.json',
      '/assets/..%2f..%2fpackage.json',
      '/assets/%2e%2e%2f%2e%2e%2fpackage.json',
      '/assets/.%2e/.%2e/package.json',
      '/assets/..%5c..%5cpackage.json',
      '/assets/..\\..\\package.json',
      '/assets/vendor/../../../package.json',
      '/assets/vendor/..%2f..%2f..%2fpackage.json',
      '/assets//etc/passwd',
      '/assets/%2fetc%2fpasswd',
      '/assets/style.css%00.json',
      '/assets/.hidden.css',
      '/assets/%2e%2e/src/app.ts',
      '/console/../../package.json',
      '/console/..%2f..%2fpackage.json',
      '/console/%2e%2e/%2e%2e/src/app.ts',
    ];
    for (const path of attempts) {
      const res = await rawGet(path);
      expect([400, 404], path).toContain(res.status);
      expect(res.body, path).not.toContain('"workspaces"');
      expect(res.body, path).not.toContain('@tollgate/gateway');
      expect(res.body, path).not.toContain('root:');
      expect(res.body, path).not.toContain('import ');
    }
  });

  it('answers a missing asset or console file with a clean 404', async () => {
    for (const path of ['/assets/nope.css', '/assets/no/such/file.mjs', '/console/no-such-file.mjs']) {
      const res = await rawGet(path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.body)).toMatchObject({ error: 'not_found' });
    }
  });
});
