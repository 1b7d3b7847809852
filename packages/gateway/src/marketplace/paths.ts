/**
 * Splits and vets the raw target of a /p request before anything else happens:
 * a path that could escape the registered base is `invalid_path`, never a 402.
 */
import { isSlug } from '../providers/rules.ts';

export type PathCheck =
  | { ok: true; slug: string; path: string; query: string; pathWithQuery: string }
  | { ok: false; reason: string };

const SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=:@%-]+$/;

export function splitMarketplaceTarget(rawUrl: string): PathCheck {
  const q = rawUrl.indexOf('?');
  const pathPart = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const query = q < 0 ? '' : rawUrl.slice(q + 1);
  if (!pathPart.startsWith('/p/')) return { ok: false, reason: 'not_marketplace' };
  const rest = pathPart.slice(3);
  const slash = rest.indexOf('/');
  const slug = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash + 1);
  if (!isSlug(slug)) return { ok: false, reason: 'invalid_slug' };
  if (/[\u0000-\u001f\u007f\\]/.test(rawUrl)) return { ok: false, reason: 'control_or_backslash' };
  if (/%(2f|5c|2e|00)/i.test(path)) return { ok: false, reason: 'encoded_separator' };
  if (path !== '') {
    for (const seg of path.split('/')) {
      if (seg === '') return { ok: false, reason: 'empty_segment' };
      if (seg === '.' || seg === '..') return { ok: false, reason: 'dot_segment' };
      if (!SEGMENT.test(seg)) return { ok: false, reason: 'invalid_character' };
    }
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) return { ok: false, reason: 'absolute_url' };
  return { ok: true, slug, path, query, pathWithQuery: rawUrl };
}
