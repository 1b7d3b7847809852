// `npm run bench`: the Node check first, then the bench itself (run.ts).
import { requireNode } from '../packages/gateway/bin/node-preflight.mjs';

requireNode();
await import('./run.ts');
