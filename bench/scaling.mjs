// `npm run bench:scaling`: the Node check first, then the scaling bench itself (scaling.ts).
import { requireNode } from '../packages/gateway/bin/node-preflight.mjs';

requireNode();
await import('./scaling.ts');
