/**
 * Which sandbox gateway `tollgate demo` talks to when no --gateway is given. `npm start`
 * records the URL it serves on in its data directory (`./data/gateway-url`), so the demo
 * finds a sandbox started on any PORT.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const DEFAULT_SANDBOX_URL = 'http://127.0.0.1:8402';

/**
 * --gateway, then $TOLLGATE_GATEWAY or $TOLLGATE_URL, then the URL a running sandbox wrote
 * in `$TOLLGATE_DATA_DIR/gateway-url` (default `./data`), then $PORT on loopback, then the
 * default address. `from` says which, for error messages.
 */
export function sandboxGateway(
  env: Record<string, string | undefined>,
  flag: string | undefined,
): { url: string; from: string } {
  const trim = (url: string) => url.trim().replace(/\/+$/, '');
  if (flag) return { url: trim(flag), from: '--gateway' };
  for (const name of ['TOLLGATE_GATEWAY', 'TOLLGATE_URL']) {
    const v = env[name];
    if (v) return { url: trim(v), from: `$${name}` };
  }
  const file = join(env['TOLLGATE_DATA_DIR'] || './data', 'gateway-url');
  try {
    const url = trim(readFileSync(file, 'utf8'));
    if (/^https?:\/\/\S+$/.test(url)) return { url, from: file };
  } catch {
    // no sandbox recorded its URL there
  }
  const port = env['PORT'];
  if (port && /^\d+$/.test(port)) return { url: `http://127.0.0.1:${port}`, from: '$PORT' };
  return { url: DEFAULT_SANDBOX_URL, from: 'the default address' };
}
