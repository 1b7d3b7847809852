import { describe, expect, it } from 'vitest';
import {
  attribute,
  CATEGORIES,
  formatNative,
  functionName,
  type NativeProfile,
  parsePerfScript,
} from './native-profile.ts';
import { perfPairOf } from './options.ts';

const PID = 4242;
/**
 * `perf script -F comm,tid,ip,sym` text: per sample its thread's name and id, then its frames
 * leaf first (`ip sym`). The main thread is `node`; others are named by the third element.
 */
const script = (...stacks: ([number, string[]] | [number, string[], string])[]) =>
  `${stacks
    .map(
      ([tid, s, name]) =>
        `${(name ?? (tid === PID ? 'node' : 'V8 DefaultWorke')).padStart(16)} ${tid}\n${s.map((f) => `\t ${f}`).join('\n')}`,
    )
    .join('\n\n')}\n`;

const OWN = ['/w/packages/', '/w/bench/servers/'];
const HANDLER = "7f0000001000 JS:*'handle file:///w/packages/gateway/src/http/fast-unpaid.ts:155:18";
const MAIN = ['40d6f5 node::SpinEventLoopInternal', '4e2dd5 node::Start'];

describe('native profile', () => {
  it('names a project function by its file and line, and leaves other frames as they are', () => {
    expect(functionName("JS:*'handle file:///w/packages/gateway/src/http/fast-unpaid.ts:155:18")).toBe(
      'handle (gateway/src/http/fast-unpaid.ts:155)',
    );
    expect(functionName("JS:*' file:///w/bench/servers/minimal-402.ts:165:29")).toBe(
      '(anonymous) (bench/servers/minimal-402.ts:165)',
    );
    expect(functionName("JS:*'end node:_http_outgoing:1173:45")).toBe("JS:*'end node:_http_outgoing:1173:45");
  });

  it('puts each sample in the first category its stack matches, scaled to the CPU per request', () => {
    const stacks = parsePerfScript(
      script(
        // A socket write under the handler: the write's category, not the handler's.
        [
          PID,
          [
            'ffffffff8225a6c1 do_syscall_64',
            '9a0 node::LibuvStreamWrap::DoTryWrite(uv_buf_t**)',
            HANDLER,
            ...MAIN,
          ],
        ],
        // The handler's own work, twice.
        [PID, ['1654cc4 Builtins_StringAdd_CheckNone', HANDLER, ...MAIN]],
        [PID, ['1654cc4 sha256_block_data_order', HANDLER, ...MAIN]],
        // A compile job on a V8 worker thread, its stack cut short of start_thread.
        [PID + 3, ['55 v8::internal::OptimizedCompilationJob::ExecuteJob']],
        // libuv's pool in the kernel's fdatasync, twice: leaves are named by the user-space frame.
        [PID + 5, ['ffffffff81000001 ext4_sync_file', '66 fdatasync', '67 uv__fs_work'], 'libuv-worker'],
        [PID + 5, ['ffffffff81000001 ext4_sync_file', '66 fdatasync', '67 uv__fs_work'], 'libuv-worker'],
        // A scavenge on the main thread.
        [
          PID,
          [
            '77 v8::internal::ScavengerCollector::CollectGarbage',
            '88 v8::internal::Heap::CollectGarbage',
            ...MAIN,
          ],
        ],
        // The kernel waiting in epoll, and Node's own JavaScript.
        [PID, ['ffffffff81750f98 do_epoll_wait', '108cae epoll_pwait', ...MAIN]],
        [PID, ["7f0000002000 JS:*'resOnFinish node:_http_server:1096:21", ...MAIN]],
        [PID, ['99 llhttp__internal__run', ...MAIN]],
      ),
      PID,
    );
    expect(stacks).toHaveLength(10);
    const p = attribute(stacks, 100, OWN); // 10 µs per sample
    const by = (fragment: string) => p.categories[CATEGORIES.find(([n]) => n.includes(fragment))![0]];
    expect(by('socket writes')).toBe(10);
    expect(by("server's own code")).toBe(20);
    expect(by('compiling')).toBe(10);
    expect(by('GC and other')).toBe(20);
    expect(by('garbage collection, main thread')).toBe(10);
    expect(by('kernel: socket reads')).toBe(10);
    expect(by("Node's HTTP")).toBe(10);
    expect(by('other native')).toBe(10);
    expect(Object.values(p.categories).reduce((a, b) => a + b, 0)).toBe(100);
    expect(p.threads).toEqual([
      { name: 'libuv-worker', usPerReq: 20, leaves: [{ name: 'fdatasync', usPerReq: 20 }] },
      {
        name: 'V8 DefaultWorke',
        usPerReq: 10,
        leaves: [{ name: 'v8::internal::OptimizedCompilationJob::ExecuteJob', usPerReq: 10 }],
      },
    ]);
    // Inclusive: the handler is on three stacks (the write's included).
    expect(p.functions).toEqual([{ name: 'handle (gateway/src/http/fast-unpaid.ts:155)', usPerReq: 30 }]);
    expect(p.kernelSeen).toBe(true);
  });

  it('counts only files of this checkout as its code, not a library or another checkout', () => {
    const stacks = parsePerfScript(
      script(
        [PID, ["1 JS:*'x file:///w/node_modules/undici/lib/x.js:1:1", ...MAIN]],
        [PID, ["2 JS:*'y file:///elsewhere/packages/gateway/src/y.ts:1:1", ...MAIN]],
      ),
      PID,
    );
    const p = attribute(stacks, 20, OWN);
    expect(p.categories["the server's own code, with what it calls"]).toBe(0);
    expect(p.categories['undici (the upstream client)']).toBe(10);
    expect(p.functions).toEqual([]);
    expect(p.kernelSeen).toBe(false);
  });
});

describe('native profile side by side', () => {
  const profile = (server: string, cpuUsPerReq: number): NativeProfile => ({
    server,
    cpuUsPerReq,
    rps: 1000,
    samples: 1000,
    categories: Object.fromEntries(CATEGORIES.map(([name]) => [name, cpuUsPerReq / CATEGORIES.length])),
    functions: [],
    kernelSeen: true,
    threads: [],
  });

  it('heads the first column Tollgate when the gateway is profiled', () => {
    const text = formatNative(
      'paid',
      profile('Tollgate paid, SQLite', 900),
      profile('minimal paid server, SQLite', 600),
    );
    expect(text.split('\n')[1]).toMatch(
      /Tollgate\s+baseline\s+difference\s+\(baseline: minimal paid server, SQLite\)$/,
    );
    expect(text).toContain('+300.0');
  });

  it('names the subject when another configuration is profiled (--perf-pair)', () => {
    const text = formatNative(
      'paid',
      profile("minimal paid, Tollgate's record", 750),
      profile('minimal paid server, SQLite', 600),
      12,
      false,
    );
    expect(text.split('\n')[1]).toMatch(
      /subject\s+baseline\s+difference\s+\(subject: minimal paid, Tollgate's record; baseline: minimal paid server, SQLite\)$/,
    );
    expect(text.split('\n')[1]).not.toContain('Tollgate ');
  });
});

describe('--perf-pair', () => {
  it('reads the subject and the baseline, subject first', () => {
    expect(perfPairOf('paidrecord:paidfloor')).toEqual({ subject: 'paidrecord', baseline: 'paidfloor' });
    expect(perfPairOf(undefined)).toBeNull();
  });

  it('refuses anything but two different configuration keys', () => {
    for (const bad of ['paidrecord', 'a:a', 'a:b:c', ':b', 'gate way:b'])
      expect(() => perfPairOf(bad)).toThrow(/--perf-pair/);
  });
});
