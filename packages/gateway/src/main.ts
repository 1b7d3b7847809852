/**
 * Entry point: load config, build the gateway, listen, drain on SIGTERM/SIGINT.
 *   main.ts [--config file]                  run the gateway
 *   main.ts [--config file] config check     validate, print the effective settings, exit 0 / 78
 * (`npm start` and `npm run config:check` run it through bin/tollgate-gateway.mjs, which
 * first checks the Node version.) A startup failure the operator can fix is one line per
 * problem and an exit code (78 configuration, 69 a service down); only bugs print a stack.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, loadConfig } from './config.ts';
import type { SandboxMode } from './sandbox-mode.ts';
import { configCheck } from './startup/config-check.ts';
import { dataDirProblem, EXIT, explainStartupError, listenProblem } from './startup/problems.ts';
import { listenUrl, startupSummary } from './startup/summary.ts';
import { tuneV8 } from './startup/v8-tuning.ts';

/** In the data directory: the URL sandbox mode serves on, for local clients (`npm run demo`). */
const GATEWAY_URL_FILE = 'gateway-url';

const USAGE = 'usage: tollgate-gateway [--config <file>] [config check [--json]]';

const io = {
  out: (text: string) => void process.stdout.write(text),
  err: (text: string) => void process.stderr.write(text),
};

/** Arguments that are not options (`--config <file>` and flags skipped). */
function commandWords(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--config') i++;
    else if (!a.startsWith('-')) words.push(a);
  }
  return words;
}

async function serve(): Promise<void> {
  // Before the gateway allocates anything: how V8 reclaims streamed Buffers and grows the heap (v8-tuning.ts).
  tuneV8();
  let config: Readonly<Config> = loadConfig();
  let sandbox: SandboxMode | null = null;
  if (config.sandbox) {
    const { startSandboxMode } = await import('./sandbox-mode.ts');
    const dataDir = config.dataDir;
    sandbox = await startSandboxMode(config).catch((e: unknown) => {
      throw dataDirProblem(dataDir, e) ?? e;
    });
    config = sandbox.config;
  }

  // Loaded only now: a configuration problem is reported without loading the whole gateway.
  const { createGateway } = await import('./app.ts');
  const gateway = await createGateway(config, sandbox ? { sandbox: sandbox.chains } : {});
  await sandbox?.seed(gateway.deps);
  // Only now: a health probe of the demo origin before seeding would find last run's port.
  gateway.start();
  try {
    await gateway.app.listen({ port: config.port, host: config.host });
  } catch (e) {
    throw listenProblem(config.host, config.port, e);
  }
  const address = gateway.app.server.address();
  const summary = await startupSummary(gateway.deps, listenUrl(address));
  gateway.app.log.info(summary, `tollgate started: ${summary.mode} mode on ${summary.listen}`);

  const urlFile = join(config.dataDir, GATEWAY_URL_FILE);
  const localUrl = listenUrl(address, { local: true });
  if (sandbox) {
    try {
      writeFileSync(urlFile, `${localUrl}\n`);
    } catch (e) {
      gateway.app.log.warn({ err: e, file: urlFile }, 'cannot record the gateway URL for local clients');
    }
    console.log(sandbox.banner(config.publicBaseUrl));
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    gateway.app.log.info({ signal }, 'draining');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    // Another sandbox may have started since, on another port: leave its URL alone.
    if (sandbox && readIfExists(urlFile) === localUrl) rmSync(urlFile, { force: true });
    await gateway.close();
    await sandbox?.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

function readIfExists(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

async function main(argv: string[]): Promise<number | null> {
  const words = commandWords(argv);
  if (words[0] === 'config' && words[1] === 'check' && words.length === 2)
    return configCheck(process.env, argv, io);
  if (words.length) {
    io.err(`tollgate-gateway: unknown command "${words.join(' ')}"\n${USAGE}\n`);
    return EXIT.usage;
  }
  await serve();
  return null;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== null) process.stdout.write('', () => process.exit(code));
  },
  (e: unknown) => {
    const known = explainStartupError(e);
    if (known) {
      console.error(known.text);
      process.exit(known.exitCode);
    }
    console.error('tollgate: failed to start:', e);
    process.exit(EXIT.failed);
  },
);
