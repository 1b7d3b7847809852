#!/usr/bin/env node
// `npm start`, `npm run config:check`: the Node check first, then the TypeScript entry.
//   tollgate-gateway [--config file]                run the gateway
//   tollgate-gateway [--config file] config check   validate and print the effective configuration
import { requireNode } from './node-preflight.mjs';

requireNode();
await import('../src/main.ts');
