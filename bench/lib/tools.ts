/**
 * The external tools the bench needs (taskset, wrk, nginx; perf and valgrind for some
 * options): found on PATH or installed from Debian with apt-get; a clear error when that is
 * not possible.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const PACKAGES: Record<string, string> = {
  taskset: 'util-linux',
  wrk: 'wrk',
  nginx: 'nginx-light',
  perf: 'linux-perf',
  valgrind: 'valgrind',
  callgrind_control: 'valgrind',
};
const SBIN = ['/usr/sbin', '/sbin', '/usr/local/sbin'];

export function which(cmd: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  for (const dir of SBIN) if (existsSync(`${dir}/${cmd}`)) return `${dir}/${cmd}`;
  return null;
}

/** Returns the path of each tool, installing missing ones with apt-get (needs root). */
export function ensureTools(tools: readonly string[]): Record<string, string> {
  const missing = tools.filter((t) => !which(t));
  if (missing.length) {
    const pkgs = [...new Set(missing.map((t) => PACKAGES[t] ?? t))];
    console.log(`bench: installing ${pkgs.join(', ')} with apt-get (missing: ${missing.join(', ')})`);
    try {
      execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit' });
      execFileSync('apt-get', ['install', '-y', '-q', ...pkgs], {
        stdio: 'inherit',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
    } catch (e) {
      throw new Error(
        `bench needs ${missing.join(', ')} and could not install ${pkgs.join(', ')} with apt-get ` +
          `(${(e as Error).message.split('\n')[0]}). Install them by hand (Debian: apt-get install -y ${pkgs.join(' ')}) and rerun.`,
      );
    }
  }
  const paths: Record<string, string> = {};
  for (const t of tools) {
    const p = which(t);
    if (!p) throw new Error(`bench needs ${t}, which is still missing after installing ${PACKAGES[t] ?? t}`);
    paths[t] = p;
  }
  return paths;
}

/** The version line of a tool, for the report. */
export function versionOf(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return (
    `${r.stdout}${r.stderr}`
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? 'unknown'
  );
}
