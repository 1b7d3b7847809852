/**
 * Store-level micro-bench for "a redemption table with 1,000,000 rows": the three store
 * calls a paid request makes (settle.ts: `redemptions.byTx` for a replay, `claim`, and
 * `complete` once the answer is stored), one request after another, timed per call,
 * first on an empty table and then after bulk-inserting `BENCH_ROWS` realistic delivered
 * rows. Also the query plans of those statements. The store is the production one
 * (openStore: SQLite in WAL with its default synchronous=FULL, or PostgreSQL through pg).
 *
 * Env: BENCH_DATABASE_URL (sqlite:<file> or postgres://…), BENCH_ROWS, BENCH_OPS,
 * BENCH_WARMUP. Progress goes to stderr; the result is one JSON line on fd 3 (announce).
 */
import { randomBytes } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { openStore } from '../../packages/gateway/src/store/open-store.ts';
import type { ClaimInput, Store } from '../../packages/gateway/src/store/store.ts';
import { percentile } from '../lib/scaling-stats.ts';
import { announce, exitOnSignal } from './announce.ts';

const url = process.env['BENCH_DATABASE_URL'] ?? '';
const rows = Number(process.env['BENCH_ROWS'] ?? 1_000_000);
const ops = Number(process.env['BENCH_OPS'] ?? 2000);
const warmup = Number(process.env['BENCH_WARMUP'] ?? 200);
const isPg = url.startsWith('postgres');
const say = (s: string) => process.stderr.write(`${s}\n`);

const DAY = 86_400_000;
const HEADERS = JSON.stringify({ 'content-type': 'application/json', 'content-length': '189' });
const META = JSON.stringify({
  subject: 'ep:ep_0000000000000000000000000000',
  price: '10000',
  fee: '100',
  splits: [
    { recipient: 'Prov1der1111111111111111111111111111111111111', amount: '9900' },
    { recipient: 'P1atform111111111111111111111111111111111111', amount: '100' },
  ],
});
const BODY = new Uint8Array(randomBytes(189));
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const base58 = (n: number) => {
  const b = randomBytes(n);
  let s = '';
  for (const x of b) s += B58[x % 58];
  return s;
};
const payers = Array.from({ length: 64 }, () => base58(44));

function claimInput(i: number): ClaimInput {
  return {
    chain: 'solana',
    network: 'localnet',
    txId: base58(88),
    nonce: randomBytes(16).toString('base64url'),
    requestHash: randomBytes(32).toString('hex'),
    requirementId: `req_${randomBytes(12).toString('hex')}`,
    payer: payers[i % payers.length]!,
    projectId: 'prj_bench',
    endpointId: 'ep_bench',
    amount: 10_000n,
    fee: 100n,
    meta: JSON.parse(META) as Record<string, unknown>,
    nowMs: Date.now(),
    leaseMs: 30_000,
  };
}

type Op = 'lookup' | 'claim' | 'complete' | 'total';
export interface OpStats {
  p50: number;
  p99: number;
  mean: number;
}

/** `n` paid requests' store calls in sequence; µs per call. */
async function paidCalls(store: Store, n: number, from: number): Promise<Record<Op, OpStats>> {
  const t: Record<Op, number[]> = { lookup: [], claim: [], complete: [], total: [] };
  for (let i = 0; i < n; i++) {
    const input = claimInput(from + i);
    const a = performance.now();
    const seen = await store.redemptions.byTx(input.chain, input.network, input.txId);
    const b = performance.now();
    const claimed = await store.redemptions.claim(input);
    const c = performance.now();
    if (seen !== null || claimed.kind !== 'claimed')
      throw new Error(`unexpected claim result ${claimed.kind}`);
    const done = await store.redemptions.complete(
      claimed.redemption.id,
      claimed.redemption.attempt,
      { status: 200, headers: JSON.parse(HEADERS) as Record<string, string>, body: BODY },
      Date.now(),
    );
    const d = performance.now();
    if (!done) throw new Error('complete refused');
    t.lookup.push((b - a) * 1000);
    t.claim.push((c - b) * 1000);
    t.complete.push((d - c) * 1000);
    t.total.push((d - a) * 1000);
  }
  const stats = (xs: number[]): OpStats => ({
    p50: percentile(xs, 50),
    p99: percentile(xs, 99),
    mean: xs.reduce((s, x) => s + x, 0) / xs.length,
  });
  return {
    lookup: stats(t.lookup),
    claim: stats(t.claim),
    complete: stats(t.complete),
    total: stats(t.total),
  };
}

const COLUMNS = `id, chain, network, tx_id, nonce, request_hash, requirement_id, payer, state, attempt,
  lease_until_ms, response_status, response_headers, response_body, meta, created_at_ms, delivered_at_ms,
  project_id, endpoint_id, amount, fee, replays, refund_state, failures, retry_at_ms`;

/** The paid path's statements as the repository issues them (redemption-repo.ts), for the plans. */
const PLANNED = {
  lookup: 'SELECT * FROM redemptions WHERE chain = $1 AND network = $2 AND tx_id = $3',
  claimConflictRead:
    'SELECT * FROM redemptions WHERE (chain = $1 AND network = $2 AND tx_id = $3) OR nonce = $4',
  complete:
    "UPDATE redemptions SET state = 'delivered' WHERE id = $1 AND attempt = $2 AND state = 'in_progress' AND refund_state IS NULL",
};

/** 30 days of delivered payments ending an hour ago, oldest first (ids sort by time, as newId's). */
function sqliteBulk(file: string, n: number): void {
  const db = new DatabaseSync(file);
  try {
    db.exec('PRAGMA busy_timeout = 5000');
    db.exec('PRAGMA cache_size = -262144');
    const t0 = Date.now() - 30 * DAY - 3_600_000;
    const step = Math.max(1, Math.floor((30 * DAY) / n));
    db.exec('BEGIN IMMEDIATE');
    db.prepare(
      `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
       INSERT INTO redemptions (${COLUMNS})
       SELECT 'rdm_' || printf('%012x%04x', ? + i * ?, 0) || lower(hex(randomblob(8))),
         CASE WHEN i % 5 = 0 THEN 'sui' ELSE 'solana' END, 'localnet',
         lower(hex(randomblob(44))), lower(hex(randomblob(11))), lower(hex(randomblob(32))),
         'req_' || lower(hex(randomblob(12))), 'payer' || printf('%039d', abs(random()) % 5000),
         'delivered', 1, ? + i * ? + 30000, 200, ?, randomblob(189), ?, ? + i * ?, ? + i * ? + 150,
         'prj_' || printf('%06d', abs(random()) % 300), 'ep_' || printf('%06d', abs(random()) % 10000),
         '10000', '100', 0, NULL, 0, 0
       FROM s`,
    ).run(n, t0, step, t0, step, HEADERS, META, t0, step, t0, step);
    db.exec('COMMIT');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

function sqlitePlans(file: string): Record<string, string[]> {
  const db = new DatabaseSync(file);
  try {
    const out: Record<string, string[]> = {};
    for (const [k, q] of Object.entries(PLANNED)) {
      const params = (q.match(/\$\d/g) ?? []).map((_, i) => `v${i}`);
      const rowsOut = db.prepare(`EXPLAIN QUERY PLAN ${q.replace(/\$\d/g, '?')}`).all(...params);
      out[k] = rowsOut.map((r) => String((r as { detail: string }).detail));
    }
    out['indexes'] = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'redemptions'")
      .all()
      .map((r) => String((r as { name: string }).name));
    return out;
  } finally {
    db.close();
  }
}

function sqliteSizeMB(file: string): number {
  const db = new DatabaseSync(file);
  try {
    const r = db
      .prepare('SELECT page_count * page_size AS b FROM pragma_page_count(), pragma_page_size()')
      .get() as {
      b: number;
    };
    return r.b / 2 ** 20;
  } finally {
    db.close();
  }
}

async function pgBulk(client: pg.Client, n: number): Promise<void> {
  const t0 = Date.now() - 30 * DAY - 3_600_000;
  const step = Math.max(1, Math.floor((30 * DAY) / n));
  // In chunks of 100k rows: one statement each, so progress shows and no transaction is huge.
  const chunk = 100_000;
  for (let from = 1; from <= n; from += chunk) {
    const to = Math.min(n, from + chunk - 1);
    await client.query(
      `INSERT INTO redemptions (${COLUMNS})
       SELECT 'rdm_' || lpad(to_hex($1::bigint + g * $2::bigint), 12, '0') || '0000' || substr(md5(random()::text), 1, 16),
         CASE WHEN g % 5 = 0 THEN 'sui' ELSE 'solana' END, 'localnet',
         md5(random()::text) || md5(random()::text) || substr(md5(random()::text), 1, 24),
         substr(md5(random()::text), 1, 22), md5(random()::text) || md5(random()::text),
         'req_' || substr(md5(random()::text), 1, 24), 'payer' || lpad(floor(random() * 5000)::int::text, 39, '0'),
         'delivered', 1, $1::bigint + g * $2::bigint + 30000, 200, $3, decode(repeat(md5(random()::text), 12), 'hex'), $4,
         $1::bigint + g * $2::bigint, $1::bigint + g * $2::bigint + 150,
         'prj_' || lpad((floor(random() * 300))::int::text, 6, '0'), 'ep_' || lpad((floor(random() * 10000))::int::text, 6, '0'),
         10000, 100, 0, NULL, 0, 0
       FROM generate_series($5::bigint, $6::bigint) AS g`,
      [t0, step, HEADERS, META, from, to],
    );
    say(`  ${to} rows`);
  }
  await client.query('VACUUM ANALYZE redemptions');
  await client.query('CHECKPOINT');
}

async function pgPlans(client: pg.Client): Promise<Record<string, string[]>> {
  const sample = await client.query<{
    chain: string;
    network: string;
    tx_id: string;
    nonce: string;
    id: string;
  }>('SELECT chain, network, tx_id, nonce, id FROM redemptions ORDER BY created_at_ms LIMIT 1 OFFSET 1000');
  const s = sample.rows[0] ?? { chain: 'solana', network: 'localnet', tx_id: 'x', nonce: 'y', id: 'z' };
  const explain = async (q: string, params: unknown[], analyze: boolean) =>
    (
      await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (${analyze ? 'ANALYZE, BUFFERS, TIMING OFF, ' : ''}COSTS OFF) ${q}`,
        params,
      )
    ).rows.map((r) => r['QUERY PLAN']);
  const out: Record<string, string[]> = {
    lookup: await explain(PLANNED.lookup, [s.chain, s.network, s.tx_id], true),
    claimConflictRead: await explain(PLANNED.claimConflictRead, [s.chain, s.network, s.tx_id, s.nonce], true),
    complete: await explain(PLANNED.complete, ['rdm_missing', 1], false),
    claimInsert: await explain(
      `INSERT INTO redemptions (${COLUMNS}) VALUES ($1, 'solana', 'localnet', $2, $3, 'h', 'r', 'p', 'in_progress', 1, 0, NULL, NULL, NULL, '{}', 0, NULL, NULL, NULL, 1, 0, 0, NULL, 0, 0) ON CONFLICT DO NOTHING RETURNING *`,
      ['rdm_x', 'tx', 'nonce'],
      false,
    ),
  };
  out['indexes'] = (
    await client.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'redemptions' ORDER BY indexname",
    )
  ).rows.map((r) => r.indexname);
  return out;
}

async function main(): Promise<void> {
  if (!url) throw new Error('BENCH_DATABASE_URL is required');
  const store = await openStore(url);
  const file = isPg ? '' : url.slice('sqlite:'.length);
  const client = isPg ? new pg.Client({ connectionString: url }) : null;
  await client?.connect();
  try {
    if (client) {
      // A new cluster creates (zero-fills) every WAL segment it first writes; after the bulk
      // insert it recycles old ones. Write and drop ~250 MB first, so both table sizes are
      // measured with recycled segments and the comparison is the table's, not the cluster's age.
      say('warming the WAL (a scratch table written and dropped)');
      await client.query(
        'CREATE TABLE bench_wal_warmup AS SELECT g, md5(g::text) AS m FROM generate_series(1, 3000000) AS g',
      );
      await client.query('DROP TABLE bench_wal_warmup');
      await client.query('CHECKPOINT');
    }
    say(`empty table: ${warmup} warm-up + ${ops} paid requests' store calls`);
    await paidCalls(store, warmup, 0);
    const empty = await paidCalls(store, ops, warmup);
    say(`bulk-inserting ${rows} rows`);
    const t = performance.now();
    if (client) await pgBulk(client, rows);
    else sqliteBulk(file, rows);
    const insertS = (performance.now() - t) / 1000;
    say(`  ${insertS.toFixed(1)} s; plans`);
    const plans = client ? await pgPlans(client) : sqlitePlans(file);
    say(`full table: ${warmup} warm-up + ${ops} paid requests' store calls`);
    await paidCalls(store, warmup, 10 * ops);
    const full = await paidCalls(store, ops, 20 * ops);
    const count = client
      ? Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM redemptions')).rows[0]!.n)
      : rows + 2 * (warmup + ops);
    const sizeMB = client
      ? Number(
          (await client.query<{ b: string }>("SELECT pg_total_relation_size('redemptions') AS b")).rows[0]!.b,
        ) /
        2 ** 20
      : sqliteSizeMB(file);
    announce({
      backend: isPg ? 'PostgreSQL' : 'SQLite',
      rows,
      count,
      ops,
      insertS,
      sizeMB,
      empty,
      full,
      plans,
    });
  } finally {
    await client?.end();
    await store.close();
  }
}

// After announcing, stay until the bench stops us by pid (it treats an early exit as a crash).
exitOnSignal();
main().then(
  () => setInterval(() => undefined, 60_000),
  (e: unknown) => {
    say(`scaling-redemptions failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
