# Multi-stage image: dependencies are installed and the server compiled in build stages; the
# runtime stage holds only production modules, the compiled server and the files it reads at run
# time, and runs as the unprivileged `node` user. Node 22 LTS (Node 20 reached end of life on
# 2026-04-30); package.json "engines" says the same.
FROM node:22-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The postinstall step applies patches/ (patch-package; the install fails if a patch does not apply).
COPY patches ./patches/
RUN npm ci --omit=dev --no-audit --no-fund

# Compiled JavaScript starts in about half the time of tsx compiling TypeScript at start (README,
# "Container image"). esbuild comes with tsx, a production dependency.
FROM deps AS build
COPY tsconfig.json ./
COPY db ./db
COPY src ./src
COPY scripts ./scripts
RUN npm run build

FROM node:22-bookworm-slim AS runtime
# HOST=0.0.0.0: in a container the port is published from outside, so listen on every interface
# (npm start outside a container defaults to loopback). DEMO=off: a deployment starts empty. Asked
# for with DEMO=auto, the demo is served with random keys printed once, never its published ones
# (a HOST off loopback replaces them at start; only DEMO=public keeps them).
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 DEMO=off PGLITE_DIR=/app/data
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json tsconfig.json ./
COPY --chown=node:node db ./db
COPY --chown=node:node src ./src
COPY --chown=node:node scripts ./scripts
COPY --chown=node:node openapi ./openapi
# The board widget's sources: the server bundles them on the first GET /api/v3/widget.js.
COPY --chown=node:node widget ./widget
COPY --from=build --chown=node:node /app/dist ./dist
# Without DATABASE_URL the embedded PGlite database lives in PGLITE_DIR. WORKDIR made /app
# root's, and the process runs as `node`: create the directory for it (else: EACCES mkdir
# /app/data at start). A volume, so the data outlives the container; a new named volume takes
# this directory's owner.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 8080
# Liveness: 200 while the process answers. Readiness (database and Redis answer) is GET
# /api/v3/ready: point the load balancer's target health check at it (README, "Health and
# readiness"); a restart does not cure a database outage, so the container's own check stays /health.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/v3/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# node itself as PID 1 (not npm): SIGTERM from the runtime reaches the server, which drains and exits 0.
# The heap cap is package.json's config.server_node_args.
CMD ["node", "--max-old-space-size=192", "dist/src/server.js"]
