/**
 * Drives wrk (pinned to the load-generator CPU) and reads its results from one JSON
 * line printed by a Lua `done()` hook. Given a file of X-PAYMENT values, the same
 * script sends each line exactly once, starting at a given line, and reports how many
 * it sent.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { trackTransient } from './children.ts';

export interface WrkResult {
  requests: number;
  durationS: number;
  rps: number;
  bytes: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  latencyMs: { p50: number; p90: number; p99: number; p999: number; mean: number; max: number };
  /** Requests started inside the active window (= proof lines consumed). */
  sent: number;
  /** The proofs ran out before the window closed (the window ended there). */
  exhausted: boolean;
  /** Length of the active window, seconds. */
  activeS: number;
}

/*
 * Every run has an active window shorter than wrk's -d: when it closes (or the proofs
 * run out), delay() parks every connection, so the requests in flight finish before
 * wrk exits instead of being cut off. (The gateway counts a client that goes away
 * mid-forward as an upstream failure; 32 cut-off requests at the end of every run
 * would mark the endpoint unhealthy.) Throughput is requests started in the window
 * divided by the window, timed with CLOCK_MONOTONIC through LuaJIT's ffi.
 */
const COMMON = `
local ffi = require("ffi")
pcall(ffi.cdef, [[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clk_id, bench_timespec *tp);
]])
local ts = ffi.new("bench_timespec")
local function now_us()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1e6 + tonumber(ts.tv_nsec) / 1e3
end

sent = 0
exhausted = 0
active_us = 0
local window_us = 1e12
local t0 = nil
local stopped = false
local reqs = nil
local n = 0
local plain = nil

-- args: window_ms [proofs_file first_line path]
function init(args)
  window_us = tonumber(args[1]) * 1000
  plain = wrk.format()
  if args[2] then
    reqs = {}
    local from, path = tonumber(args[3]), args[4]
    local i = 0
    for line in io.lines(args[2]) do
      i = i + 1
      if i >= from and #line > 0 then
        n = n + 1
        reqs[n] = wrk.format("GET", path, { ["X-PAYMENT"] = line })
      end
    end
  end
end

function delay()
  if stopped then return 3600000 end
  local t = now_us()
  if t0 == nil then t0 = t end
  local out = reqs ~= nil and sent >= n
  if out or t - t0 >= window_us then
    stopped = true
    active_us = t - t0
    if out then exhausted = 1 end
    return 3600000
  end
  return 0
end

-- wrk calls request() once right after init() only to check that the request
-- parses (script_verify_request); that call sends nothing, so it consumes nothing.
local verified = false
function request()
  if not verified then
    verified = true
    return (reqs and reqs[1]) or plain
  end
  sent = sent + 1
  if reqs then return reqs[sent] end
  return plain
end

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function done(summary, latency, requests)
  local s, x, a = 0, 0, 0
  for _, t in ipairs(threads) do
    s = s + (t:get("sent") or 0)
    x = x + (t:get("exhausted") or 0)
    a = math.max(a, t:get("active_us") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"p999":%d,"mean":%.1f,"max":%d},' ..
    '"sent":%d,"exhausted":%d,"activeUs":%d}\\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
    latency.mean, latency.max, s, x, a))
end
`;

/** Writes the Lua script into `dir` and returns its path. */
export function writeWrkScript(dir: string): string {
  const path = join(dir, 'bench.lua');
  writeFileSync(path, COMMON);
  return path;
}

export interface WrkRun {
  url: string;
  seconds: number;
  connections: number;
  cpu: string;
  script: string;
  /** Requests start only during this window; the rest of `seconds` lets in-flight ones finish. */
  windowMs: number;
  /** Send each line of `file` (from line `from`, 1-based) once as X-PAYMENT on `path`. */
  proofs?: { file: string; from: number; path: string };
  timeoutS?: number;
}

export function runWrk(run: WrkRun): Promise<WrkResult> {
  const args = [
    '-c',
    run.cpu,
    'wrk',
    '-t1',
    `-c${run.connections}`,
    `-d${run.seconds}s`,
    `--timeout`,
    `${run.timeoutS ?? 10}s`,
    '--latency',
    '-s',
    run.script,
    run.url,
    '--',
    String(run.windowMs),
    ...(run.proofs ? [run.proofs.file, String(run.proofs.from), run.proofs.path] : []),
  ];
  return new Promise((resolve, reject) => {
    const proc = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    trackTransient(proc);
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    proc.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const guard = setTimeout(() => proc.kill('SIGKILL'), (run.seconds + 30) * 1000);
    proc.once('error', (e) => {
      clearTimeout(guard);
      reject(e);
    });
    proc.once('exit', (code) => {
      clearTimeout(guard);
      const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '));
      if (code !== 0 || !line) {
        reject(new Error(`wrk ${run.url} failed (exit ${code}):\n${err}${out}`));
        return;
      }
      const j = JSON.parse(line.slice('BENCH_JSON '.length));
      const durationS = j.durationUs / 1e6;
      const activeS = j.activeUs / 1e6;
      const ms = (us: number) => us / 1000;
      resolve({
        requests: j.requests,
        durationS,
        activeS,
        rps: activeS > 0 ? j.sent / activeS : j.requests / durationS,
        bytes: j.bytes,
        errors: j.errors,
        latencyMs: {
          p50: ms(j.latencyUs.p50),
          p90: ms(j.latencyUs.p90),
          p99: ms(j.latencyUs.p99),
          p999: ms(j.latencyUs.p999),
          mean: ms(j.latencyUs.mean),
          max: ms(j.latencyUs.max),
        },
        sent: j.sent,
        exhausted: j.exhausted > 0,
      });
    });
  });
}
