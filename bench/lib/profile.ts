/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and ranks where the time went: self time
 * per function (file:line) and per module group (a package, or a gateway folder),
 * plus inclusive time of the gateway's own functions.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  name: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  selfByFunction: ProfileLine[];
  selfByGroup: ProfileLine[];
  inclusiveGateway: ProfileLine[];
}

const ROOT = '/work/main/';

function shortUrl(url: string): string {
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) return u.slice(nm + 'node_modules/'.length);
  const i = u.indexOf('/packages/');
  if (i >= 0) return u.slice(i + 1);
  return u.startsWith(ROOT) ? u.slice(ROOT.length) : u;
}

/** A package name for node_modules frames, a folder for our own, or a V8 bucket. */
function groupOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native/builtin)';
  const s = shortUrl(url);
  if (s.startsWith('node:')) return s.split('/')[0]!;
  if (s.startsWith('packages/')) return s.split('/').slice(0, 4).join('/');
  const parts = s.split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

export function summarizeProfile(path: string, top = 25): ProfileSummary {
  const prof = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const selfUs = new Map<number, number>();
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
  }
  let totalUs = 0;
  const fnSelf = new Map<string, number>();
  const groupSelf = new Map<string, number>();
  const gwIncl = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    totalUs += us;
    const key = url ? `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}` : functionName;
    fnSelf.set(key, (fnSelf.get(key) ?? 0) + us);
    const g = groupOf(url, functionName);
    groupSelf.set(g, (groupSelf.get(g) ?? 0) + us);
    // Inclusive time of our own functions: walk up once per distinct frame.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (!cf.url.includes('/packages/')) continue;
      const k = `${cf.functionName || '(anonymous)'} ${shortUrl(cf.url)}:${cf.lineNumber + 1}`;
      if (seen.has(k)) continue;
      seen.add(k);
      gwIncl.set(k, (gwIncl.get(k) ?? 0) + us);
    }
  }
  const rank = (m: Map<string, number>): ProfileLine[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, share: totalUs ? us / totalUs : 0 }));
  return {
    totalMs: totalUs / 1000,
    selfByFunction: rank(fnSelf),
    selfByGroup: rank(groupSelf),
    inclusiveGateway: rank(gwIncl),
  };
}

export function formatProfile(title: string, s: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)} %`;
  const block = (h: string, lines: ProfileLine[]) =>
    [`  ${h}`, ...lines.map((l) => `    ${pct(l.share)}  ${l.ms.toFixed(0).padStart(7)} ms  ${l.name}`)].join(
      '\n',
    );
  return [
    `${title} (${s.totalMs.toFixed(0)} ms of CPU sampled, idle excluded)`,
    block('self time by module', s.selfByGroup),
    block('self time by function', s.selfByFunction),
    block('inclusive time, gateway/workspace functions', s.inclusiveGateway),
  ].join('\n');
}
