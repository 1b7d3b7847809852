#!/usr/bin/env node
// `npm run payout -- …`, `npm run reconcile -- …`: the Node check first, then the operator commands (src/ops/cli.ts).
import { requireNode } from './node-preflight.mjs';

requireNode();
await import('../src/ops/cli.ts');
