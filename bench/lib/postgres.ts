/**
 * A private, throwaway PostgreSQL cluster for `--postgres`: initdb into the bench's temp
 * dir, then the server in the foreground, pinned to the server CPU (beside the gateway,
 * as in the notes), on a free loopback port with trust auth. It never touches the
 * machine's own clusters. PostgreSQL refuses to run as root, so when the bench is root
 * both steps run as the `postgres` user through setpriv (which execs, so the pid the
 * bench tracks is the server's).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Child, spawnPinned } from './children.ts';
import { freePort, waitForPort } from './net.ts';

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
    : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) {
    throw new Error(
      '--postgres needs the PostgreSQL server binaries (Debian: apt-get install -y postgresql)',
    );
  }
  return join(root, newest, 'bin');
}

function ids(user: string): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Starts the cluster in a fresh temp dir of its own (the caller removes `dir` afterwards). */
export async function startPostgres(cpu: string): Promise<{ child: Child; url: string; dir: string }> {
  const bin = binDir();
  // Its own temp dir: the bench's is private to root, and PostgreSQL runs as another user.
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const as = (cmd: string, args: string[]): [string, string[]] =>
    asRoot
      ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', cmd, ...args]]
      : [cmd, args];
  if (asRoot) {
    const { uid, gid } = ids('postgres');
    chownSync(dir, uid, gid);
  }
  const [initCmd, initArgs] = as(join(bin, 'initdb'), [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '--no-sync',
  ]);
  execFileSync(initCmd, initArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await freePort();
  const [cmd, args] = as(join(bin, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    data,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'max_connections=50',
  ]);
  const child = await spawnPinned({ name: 'postgres', cpu, command: cmd, args, announces: false });
  await waitForPort(port, 30_000, () => child.stderr());
  // The port opens before recovery ends; the log says when connections are accepted.
  const deadline = Date.now() + 30_000;
  while (!child.stderr().includes('ready to accept connections')) {
    if (Date.now() > deadline) throw new Error(`postgres did not become ready:\n${child.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir };
}
