/**
 * The store's part of a paid request (issue 14; `npm run bench:store`). The bench's paid
 * scenario says the gateway spends 2.3–2.7× the minimal paid server's CPU per paid request;
 * this measures one piece of that gap alone, in this process, pinned to one CPU:
 *
 * - **the gateway's store**: the real SQLite store (openStore: Kysely, the group commit, the
 *   WAL sync on libuv's pool, the background checkpoints) doing what one paid request asks
 *   of it: the lookup before the chain is asked (`byTx`), the claim, and the completion with a
 *   189-byte answer. `--concurrency` requests are in flight at once, as wrk's connections
 *   are, so their writes share transactions and syncs the way they do in the gateway.
 * - **the minimal record**: the minimal paid server's table (two unique keys, eight columns)
 *   and its group commit (bench/servers/minimal-record.ts: one transaction per sync, one
 *   fdatasync of the WAL on the pool), doing the same three statements.
 *
 * Rounds alternate. Each reports CPU µs per paid request (this process, every thread: the
 * pool's fdatasync included) and requests per second (the store alone, no network).
 * What separates the two is the gateway's redemption record (the lease, the retry budget,
 * the read model's columns and indexes) and the layers above SQLite.
 *
 * Options: --rounds N (default 3), --requests N per round (default 6000), --concurrency N (32).
 * Started by store.mjs (pinned to CPU 0, with the gateway's launch flags).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { tuneV8 } from '../packages/gateway/src/startup/v8-tuning.ts';
import { openStore } from '../packages/gateway/src/store/open-store.ts';
import type { ClaimInput } from '../packages/gateway/src/store/store.ts';
import { median } from './lib/stats.ts';
import { openMinimalRecord } from './servers/minimal-record.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string' },
    requests: { type: 'string' },
    concurrency: { type: 'string' },
  },
});
const ROUNDS = Math.max(1, Number(values.rounds ?? 3));
const REQUESTS = Math.max(100, Number(values.requests ?? 6000));
const CONCURRENCY = Math.max(1, Number(values.concurrency ?? 32));
const say = (line: string) => process.stderr.write(`${line}\n`);

tuneV8();
const dir = mkdtempSync(join(tmpdir(), 'tollgate-store-bench-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

/** A paid request's values, shaped like the bench's real ones (a ~1 KB requirement token). */
function paidRequest(i: number) {
  return {
    txId: randomBytes(64).toString('base64').replace(/[+/=]/g, 'x').slice(0, 88),
    nonce: randomBytes(16).toString('base64url'),
    requestHash: randomBytes(32).toString('hex'),
    requirementId: `r2.d1414a6f.${randomBytes(600).toString('base64url')}.${randomBytes(100).toString('base64url')}.${randomBytes(32).toString('base64url')}`,
    payer: `Payer${i % 8}`.padEnd(44, 'x'),
  };
}
const RESPONSE = {
  status: 200,
  headers: { 'content-type': 'application/json', 'content-length': '189', date: new Date().toUTCString() },
  body: new Uint8Array(189).fill(120),
};
const META = {
  subject: 'ep:ep_01a222a8232d0000e3f5496d1702cd5d',
  price: '10000',
  fee: '100',
  splits: [
    { recipientType: 'provider', payTo: 'AbGTPcEgjnaDZnLkBX1u5wYUNRqxttc3uQF1uPvB6JvB', amount: '10000' },
    { recipientType: 'platform', payTo: 'DG1GUDuhLnpnybsrKGxiyo6t9QbFs6GGPAX8JsbcQLun', amount: '100' },
  ],
};

/** One paid request's store work, three statements; each await is a turn of the event loop. */
type PaidWork = (i: number) => Promise<void>;

/** What a round runs: one store, opened on a fresh file; `note` adds to its line. */
interface Subject {
  work: PaidWork;
  close: () => Promise<void>;
  note?: () => string;
}

async function gatewayStore(): Promise<Subject> {
  const store = await openStore(`sqlite:${join(dir, `gateway-${Date.now()}.db`)}`);
  const r = store.redemptions;
  return {
    async work(i) {
      const p = paidRequest(i);
      if ((await r.byTx('solana', 'localnet', p.txId)) !== null) throw new Error('a new payment was known');
      const now = Date.now();
      const input: ClaimInput = {
        chain: 'solana',
        network: 'localnet',
        ...p,
        meta: META,
        projectId: 'prj_01a222a8230f0000027678b4145d7bfc',
        endpointId: 'ep_01a222a8232d0000e3f5496d1702cd5d',
        amount: 10100n,
        fee: 100n,
        nowMs: now,
        leaseMs: 60_000,
      };
      const claimed = await r.claim(input);
      if (claimed.kind !== 'claimed') throw new Error(`claim answered ${claimed.kind}`);
      await new Promise(setImmediate); // the upstream
      const { id, attempt } = claimed.redemption;
      if (!(await r.complete(id, attempt, RESPONSE, Date.now()))) throw new Error('complete lost the lease');
    },
    close: () => store.close(),
  };
}

/** The minimal paid server's record and group commit (bench/servers/minimal-record.ts), in process. */
function minimalRecord(): Subject {
  const r = openMinimalRecord(join(dir, `minimal-${Date.now()}.db`));
  return {
    async work(i) {
      const p = paidRequest(i);
      if (r.byTx.get(p.txId) !== undefined) throw new Error('a new payment was known');
      const claimed = await r.durably(() =>
        Number(r.insertClaim.run(p.txId, p.nonce, p.requestHash, p.payer, Date.now()).changes),
      );
      if (claimed !== 1) throw new Error('claim inserted nothing');
      await new Promise(setImmediate); // the upstream
      const done = await r.durably(() =>
        Number(r.complete.run(RESPONSE.status, RESPONSE.body, p.txId).changes),
      );
      if (done !== 1) throw new Error('complete changed nothing');
    },
    close: async () => r.db.close(),
    note: () =>
      `, ${((r.counts.commits * 1000) / REQUESTS).toFixed(0)} commits (each one fdatasync) per 1000`,
  };
}

/** `REQUESTS` paid requests, `CONCURRENCY` at a time: CPU per request (every thread) and requests per second. */
async function round(work: PaidWork): Promise<{ cpuUs: number; rps: number }> {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) await work(next++);
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: (cpu.user + cpu.system) / REQUESTS, rps: (REQUESTS * 1000) / (performance.now() - t0) };
}

const subjects: [string, () => Promise<Subject>][] = [
  ['gateway store', gatewayStore],
  ['minimal record', async () => minimalRecord()],
];
const results = new Map<string, number[]>(subjects.map(([name]) => [name, []]));
say(
  `the store's part of a paid request: ${ROUNDS} rounds of ${REQUESTS} requests, ${CONCURRENCY} in flight, SQLite in ${dir}`,
);
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, open] of subjects) {
    const s = await open();
    await round(s.work); // warm-up: the same code, a fresh file below
    await s.close();
    const t = await open();
    const res = await round(t.work);
    await t.close();
    results.get(name)!.push(res.cpuUs);
    say(
      `  round ${r + 1} ${name.padEnd(15)} ${res.cpuUs.toFixed(1).padStart(7)} µs CPU per paid request, ${res.rps.toFixed(0)} requests/s${t.note?.() ?? ''}`,
    );
  }
}
const [g, m] = subjects.map(([name]) => median(results.get(name)!)) as [number, number];
say(
  `median: gateway store ${g.toFixed(1)} µs, minimal record ${m.toFixed(1)} µs per paid request (${(g / m).toFixed(2)}×, +${(g - m).toFixed(1)} µs)`,
);
