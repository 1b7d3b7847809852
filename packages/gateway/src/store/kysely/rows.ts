/** Normalizers for values whose driver representation differs between backends. */

export function toNum(v: number | string | bigint): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`integer out of range: ${String(v)}`);
  return n;
}

export function toBool(v: boolean | number): boolean {
  return v === true || v === 1;
}

export function toJson(v: unknown): string | null {
  return v === null || v === undefined ? null : JSON.stringify(v);
}

export function fromJson<T>(s: string | null): T | null {
  return s === null ? null : (JSON.parse(s) as T);
}

/** A view the drivers bind as a blob (pg wants a Buffer; node:sqlite takes any Uint8Array). */
export function toBlob(u: Uint8Array): Buffer {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** A plain Uint8Array copy, so callers never hold a driver's (possibly pooled) buffer. */
export function fromBlob(v: Uint8Array): Uint8Array {
  return Uint8Array.from(v);
}

export function nowIso(): string {
  return new Date().toISOString();
}

/** Bounds caller-supplied page sizes. */
export function pageSize(limit: number, max = 500): number {
  if (!Number.isFinite(limit)) return max;
  return Math.min(Math.max(Math.trunc(limit), 1), max);
}

/** A LIKE pattern matching `text` anywhere, with LIKE wildcards in it taken literally (escape '\'). */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
