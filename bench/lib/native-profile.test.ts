import { describe, expect, it } from 'vitest';
import { attribute, CATEGORIES, functionName, parsePerfScript } from './native-profile.ts';

/** `perf script -F ip,sym` text for stacks given leaf first, a frame as `ip sym`. */
const script = (...stacks: string[][]) =>
  `${stacks.map((s) => s.map((f) => `\t ${f}`).join('\n')).join('\n\n')}\n`;

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
          'ffffffff8225a6c1 do_syscall_64',
          '9a0 node::LibuvStreamWrap::DoTryWrite(uv_buf_t**)',
          HANDLER,
          ...MAIN,
        ],
        // The handler's own work, twice.
        ['1654cc4 Builtins_StringAdd_CheckNone', HANDLER, ...MAIN],
        ['1654cc4 sha256_block_data_order', HANDLER, ...MAIN],
        // A compile job on a V8 worker thread.
        ['55 v8::internal::OptimizedCompilationJob::ExecuteJob', '66 start_thread'],
        // A scavenge on the main thread.
        [
          '77 v8::internal::ScavengerCollector::CollectGarbage',
          '88 v8::internal::Heap::CollectGarbage',
          ...MAIN,
        ],
        // The kernel waiting in epoll, and Node's own JavaScript.
        ['ffffffff81750f98 do_epoll_wait', '108cae epoll_pwait', ...MAIN],
        ["7f0000002000 JS:*'resOnFinish node:_http_server:1096:21", ...MAIN],
        ['99 llhttp__internal__run', ...MAIN],
      ),
    );
    expect(stacks).toHaveLength(8);
    const p = attribute(stacks, 80); // 10 µs per sample
    const by = (fragment: string) => p.categories[CATEGORIES.find(([n]) => n.includes(fragment))![0]];
    expect(by('socket writes')).toBe(10);
    expect(by("server's own code")).toBe(20);
    expect(by('compiling')).toBe(10);
    expect(by('garbage collection, main thread')).toBe(10);
    expect(by('kernel: socket reads')).toBe(10);
    expect(by("Node's HTTP")).toBe(10);
    expect(by('other native')).toBe(10);
    expect(Object.values(p.categories).reduce((a, b) => a + b, 0)).toBe(80);
    // Inclusive: the handler is on three stacks (the write's included).
    expect(p.functions).toEqual([{ name: 'handle (gateway/src/http/fast-unpaid.ts:155)', usPerReq: 30 }]);
  });
});
