# Multi-stage image: dependencies are installed in a build stage, the runtime stage holds only
# production modules and the source, and runs as the unprivileged `node` user.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The postinstall step applies patches/ (patch-package; the install fails if a patch does not apply).
COPY patches ./patches/
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
# HOST=0.0.0.0: in a container the port is published from outside, so listen on every
# interface (npm start outside a container defaults to loopback).
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 PGLITE_DIR=/app/data
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json tsconfig.json ./
COPY --chown=node:node db ./db
COPY --chown=node:node src ./src
COPY --chown=node:node scripts ./scripts
COPY --chown=node:node openapi ./openapi
# Without DATABASE_URL the embedded PGlite database lives in PGLITE_DIR. WORKDIR made /app
# root's, and the process runs as `node`: create the directory for it (else: EACCES mkdir
# /app/data at start). A volume, so the data outlives the container; a new named volume takes
# this directory's owner.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 8080
# DATABASE_URL and REDIS_URL come from the orchestrator; without them the embedded default runs.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/v3/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["npm", "start"]
