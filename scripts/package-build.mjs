#!/usr/bin/env node
// Builds and packs the packages meant for others (@tollgate/protocol, @tollgate/client).
//
// In the workspace they run from their TypeScript sources (Node strips the types), and
// their package.json points at src/. Node refuses to strip types under node_modules, so
// what gets packed is JavaScript + .d.ts in dist/, with a package.json pointing there:
//
//   node ../../scripts/package-build.mjs build     dist/ from src/ (tsc -p tsconfig.build.json);
//                                                  @tollgate/* dependencies are built first
//   node ../../scripts/package-build.mjs prepack   build, then swap in the packed package.json
//                                                  (the workspace one is kept aside)
//   node ../../scripts/package-build.mjs postpack  put the workspace package.json back
//
// Run from the package's directory (npm does, for its scripts). `npm pack` / `npm publish`
// run prepack and postpack; if a pack dies between the two, the next prepack or postpack
// (or `… postpack` by hand) restores the workspace package.json.
//
// The packed package.json differs from the workspace one only in:
//   exports  "./src/x.ts" → { types: "./dist/x.d.ts", import: "./dist/x.js", default: "./dist/x.js" }
//   main, types  the built entry point
//   bin      "./src/x.ts" → "./dist/x.js"; a JavaScript wrapper that loads "../src/x.ts" (the
//            workspace's Node preflight) → "./dist/x.js" itself, since the built CLI needs no
//            type stripping
//   dependencies  "@tollgate/…": "*" → that package's exact version (they are released together)
//   scripts, devDependencies  dropped
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const SCOPE = '@tollgate/';
const BACKUP = '.package.json.workspace';

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function die(message) {
  process.stderr.write(`package-build: ${message}\n`);
  process.exit(1);
}

/** The directory of a sibling workspace package, `@tollgate/protocol` → ../protocol. */
function siblingDir(dir, name) {
  const sibling = resolve(dir, '..', name.slice(SCOPE.length));
  if (!existsSync(join(sibling, 'package.json')) || readJson(join(sibling, 'package.json')).name !== name) {
    die(`${name} is not at ${sibling}`);
  }
  return sibling;
}

function workspaceDeps(manifest) {
  return Object.keys(manifest.dependencies ?? {}).filter((d) => d.startsWith(SCOPE));
}

/** Relative `.ts` specifiers in declaration files → `.js` (tsc rewrites them only in the JavaScript). */
function fixDeclarations(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) fixDeclarations(path);
    else if (entry.name.endsWith('.d.ts')) {
      const text = readFileSync(path, 'utf8');
      const fixed = text.replace(
        /((?:from\s+|import\s*\(\s*|import\s+)['"])(\.{1,2}\/[^'"]*?)\.ts(['"])/g,
        '$1$2.js$3',
      );
      if (fixed !== text) writeFileSync(path, fixed);
    }
  }
}

const built = new Set();

function build(dir) {
  if (built.has(dir)) return;
  built.add(dir);
  const manifest = readJson(join(dir, 'package.json'));
  for (const dep of workspaceDeps(manifest)) build(siblingDir(dir, dep));
  const tsconfig = join(dir, 'tsconfig.build.json');
  if (!existsSync(tsconfig)) die(`${manifest.name} has no tsconfig.build.json`);
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  const ts = createRequire(join(dir, 'package.json')).resolve('typescript/package.json');
  const tsc = join(dirname(ts), readJson(ts).bin.tsc);
  const run = spawnSync(process.execPath, [tsc, '-p', tsconfig], { cwd: dir, stdio: 'inherit' });
  if (run.status !== 0) die(`tsc failed for ${manifest.name}`);
  fixDeclarations(join(dir, 'dist'));
  for (const target of Object.values(packedBin(dir, manifest) ?? {})) {
    const file = join(dir, target);
    if (!existsSync(file)) die(`${manifest.name}: the bin ${target} was not built`);
    chmodSync(file, statSync(file).mode | 0o111);
  }
  process.stderr.write(
    `package-build: built ${manifest.name} → ${relative(process.cwd(), join(dir, 'dist')) || 'dist'}\n`,
  );
}

/** `./src/a/b.ts` → `./dist/a/b<ext>`, or null when the target is not a source file. */
function toDist(target, ext) {
  const m = /^\.\/src\/(.+)\.ts$/.exec(target);
  return m ? `./dist/${m[1]}${ext}` : null;
}

function packedExports(exports) {
  if (typeof exports === 'string') {
    const js = toDist(exports, '.js');
    return js ? { types: toDist(exports, '.d.ts'), import: js, default: js } : exports;
  }
  if (exports && typeof exports === 'object') {
    return Object.fromEntries(Object.entries(exports).map(([k, v]) => [k, packedExports(v)]));
  }
  return exports;
}

function packedBinTarget(dir, target) {
  const direct = toDist(target, '.js');
  if (direct) return direct;
  const file = join(dir, target);
  if (!existsSync(file)) die(`the bin ${target} does not exist`);
  // A JavaScript wrapper that loads a TypeScript source: the built source replaces it.
  const loads = [...readFileSync(file, 'utf8').matchAll(/import\s*\(\s*['"](\.{1,2}\/[^'"]+\.ts)['"]\s*\)/g)];
  if (loads.length === 0) return target;
  if (loads.length > 1) die(`the bin ${target} loads several TypeScript files; cannot pack it`);
  const source = relative(dir, resolve(dirname(file), loads[0][1]));
  const js = toDist(`./${source}`, '.js');
  if (!js) die(`the bin ${target} loads ${source}, which is not under src/`);
  return js;
}

function packedBin(dir, manifest) {
  const { bin } = manifest;
  if (!bin) return undefined;
  if (typeof bin === 'string') return { [manifest.name.split('/').pop()]: packedBinTarget(dir, bin) };
  return Object.fromEntries(Object.entries(bin).map(([name, t]) => [name, packedBinTarget(dir, t)]));
}

function packedManifest(dir, manifest) {
  const packed = { ...manifest };
  packed.exports = packedExports(manifest.exports);
  const root = packed.exports?.['.'] ?? packed.exports;
  if (root && typeof root === 'object' && root.import) {
    packed.main = root.import;
    packed.types = root.types;
  }
  const bin = packedBin(dir, manifest);
  if (bin) packed.bin = bin;
  if (manifest.dependencies) {
    packed.dependencies = { ...manifest.dependencies };
    for (const dep of workspaceDeps(manifest)) {
      packed.dependencies[dep] = readJson(join(siblingDir(dir, dep), 'package.json')).version;
    }
  }
  delete packed.scripts;
  delete packed.devDependencies;
  return packed;
}

/** Puts the workspace package.json back, if it was set aside (and package.json is still the packed one). */
function restore(dir) {
  const backup = join(dir, BACKUP);
  if (!existsSync(backup)) return;
  if (readJson(join(dir, 'package.json')).scripts?.prepack) {
    die(
      `${backup} is left from an earlier pack, but package.json is a workspace one (it has scripts.prepack): ` +
        'check which is right and delete the other',
    );
  }
  renameSync(backup, join(dir, 'package.json'));
}

const [command] = process.argv.slice(2);
const dir = process.cwd();
switch (command) {
  case 'build':
    build(dir);
    break;
  case 'prepack': {
    restore(dir);
    build(dir);
    const path = join(dir, 'package.json');
    const text = readFileSync(path, 'utf8');
    const packed = packedManifest(dir, JSON.parse(text));
    writeFileSync(join(dir, BACKUP), text, { flag: 'wx' });
    writeFileSync(path, `${JSON.stringify(packed, null, 2)}\n`);
    break;
  }
  case 'postpack':
    restore(dir);
    break;
  default:
    die('usage: package-build.mjs build|prepack|postpack (from the package directory)');
}
