/**
 * "1 vs 2 gateway processes on PostgreSQL": the paid path with real sandbox payments,
 * driven through one gateway process (wrk -c32) and through two processes of the same
 * deployment on one database at once (two wrk -c16, one per process, so the offered
 * concurrency is the same). Each run records per process: req/s, latency, gateway CPU per
 * request; and for the database: server CPU per request (the whole cluster's process tree),
 * WAL bytes written per request (pg_current_wal_lsn; the statistics views lag by up to 10 s
 * for idle backends, so they are not used), and what the
 * gateways' backends were waiting on, sampled every 20 ms from pg_stat_activity (row locks
 * would show as Lock/transactionid or Lock/tuple, a starved pool as idle time, the WAL
 * flush as IO/WALSync).
 */
import type pg from 'pg';
import { cpuTimes } from './proc.ts';
import { type Config, measure, type RunResult, type ScenarioOptions, type Watched } from './scenario.ts';
import { median } from './stats.ts';

export interface Member {
  cfg: Config;
  connections: number;
}

export interface GroupRun {
  /** Per member, as measure() reports it (server CPU per that member's requests). */
  members: RunResult[];
  totalRps: number;
  requests: number;
  /** Database server CPU µs per request over all members' requests. */
  dbUsPerReq: number;
  walBytesPerReq: number;
  /** Share of samples of the gateways' backends in each state ("active: IO/WALSync", "idle", …). */
  waits: Record<string, number>;
  problems: string[];
}

async function walBytes(client: pg.Client): Promise<number> {
  const r = await client.query<{ b: string }>(
    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS b",
  );
  return Number(r.rows[0]?.b ?? Number.NaN);
}

/** Samples the gateways' backends (application_name 'tollgate') until stopped. */
function sampleWaits(client: pg.Client): {
  stop: () => Promise<Record<string, number>>;
} {
  const counts: Record<string, number> = {};
  let total = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const r = await client.query<{ state: string | null; t: string | null; e: string | null }>(
        "SELECT state, wait_event_type AS t, wait_event AS e FROM pg_stat_activity WHERE application_name = 'tollgate'",
      );
      for (const row of r.rows) {
        const key =
          row.state === 'active' ? `active: ${row.t ? `${row.t}/${row.e}` : 'on CPU'}` : `${row.state}`;
        counts[key] = (counts[key] ?? 0) + 1;
        total++;
      }
      await new Promise((res) => setTimeout(res, 20));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const out: Record<string, number> = {};
      for (const [k, v] of Object.entries(counts)) out[k] = v / (total || 1);
      return out;
    },
  };
}

/** One run of all members at once. */
export async function measureGroup(
  members: Member[],
  db: Watched,
  monitor: pg.Client,
  seconds: number,
  o: ScenarioOptions,
): Promise<GroupRun> {
  const before = await walBytes(monitor);
  const dbBefore = cpuTimes(db.pid, db.tree);
  const waits = sampleWaits(monitor);
  const members_ = await Promise.all(
    members.map((m) => measure(m.cfg, seconds, { ...o, connections: m.connections })),
  );
  const dbAfter = cpuTimes(db.pid, db.tree);
  const share = await waits.stop();
  const after = await walBytes(monitor);
  const requests = members_.reduce((s, r) => s + r.requests, 0);
  const dbSec = dbAfter.user + dbAfter.system - dbBefore.user - dbBefore.system;
  return {
    members: members_,
    totalRps: members_.reduce((s, r) => s + r.rps, 0),
    requests,
    dbUsPerReq: requests > 0 ? (dbSec / requests) * 1e6 : Number.NaN,
    walBytesPerReq: requests > 0 ? (after - before) / requests : Number.NaN,
    waits: share,
    problems: members_.flatMap((r, i) => r.problems.map((p) => `${members[i]!.cfg.label}: ${p}`)),
  };
}

export interface GroupSummary {
  key: string;
  label: string;
  processes: number;
  totalRps: number;
  totalRange: [number, number];
  perProcessRps: number[];
  p50Ms: number;
  p99Ms: number;
  gatewayUsPerReq: number;
  dbUsPerReq: number;
  walBytesPerReq: number;
  cpuBusy: [number, number];
  waits: Record<string, number>;
  problems: string[];
}

/** Medians over rounds; latency and gateway CPU are the median over rounds of the members' mean. */
export function summarizeGroup(key: string, label: string, runs: GroupRun[]): GroupSummary {
  const n = runs[0]?.members.length ?? 0;
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / (xs.length || 1);
  const totals = runs.map((r) => r.totalRps).filter(Number.isFinite);
  const waitKeys = [...new Set(runs.flatMap((r) => Object.keys(r.waits)))];
  const waits: Record<string, number> = {};
  for (const k of waitKeys) waits[k] = median(runs.map((r) => r.waits[k] ?? 0));
  return {
    key,
    label,
    processes: n,
    totalRps: median(totals),
    totalRange: totals.length ? [Math.min(...totals), Math.max(...totals)] : [Number.NaN, Number.NaN],
    perProcessRps: Array.from({ length: n }, (_, i) => median(runs.map((r) => r.members[i]!.rps))),
    p50Ms: median(runs.map((r) => mean(r.members.map((m) => m.p50Ms)))),
    p99Ms: median(runs.map((r) => mean(r.members.map((m) => m.p99Ms)))),
    // Gateway CPU per request over all processes: the sum of their CPU over all their requests.
    gatewayUsPerReq: median(
      runs.map((r) => {
        const cpu = r.members.reduce(
          (s, m) => s + (Object.values(m.cpuUsPerReq)[0] ?? Number.NaN) * m.requests,
          0,
        );
        return cpu / r.requests;
      }),
    ),
    dbUsPerReq: median(runs.map((r) => r.dbUsPerReq)),
    walBytesPerReq: median(runs.map((r) => r.walBytesPerReq)),
    cpuBusy: [
      median(runs.map((r) => r.members[0]?.cpus[0]?.busy ?? Number.NaN)),
      median(runs.map((r) => r.members[0]?.cpus[1]?.busy ?? Number.NaN)),
    ],
    waits,
    problems: [...new Set(runs.flatMap((r) => r.problems))],
  };
}

/** Alternating rounds of each group (forward, then reverse order), after a warm-up of each. */
export async function runGroups(
  groups: { key: string; label: string; members: Member[] }[],
  db: Watched,
  monitor: pg.Client,
  o: ScenarioOptions & { warmupS: number },
): Promise<{ summaries: GroupSummary[]; rounds: Record<string, GroupRun>[] }> {
  for (const g of groups) {
    const r = await measureGroup(g.members, db, monitor, o.warmupS, o);
    o.log(
      `  warm-up ${g.label}: ${r.totalRps.toFixed(0)} req/s${r.problems.length ? `  [${r.problems.join('; ')}]` : ''}`,
    );
  }
  const rounds: Record<string, GroupRun>[] = [];
  for (let i = 0; i < o.rounds; i++) {
    const order = i % 2 === 0 ? groups : [...groups].reverse();
    const round: Record<string, GroupRun> = {};
    for (const g of order) {
      const r = await measureGroup(g.members, db, monitor, o.roundS, o);
      round[g.key] = r;
      o.log(
        `  round ${i + 1} ${g.label}: ${r.totalRps.toFixed(0)} req/s (${r.members.map((m) => m.rps.toFixed(0)).join(' + ')}), ` +
          `PostgreSQL ${r.dbUsPerReq.toFixed(0)} µs/req, ${r.walBytesPerReq.toFixed(0)} WAL B/req` +
          `${r.problems.length ? `  [${r.problems.join('; ')}]` : ''}`,
      );
    }
    rounds.push(round);
  }
  return {
    summaries: groups.map((g) =>
      summarizeGroup(
        g.key,
        g.label,
        rounds.map((r) => r[g.key]!),
      ),
    ),
    rounds,
  };
}
