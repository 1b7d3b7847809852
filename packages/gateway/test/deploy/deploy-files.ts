/**
 * Readers for the deployment files, for tests: the block-YAML subset compose.yaml is
 * written in (mappings, sequences, quoted and plain scalars, JSON-style flow sequences,
 * anchors with `<<` merges), compose's `${VAR…}` interpolation, the Dockerfile's
 * instructions and nginx's directives. No YAML library is a dependency here; a
 * construct outside the subset fails loudly rather than being misread.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const read = (path: string): string => readFileSync(`${ROOT}${path}`, 'utf8');

export type Yaml = string | Yaml[] | { [key: string]: Yaml };

interface Line {
  indent: number;
  text: string;
  n: number;
}

export function parseYaml(source: string): Yaml {
  const lines: Line[] = [];
  source.split('\n').forEach((raw, i) => {
    const text = stripComment(raw).trimEnd();
    if (text.trim() === '') return;
    if (raw.includes('\t')) throw new Error(`line ${i + 1}: tabs are not YAML indentation`);
    lines.push({ indent: text.length - text.trimStart().length, text: text.trim(), n: i + 1 });
  });
  const anchors = new Map<string, Yaml>();
  let at = 0;

  function block(indent: number): Yaml {
    const first = lines[at];
    if (!first || first.indent < indent) return '';
    return first.text.startsWith('- ') || first.text === '-' ? sequence(first.indent) : mapping(first.indent);
  }

  function sequence(indent: number): Yaml[] {
    const out: Yaml[] = [];
    while (lines[at]?.indent === indent && lines[at]!.text.startsWith('-')) {
      const line = lines[at++]!;
      const rest = line.text.slice(1).trim();
      if (rest === '') out.push(block(indent + 1));
      else if (/^[^"'[{][^:]*:(\s|$)/.test(rest)) throw new Error(`line ${line.n}: mappings in sequences`);
      else out.push(scalar(rest, line.n));
    }
    return out;
  }

  function mapping(indent: number): { [key: string]: Yaml } {
    const out: { [key: string]: Yaml } = {};
    while (lines[at]?.indent === indent) {
      const line = lines[at++]!;
      const m = /^("[^"]*"|'[^']*'|[^:]+):(?:\s+(.*))?$/.exec(line.text);
      if (!m) throw new Error(`line ${line.n}: not a "key: value" line: ${line.text}`);
      const key = unquote(m[1]!);
      let rest = m[2] ?? '';
      let anchor: string | null = null;
      const a = /^&([\w-]+)\s*(.*)$/.exec(rest);
      if (a) {
        anchor = a[1]!;
        rest = a[2]!;
      }
      let value: Yaml;
      if (rest === '') value = lines[at] && lines[at]!.indent > indent ? block(lines[at]!.indent) : '';
      else if (rest.startsWith('*')) {
        const name = rest.slice(1);
        if (!anchors.has(name)) throw new Error(`line ${line.n}: unknown alias *${name}`);
        value = anchors.get(name)!;
      } else value = scalar(rest, line.n);
      if (anchor) anchors.set(anchor, value);
      if (key === '<<') {
        if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`line ${line.n}: bad merge`);
        for (const [k, v] of Object.entries(value)) if (!(k in out)) out[k] = v;
      } else out[key] = value;
    }
    return out;
  }

  const doc = block(0);
  if (at < lines.length) throw new Error(`line ${lines[at]!.n}: unexpected indentation`);
  return doc;
}

function scalar(text: string, n: number): Yaml {
  if (text.startsWith('[')) return JSON.parse(text) as string[];
  if (text.startsWith('{') || text.startsWith('|') || text.startsWith('>') || text.startsWith('&')) {
    throw new Error(`line ${n}: unsupported YAML: ${text}`);
  }
  return unquote(text);
}

function unquote(text: string): string {
  if (text.startsWith('"')) return JSON.parse(text) as string;
  if (text.startsWith("'")) return text.slice(1, -1).replaceAll("''", "'");
  return text;
}

/** A `#` comment starts a line or follows a space, outside quotes. */
function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || line[i - 1] === ' ')) return line.slice(0, i);
  }
  return line;
}

/** Compose's interpolation: `${VAR}`, `${VAR:-default}`, `${VAR:?error}`. */
export function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_all, name: string, op, arg: string) => {
    const v = env[name];
    if (v !== undefined && v !== '') return v;
    if (op === '?') throw new Error(`${name}: ${arg}`);
    return op === '-' ? arg : '';
  });
}

/** The variables a compose value interpolates. */
export function interpolated(value: string): string[] {
  return [...value.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]!);
}

/** Dockerfile instructions, continuation lines joined, comments dropped. */
export function dockerfileInstructions(source: string): { op: string; args: string }[] {
  const joined = source
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const space = l.indexOf(' ');
      return { op: l.slice(0, space).toUpperCase(), args: l.slice(space + 1).trim() };
    });
}

/** nginx directives as `[name, args]`, in order, comments dropped (blocks flattened). */
export function nginxDirectives(source: string): [string, string][] {
  const out: [string, string][] = [];
  let current = '';
  let quote: string | null = null;
  const end = () => {
    const s = current.trim().replace(/\s+/g, ' ');
    current = '';
    if (!s) return;
    const space = s.indexOf(' ');
    out.push(space < 0 ? [s, ''] : [s.slice(0, space), s.slice(space + 1)]);
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (quote) {
      current += c;
      if (c === quote && source[i - 1] !== '\\') quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
      current += c;
    } else if (c === '#') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (c === ';' || c === '{' || c === '}') end();
    else current += c;
  }
  end();
  return out;
}

/** nginx sizes: `2m`, `16k`, `1024`. */
export function nginxBytes(size: string): number {
  const m = /^(\d+)([kKmMgG]?)$/.exec(size.trim());
  if (!m) throw new Error(`not an nginx size: ${size}`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Number(m[1]) * unit;
}

/** nginx times: `60s`, `2m`, `500ms`, `30`. */
export function nginxMs(time: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(time.trim());
  if (!m) throw new Error(`not an nginx time: ${time}`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
}

/** .dockerignore patterns as a predicate over context-relative paths (no `!` exceptions). */
export function dockerIgnored(source: string): (path: string) => boolean {
  const patterns = source
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  if (patterns.some((p) => p.startsWith('!'))) throw new Error('exceptions (!) are not supported here');
  const regexes = patterns.map((p) => {
    const body = p
      .replace(/^\/+|\/+$/g, '')
      .split('/')
      .map((part) =>
        part === '**'
          ? '(?:.*)'
          : part
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '[^/]*')
              .replace(/\?/g, '[^/]'),
      )
      .join('/')
      .replace(/\(\?:\.\*\)\//g, '(?:.*/)?');
    // A pattern matching a directory excludes everything under it.
    return new RegExp(`^${body}(?:/.*)?$`);
  });
  return (path) => regexes.some((r) => r.test(path));
}
