/**
 * Strict base64 JSON, the encoding of X-PAYMENT and X-PAYMENT-RESPONSE. Strict means:
 * canonical standard or url-safe alphabet with correct padding, a size cap, and JSON
 * whose keys cannot touch prototypes. Every failure is a ProtocolError.
 */
import { ProtocolError, type ProtocolErrorCode } from './errors.ts';

const STD = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const URL_SAFE = /^[A-Za-z0-9_-]*$/;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function encodeBase64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

export function decodeBase64Json(header: unknown, maxBytes: number, code: ProtocolErrorCode): unknown {
  if (typeof header !== 'string') throw new ProtocolError(code, 'header must be a string');
  const text = header.trim();
  if (text.length === 0) throw new ProtocolError(code, 'header is empty');
  if (text.length > Math.ceil((maxBytes * 4) / 3) + 4) throw new ProtocolError(code, 'header is too large');
  let bytes: Buffer;
  if (STD.test(text)) bytes = Buffer.from(text, 'base64');
  else if (URL_SAFE.test(text) && text.length % 4 !== 1) bytes = Buffer.from(text, 'base64url');
  else throw new ProtocolError(code, 'header is not valid base64');
  let json: string;
  try {
    json = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ProtocolError(code, 'header does not decode to UTF-8 text');
  }
  let value: unknown;
  try {
    value = JSON.parse(json, (key, v) => {
      if (FORBIDDEN_KEYS.has(key)) throw new ProtocolError(code, `forbidden key ${key}`);
      return v;
    });
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    throw new ProtocolError(code, 'header does not decode to JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ProtocolError(code, 'header must decode to a JSON object');
  }
  return value;
}
