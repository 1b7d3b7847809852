/**
 * What the earnings and payments routes share about their query strings: the time range
 * (`from` inclusive, `to` exclusive, ISO-8601 or epoch ms, default the last 30 days) and
 * the page cursor.
 *
 * A cursor is opaque to callers and signed (HMAC under a key derived from the server
 * secret), so it can be neither forged nor carried over to another listing: it names the
 * listing it came from (scope and filters as given) and carries the range resolved on the
 * first page, so a defaulted range ("the last 30 days") does not move while paging.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { type DerivedKey, keyRing } from '../crypto/keys.ts';
import { invalid } from '../providers/rules.ts';

export const DEFAULT_RANGE_MS = 30 * 86_400_000;
/** Dates JavaScript can represent: anything else is not a time. */
const MAX_MS = 8.64e15;

export interface TimeRange {
  fromMs: number;
  toMs: number;
}

/** ISO-8601 (with a date) or integer epoch milliseconds; 400 `invalid_time` otherwise. */
export function parseTime(value: string, name: string): number {
  let ms: number;
  if (/^-?\d{1,16}$/.test(value)) ms = Number(value);
  else if (/^\d{4}-\d{2}-\d{2}/.test(value)) ms = Date.parse(value);
  else ms = Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_MS) {
    throw invalid(`${name} must be an ISO-8601 time or epoch milliseconds`, 'invalid_time');
  }
  return ms;
}

/** The range of a query: given bounds, or up to now and 30 days back; 400 `invalid_range` if empty or reversed. */
export function resolveRange(
  q: { from?: string | undefined; to?: string | undefined },
  nowMs: number,
): TimeRange {
  const toMs = q.to !== undefined ? parseTime(q.to, 'to') : nowMs;
  const fromMs = q.from !== undefined ? parseTime(q.from, 'from') : Math.max(0, toMs - DEFAULT_RANGE_MS);
  if (fromMs >= toMs) throw invalid('from must be before to', 'invalid_range');
  return { fromMs, toMs };
}

export interface PageCursor {
  /** The last payment of the previous page. */
  after: { createdAtMs: number; id: string };
  range: TimeRange;
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;

function badCursor(): Error {
  return invalid('cursor is not a nextCursor of this listing', 'invalid_cursor');
}

/** Signs and opens page cursors; `listing` is a string naming the listing and its filters. */
export function createCursors(secret: string, previous: string | null) {
  const ring: DerivedKey[] = keyRing(secret, previous, 'page-cursor/v1');
  const mac = (key: Buffer, listing: string, body: string) =>
    createHmac('sha256', key).update(`${listing}\u0000${body}`).digest().subarray(0, 16);

  return {
    encode(listing: string, c: PageCursor): string {
      const body = Buffer.from(
        JSON.stringify([c.after.createdAtMs, c.after.id, c.range.fromMs, c.range.toMs]),
      ).toString('base64url');
      return `${body}.${mac(ring[0]!.key, listing, body).toString('base64url')}`;
    },

    /** The cursor's position and range; 400 `invalid_cursor` for anything this listing did not issue. */
    decode(listing: string, cursor: string): PageCursor {
      const [body, sig, extra] = cursor.split('.');
      if (!body || !sig || extra !== undefined) throw badCursor();
      const given = Buffer.from(sig, 'base64url');
      const signed = ring.some((k) => {
        const want = mac(k.key, listing, body);
        return given.length === want.length && timingSafeEqual(given, want);
      });
      if (!signed) throw badCursor();
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        throw badCursor();
      }
      const [t, id, fromMs, toMs] = Array.isArray(parsed) ? parsed : [];
      if (
        !Number.isSafeInteger(t) ||
        typeof id !== 'string' ||
        !ID.test(id) ||
        !Number.isSafeInteger(fromMs) ||
        !Number.isSafeInteger(toMs)
      ) {
        throw badCursor();
      }
      return {
        after: { createdAtMs: t as number, id },
        range: { fromMs: fromMs as number, toMs: toMs as number },
      };
    },
  };
}

export type Cursors = ReturnType<typeof createCursors>;
