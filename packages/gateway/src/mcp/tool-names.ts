/**
 * MCP tool names for marketplace endpoints: `<slug>__<method>_<path>`, characters
 * outside `[A-Za-z0-9_-]` turned into `_`, at most 64 characters (the strictest limit
 * hosts put on tool and function names). Slugs never contain `_`, so the part before
 * the first `__` is always the project, and a name is resolved by recomputing the
 * names of that project's endpoints: no table to keep.
 */
import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME = 64;
const SEPARATOR = '__';

interface Named {
  method: string;
  path: string;
}

function base(slug: string, e: Named): string {
  const path = e.path.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
  return `${slug}${SEPARATOR}${e.method.toLowerCase()}${path ? `_${path}` : ''}`;
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/**
 * Names for one project's endpoints, unique within the project: two endpoints whose
 * paths sanitize alike (`a/b`, `a.b`) and names over the limit get a hash of their
 * method and path instead of a counter, so a name never changes when others are added.
 */
export function toolNames<E extends Named>(slug: string, endpoints: readonly E[]): Map<string, E> {
  const bases = new Map<string, E[]>();
  for (const e of endpoints) {
    const b = base(slug, e);
    bases.set(b, [...(bases.get(b) ?? []), e]);
  }
  const out = new Map<string, E>();
  for (const [b, group] of bases) {
    for (const e of group) {
      const clash = group.length > 1;
      if (!clash && b.length <= MAX_TOOL_NAME) {
        out.set(b, e);
        continue;
      }
      const suffix = `_${shortHash(`${e.method.toUpperCase()} ${e.path}`)}`;
      out.set(`${b.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`, e);
    }
  }
  return out;
}

/** The project slug a tool name belongs to, or null for a name that is not an endpoint's. */
export function slugOfTool(name: string): string | null {
  const at = name.indexOf(SEPARATOR);
  return at > 0 ? name.slice(0, at) : null;
}
