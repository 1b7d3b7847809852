#!/usr/bin/env node
// The `tollgate` command (and `npm run demo`): the Node check first, then the TypeScript CLI.
import { requireNode } from './node-preflight.mjs';

requireNode();
await import('../src/cli.ts');
