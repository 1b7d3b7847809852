/**
 * Splits and vets the raw target of a /p request before anything else happens:
 * a path that could escape the registered base is `invalid_path`, never a 402.
 *
 * The rules, each checked in this order (the first that fails names the reason):
 * 1. the path starts with `/p/` (not_marketplace);
 * 2. the slug is one a project could have (invalid_slug);
 * 3. no control character, DEL or backslash anywhere in the target (control_or_backslash);
 * 4. no `%2f`, `%5c`, `%2e` or `%00` in the path, in either case (encoded_separator);
 * 5. each `/`-separated segment of the path, in order: not empty (empty_segment), not `.` or
 *    `..` (dot_segment), only RFC 3986 pchar characters (invalid_character);
 * 6. the path does not start with a URI scheme and a colon (absolute_url).
 * It runs on every /p request, so it is one pass over the characters with no regular
 * expression and no split (issue 14); paths.test.ts checks it against the rules written as
 * regular expressions, for any target.
 */
import { isSlug } from '../providers/rules.ts';

export type PathCheck =
  | { ok: true; slug: string; path: string; query: string; pathWithQuery: string }
  | { ok: false; reason: string };

/** RFC 3986 pchar without pct-encoding's meaning: unreserved, sub-delims, `:`, `@` and `%`. */
const PCHAR = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~!$&'()*+,;=:@%-")
  PCHAR[c.charCodeAt(0)] = 1;

/** Whether `s` holds a control character (U+0000–U+001F), DEL or a backslash. */
function hasControlOrBackslash(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x5c) return true;
  }
  return false;
}

/** Whether `path` holds `%2f`, `%5c`, `%2e` or `%00`, in either case. */
function hasEncodedSeparator(path: string): boolean {
  for (let i = path.indexOf('%'); i !== -1 && i + 2 < path.length; i = path.indexOf('%', i + 1)) {
    const a = path.charCodeAt(i + 1);
    const b = path.charCodeAt(i + 2);
    const lower = b | 0x20; // only F/f, E/e and C/c give the letters compared here
    if (a === 0x32 && (lower === 0x66 || lower === 0x65)) return true; // %2f %2e
    if (a === 0x35 && lower === 0x63) return true; // %5c
    if (a === 0x30 && b === 0x30) return true; // %00
  }
  return false;
}

/** The first failing segment's reason, or null when every segment is fine. */
function segmentProblem(path: string): string | null {
  let start = 0;
  for (;;) {
    const slash = path.indexOf('/', start);
    const end = slash === -1 ? path.length : slash;
    const length = end - start;
    if (length === 0) return 'empty_segment';
    if (
      path.charCodeAt(start) === 0x2e &&
      (length === 1 || (length === 2 && path.charCodeAt(start + 1) === 0x2e))
    )
      return 'dot_segment';
    for (let i = start; i < end; i++) {
      const c = path.charCodeAt(i);
      if (c >= 128 || PCHAR[c] === 0) return 'invalid_character';
    }
    if (slash === -1) return null;
    start = slash + 1;
  }
}

/** Whether `path` starts with a URI scheme and its colon (`[a-z][a-z0-9+.-]*:`, any case). */
function startsWithScheme(path: string): boolean {
  const first = path.charCodeAt(0) | 0x20;
  if (first < 0x61 || first > 0x7a) return false;
  for (let i = 1; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === 0x3a) return true;
    const l = c | 0x20;
    const ok = (l >= 0x61 && l <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2e || c === 0x2d;
    if (!ok) return false;
  }
  return false;
}

export function splitMarketplaceTarget(rawUrl: string): PathCheck {
  const q = rawUrl.indexOf('?');
  const end = q < 0 ? rawUrl.length : q;
  if (!rawUrl.startsWith('/p/')) return { ok: false, reason: 'not_marketplace' };
  const slash = rawUrl.indexOf('/', 3);
  const slugEnd = slash < 0 || slash > end ? end : slash;
  const slug = rawUrl.slice(3, slugEnd);
  if (!isSlug(slug)) return { ok: false, reason: 'invalid_slug' };
  if (hasControlOrBackslash(rawUrl)) return { ok: false, reason: 'control_or_backslash' };
  const path = slugEnd === end ? '' : rawUrl.slice(slugEnd + 1, end);
  if (hasEncodedSeparator(path)) return { ok: false, reason: 'encoded_separator' };
  if (path !== '') {
    const problem = segmentProblem(path);
    if (problem !== null) return { ok: false, reason: problem };
  }
  if (startsWithScheme(path)) return { ok: false, reason: 'absolute_url' };
  return { ok: true, slug, path, query: q < 0 ? '' : rawUrl.slice(q + 1), pathWithQuery: rawUrl };
}
