#!/usr/bin/env node
/**
 * The `tollgate` command line: provider sign-in and setup, payer wallets (see
 * `tollgate --help`). Whatever goes wrong is one line, `tollgate: <message>`, and a
 * non-zero exit: never a stack trace.
 */

function fail(e: unknown): void {
  const message = e instanceof Error ? e.message : String(e);
  const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
  process.stderr.write(`tollgate: ${message}${cause}\n`);
  process.exitCode = 1;
}

// A stray failure after the command's own handling (a library's background promise, …).
process.on('uncaughtException', (e) => {
  fail(e);
  process.exit(1);
});
process.on('unhandledRejection', (e) => {
  fail(e);
  process.exit(1);
});
// `tollgate … | head`: the reader went away; nothing more to say.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  fail(e);
});

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

try {
  // Loaded here so that even a broken install (a missing dependency) ends in one line.
  const { runCli } = await import('./cli/run.ts');
  process.exitCode = await runCli(process.argv.slice(2), {
    env: process.env,
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    readStdin,
  });
} catch (e) {
  fail(e);
}
