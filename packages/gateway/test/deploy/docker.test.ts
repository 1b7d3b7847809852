/**
 * The image and compose.yaml for real, where a Docker daemon answers: build the image,
 * start PostgreSQL, two gateway replicas and nginx with `docker compose up --wait`, and
 * talk to the balancer. Skipped, with the reason in the suite's name, where Docker is not
 * usable (no CLI, no daemon, no compose plugin). The chain RPC URLs point at nothing:
 * the gateway starts without asking them, and /readyz says so.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './deploy-files.ts';

const docker = (args: string[], timeout = 60_000) =>
  spawnSync('docker', args, { cwd: ROOT, encoding: 'utf8', timeout });

function unavailable(): string {
  if (docker(['--version']).status !== 0) return 'no docker CLI';
  if (docker(['info'], 20_000).status !== 0) return 'no Docker daemon: `docker info` failed';
  if (docker(['compose', 'version']).status !== 0) return 'no `docker compose` plugin';
  return '';
}
const reason = unavailable();
if (reason) console.info(`docker.test.ts: skipped, ${reason}`);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.skipIf(!!reason)(
  `the image and compose.yaml under Docker${reason ? ` (skipped: ${reason})` : ''}`,
  () => {
    const project = `tollgate-test-${randomBytes(3).toString('hex')}`;
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-docker-'));
    const envFile = join(dir, '.env');
    let lb: string;
    const compose = (...args: string[]) =>
      docker(['compose', '-p', project, '--env-file', envFile, ...args], 15 * 60_000);

    beforeAll(async () => {
      const port = await freePort();
      lb = `http://127.0.0.1:${port}`;
      const env = {
        TOLLGATE_SECRET: randomBytes(32).toString('hex'),
        TOLLGATE_ADMIN_TOKEN: randomBytes(24).toString('hex'),
        POSTGRES_PASSWORD: randomBytes(24).toString('hex'),
        PUBLIC_BASE_URL: lb,
        SOLANA_RPC_URL: 'http://127.0.0.1:9',
        PLATFORM_SOLANA_ADDRESS: '11111111111111111111111111111112',
        TOLLGATE_HTTP_PORT: String(port),
      };
      writeFileSync(
        envFile,
        Object.entries(env)
          .map(([k, v]) => `${k}=${v}\n`)
          .join(''),
      );
      const up = compose('up', '-d', '--build', '--wait', '--wait-timeout', '300');
      expect(up.status, `${up.stdout}\n${up.stderr}\n${compose('logs', '--no-color').stdout}`).toBe(0);
    }, 16 * 60_000);

    afterAll(() => {
      compose('down', '-v', '--remove-orphans');
      rmSync(dir, { recursive: true, force: true });
    }, 5 * 60_000);

    it('serves through nginx: health, the JSON errors, preflights and nosniff', async () => {
      const health = await fetch(`${lb}/healthz`);
      expect(health.status).toBe(200);
      expect(health.headers.get('x-content-type-options')).toBe('nosniff');

      const missing = await fetch(`${lb}/p/no-such-project/x`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ error: 'endpoint_not_found' });

      const pre = await fetch(`${lb}/p/no-such-project/x`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('*');

      // The database is shared and up; the chain node is the one missing piece.
      const ready = await fetch(`${lb}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ checks: { database: 'ok' } });
    });

    it('runs both replicas healthy, as a non-root user, with a private data directory', () => {
      for (const service of ['gateway-a', 'gateway-b']) {
        const ps = compose('ps', '--format', '{{.Health}}', service);
        expect(ps.stdout.trim(), service).toBe('healthy');
        const uid = compose('exec', '-T', service, 'id', '-u');
        expect(uid.stdout.trim(), service).not.toBe('0');
        const mode = compose('exec', '-T', service, 'stat', '-c', '%a', '/var/lib/tollgate');
        expect(mode.stdout.trim(), service).toBe('700');
      }
    });
  },
);
