/** Entry point: load config, build the gateway, listen, drain on SIGTERM/SIGINT. */
import { createGateway } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import type { SandboxMode } from './sandbox-mode.ts';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`tollgate: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }

  let sandbox: SandboxMode | null = null;
  if (config.sandbox) {
    const { startSandboxMode } = await import('./sandbox-mode.ts');
    sandbox = await startSandboxMode(config);
    config = sandbox.config;
  }

  const gateway = await createGateway(config, sandbox ? { sandbox: sandbox.chains } : {});
  await sandbox?.seed(gateway.deps);
  // Only now: a health probe of the demo origin before seeding would find last run's port.
  gateway.start();
  await gateway.app.listen({ port: config.port, host: config.host });
  if (sandbox) console.log(sandbox.banner(config.publicBaseUrl));

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    gateway.app.log.info({ signal }, 'draining');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await gateway.close();
    await sandbox?.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((e) => {
  console.error('tollgate: failed to start:', e);
  process.exit(1);
});
