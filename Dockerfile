# syntax=docker/dockerfile:1
# The Tollgate gateway (docs/deploy.md). Node runs the TypeScript sources natively: no build step.
#   docker build -t tollgate .
#   docker run -e TOLLGATE_NETWORK=mainnet -e TOLLGATE_SECRET=… -e DATABASE_URL=postgres://… … -p 8402:8402 tollgate
# The Node major here is the one in .nvmrc (a test checks it).

FROM node:24-bookworm-slim AS deps
WORKDIR /app
# Manifests first: the dependency layer is rebuilt only when they change.
COPY package.json package-lock.json .npmrc ./
COPY packages/protocol/package.json packages/protocol/
COPY packages/client/package.json packages/client/
COPY packages/sandbox/package.json packages/sandbox/
COPY packages/gateway/package.json packages/gateway/
# `npm ci` refuses this lock (it lacks litesvm's non-linux optional packages, DESIGN §6);
# `npm install` follows it. Production dependencies only.
RUN npm install --omit=dev --no-audit --no-fund --loglevel=error && npm cache clean --force

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8402 \
    TOLLGATE_DATA_DIR=/var/lib/tollgate
WORKDIR /app
# Code and dependencies belong to root and are read-only for the user that runs them.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY packages/protocol ./packages/protocol
COPY packages/client ./packages/client
COPY packages/sandbox ./packages/sandbox
COPY packages/gateway ./packages/gateway
# Only sandbox mode or a SQLite DATABASE_URL writes here; production uses PostgreSQL.
RUN install -d -o node -g node -m 0700 /var/lib/tollgate
USER node
EXPOSE 8402
# Liveness only: /readyz also asks the database and the chain nodes, which is the balancer's business.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8402) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM: stop accepting, finish in-flight requests (up to 15 s), exit.
STOPSIGNAL SIGTERM
# The flags are NODE_LAUNCH_FLAGS (packages/gateway/src/startup/v8-tuning.ts), as in `npm start`.
CMD ["node", "--max-semi-space-size=64", "packages/gateway/bin/tollgate-gateway.mjs"]
