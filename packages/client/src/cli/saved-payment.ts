/**
 * A paid request kept on disk when its retries gave up, so `tollgate retry <file>` can
 * send it again with the same proof: method, URL, the headers that shape the request,
 * the exact body bytes and the X-PAYMENT value. Written once (never overwritten), mode
 * 0600: the proof is what gets the paid answer. Credentials are never written.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { decodePaymentProof } from '@tollgate/protocol';
import type { PaidRequest } from '../paid-retry.ts';
import { CliError } from './command.ts';
import { configDir } from './credentials.ts';

/** Headers that are secrets of the caller's session, not part of what was paid for. */
const NOT_SAVED = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-payment']);

export interface SavedPaymentFile {
  tollgateSavedPayment: 1;
  savedAt: string;
  /** Why it was saved (the last answer), for people. */
  note: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The exact body bytes, base64; null when there was none. */
  bodyBase64: string | null;
  /** The X-PAYMENT header value. */
  payment: string;
  /** From the proof, for people: where to look the payment up. */
  chain: string;
  network: string;
  txHashOrDigest: string;
}

/** `$TOLLGATE_CONFIG_DIR/payments/<time>-<tx>.json`. */
export function defaultSavePath(env: Record<string, string | undefined>, paid: PaidRequest): string {
  const tx = decodePaymentProof(paid.proof).txHashOrDigest.slice(0, 12);
  const at = new Date()
    .toISOString()
    .replaceAll(':', '')
    .replace(/\.\d+Z$/, 'Z');
  return join(configDir(env), 'payments', `${at}-${tx}.json`);
}

export function savePaidRequest(path: string, paid: PaidRequest, note: string): void {
  const proof = decodePaymentProof(paid.proof);
  const file: SavedPaymentFile = {
    tollgateSavedPayment: 1,
    savedAt: new Date().toISOString(),
    note,
    method: paid.method,
    url: paid.url,
    headers: Object.fromEntries(
      Object.entries(paid.headers).filter(([k]) => !NOT_SAVED.has(k.toLowerCase())),
    ),
    bodyBase64: paid.body ? Buffer.from(paid.body).toString('base64') : null,
    payment: paid.proof,
    chain: proof.chain,
    network: proof.network,
    txHashOrDigest: proof.txHashOrDigest,
  };
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600); // whatever the umask
}

export function loadPaidRequest(path: string): PaidRequest {
  let value: Partial<SavedPaymentFile>;
  try {
    value = JSON.parse(readFileSync(path, 'utf8')) as Partial<SavedPaymentFile>;
  } catch (e) {
    throw new CliError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const bad = (what: string) => new CliError(`${path} is not a payment saved by \`tollgate pay\`: ${what}`);
  if (value?.tollgateSavedPayment !== 1) throw bad('no tollgateSavedPayment: 1');
  const { method, url, headers, bodyBase64, payment } = value;
  if (typeof method !== 'string' || !/^[A-Z]+$/.test(method)) throw bad('method');
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw bad('url');
  if (
    typeof headers !== 'object' ||
    headers === null ||
    !Object.values(headers).every((v) => typeof v === 'string')
  ) {
    throw bad('headers');
  }
  if (bodyBase64 !== null && typeof bodyBase64 !== 'string') throw bad('bodyBase64');
  try {
    decodePaymentProof(payment);
  } catch (e) {
    throw bad(`payment: ${(e as Error).message}`);
  }
  return {
    method,
    url,
    headers,
    body: bodyBase64 === null ? null : new Uint8Array(Buffer.from(bodyBase64, 'base64')),
    proof: payment as string,
  };
}
