/**
 * The checks on configuration values that a schema cannot express: URL shapes, host
 * names, whether a directory can be written and a key file read. Each returns a problem
 * ("expected …") or null, so config.ts can report every problem in one message. Also
 * the one way to print a URL that may carry credentials (safeUrl).
 */
import { accessSync, closeSync, constants, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { parseSolanaKeypair } from './crypto/solana-keypair.ts';

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

/** HOST: an IP address or a DNS host name (what `listen` accepts). */
export function checkHost(host: string): string | null {
  // No brackets: listen takes `::1`, not `[::1]`.
  if (isIP(host)) return null;
  if (host.length <= 253 && host.split('.').every((label) => HOST_LABEL.test(label))) return null;
  return 'an IP address or a host name to listen on, e.g. 127.0.0.1, 0.0.0.0, :: or localhost';
}

/** An http(s) URL without credentials, query or fragment (PUBLIC_BASE_URL). */
export function checkBaseUrl(value: string): string | null {
  const u = parseUrl(value);
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:'))
    return 'an http(s) URL such as https://pay.example.com';
  if (u.username || u.password || u.search || u.hash)
    return 'an http(s) URL with no credentials, query or fragment, such as https://pay.example.com';
  return null;
}

/** SOLANA_RPC_URL / SUI_RPC_URL: an http(s) endpoint. */
export function checkRpcUrl(value: string): string | null {
  const u = parseUrl(value);
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) return 'an http(s) URL of the node';
  return null;
}

const DATABASE_EXPECTED = 'sqlite:<path>, sqlite::memory: or postgres://user:password@host:5432/database';

/** DATABASE_URL's shape (not whether it can be opened: that is the store's job at start). */
export function checkDatabaseUrl(value: string): string | null {
  const url = value.trim();
  if (url.startsWith('sqlite:')) {
    const rest = url.slice('sqlite:'.length).replace(/^\/\//, '');
    return rest === '' ? `${DATABASE_EXPECTED} (the sqlite: path is empty)` : null;
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const u = parseUrl(url);
    // pg reads `?host=/var/run/postgresql` for a Unix socket, so a host may come from the query.
    if (!u)
      return `${DATABASE_EXPECTED} (not a valid URL: percent-encode special characters in the password)`;
    if (u.hash)
      return `${DATABASE_EXPECTED} (a # cuts the URL short: percent-encode it in the password as %23)`;
    if (!u.hostname && !u.searchParams.get('host')) return `${DATABASE_EXPECTED} (no host)`;
    return null;
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  return `${DATABASE_EXPECTED}${scheme ? ` (got scheme "${scheme}:")` : ''}`;
}

/** The file path of a `sqlite:` URL, or null for `sqlite::memory:` and other backends. */
export function sqliteFile(databaseUrl: string): string | null {
  const url = databaseUrl.trim();
  if (!url.startsWith('sqlite:')) return null;
  const rest = url.slice('sqlite:'.length).replace(/^\/\//, '');
  return rest === '' || rest === ':memory:' ? null : resolve(rest);
}

/**
 * Whether a directory exists and is writable, or can be created: the nearest existing
 * ancestor must be a writable directory. (Root ignores permission bits, but a read-only
 * file system still refuses.)
 */
export function checkWritableDir(dir: string): string | null {
  let at = resolve(dir);
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(at).isDirectory();
    } catch {
      const up = dirname(at);
      if (up === at) return `a directory that can be created (nothing of ${dir} exists)`;
      at = up;
      continue;
    }
    if (!isDir) return `a directory that can be created, but ${at} is a file`;
    try {
      accessSync(at, constants.W_OK);
      return null;
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === 'EROFS' ? 'a read-only file system' : 'not writable';
      return `a directory it can write, but ${at} is ${why}`;
    }
  }
}

/** A `sqlite:` database file: creatable in a writable directory, and not a directory itself. */
export function checkSqliteFile(file: string): string | null {
  try {
    const st = statSync(file);
    if (st.isDirectory()) return `a database file, but ${file} is a directory`;
    if (st.size > 0 && !isSqlite(file)) return `a SQLite database file, but ${file} is something else`;
  } catch {
    // does not exist yet: its directory decides
  }
  const dirProblem = checkWritableDir(dirname(file));
  return dirProblem ? `a SQLite file in ${dirProblem}` : null;
}

const SQLITE_HEADER = 'SQLite format 3\0';

/** Whether a file starts with SQLite's header (so a mistyped path is never opened, or chmod-ed, as one). */
function isSqlite(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(SQLITE_HEADER.length);
    readSync(fd, head, 0, head.length, 0);
    return head.toString('latin1') === SQLITE_HEADER;
  } catch {
    return true; // unreadable here: let opening it say why
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * A Solana keypair given as a key file path (solana-keygen JSON array) or the key itself
 * (JSON array or base58 of the 64 bytes), as TOLLGATE_SOLANA_SPONSOR_KEY takes it.
 */
export function checkSolanaKey(given: string): string | null {
  let text = given;
  let source = 'the value';
  let isFile = false;
  try {
    isFile = statSync(given).isFile();
  } catch {
    // not a file: the key itself, unless it looks like a path
    if (/[/\\]|\.json$/i.test(given)) return `a readable key file or a key, but there is no file ${given}`;
  }
  if (isFile) {
    try {
      text = readFileSync(given, 'utf8');
      source = `the file ${given}`;
    } catch (e) {
      return `a readable key file, but ${given} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
    }
  }
  if (parseSolanaKeypair(text) !== null) return null;
  return `a Solana keypair (a JSON array of 64 numbers as solana-keygen writes, or their base58), but ${source} is not one`;
}

/** A readable file (TOLLGATE_MODELS_FILE). */
export function checkReadableFile(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return `a readable file, but ${path} is not a file`;
    accessSync(path, constants.R_OK);
    return null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? `a readable file, but there is no file ${path}`
      : `a readable file, but ${path} cannot be read (${code ?? 'error'})`;
  }
}

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** Long opaque path segments are API keys more often than not (…/v2/<key>, …/<token>/). */
const OPAQUE_SEGMENT = /^[A-Za-z0-9_~.-]{20,}$/;

/**
 * A URL fit for logs and status pages: user and password masked, every query value masked,
 * long opaque path segments (the API keys some RPC providers put in the path) masked.
 * Not a URL at all: null, never the raw text (it may be a connection string).
 */
export function safeUrl(value: string | null | undefined): string | null {
  if (!value) return null;
  const u = parseUrl(value);
  if (!u) return null;
  if (u.protocol === 'sqlite:') return value;
  const path = u.pathname
    .split('/')
    .map((seg) => (OPAQUE_SEGMENT.test(seg) ? '***' : seg))
    .join('/');
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=***`).join('&');
  const credentials = u.username || u.password ? '***@' : '';
  return `${u.protocol}//${credentials}${u.host}${path === '/' && !query ? '' : path}${query ? `?${query}` : ''}`;
}

/** Where a DATABASE_URL points, without its password: backend and location. */
export function describeDatabase(databaseUrl: string): { backend: 'sqlite' | 'postgres'; location: string } {
  const url = databaseUrl.trim();
  if (url.startsWith('sqlite:')) {
    return { backend: 'sqlite', location: sqliteFile(url) ?? ':memory:' };
  }
  const u = parseUrl(url);
  if (!u) return { backend: 'postgres', location: '(unparseable URL)' };
  const socket = u.searchParams.get('host');
  const where = u.host || socket || 'localhost';
  const user = u.username ? `${decodeURIComponent(u.username)}@` : '';
  return { backend: 'postgres', location: `${user}${where}${u.pathname === '/' ? '' : u.pathname}` };
}
