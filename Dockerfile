# syntax=docker/dockerfile:1
# scim-bridge: one image for every role.
#   docker run IMAGE start --role api      (SCIM, webhooks, admin API, /healthz /readyz /metrics)
#   docker run IMAGE start --role worker   (BullMQ workers and schedulers, /healthz /readyz /metrics)
#   docker run IMAGE emulator --port 9090 --token T --host 0.0.0.0   (the platform emulator, for trying it)
ARG NODE_IMAGE=node:22-bookworm-slim

# ---- build: dev dependencies and the TypeScript compiler; nothing of this stage ships but dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `prepare` runs the build, which needs the sources: skip scripts here, build explicitly below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY routes ./routes
COPY jobs ./jobs
RUN npm run build

# ---- runtime: production dependencies only, non-root, tini as PID 1 ----
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
  PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The emulator reads the platform contract at run time, next to its compiled code.
COPY src/platform/contract/platform-api.yaml ./src/platform/contract/platform-api.yaml
COPY src/platform/contract/platform-api.yaml ./dist/src/platform/contract/platform-api.yaml
# The official image's unprivileged "node" user (uid 1000); numeric so that runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
# /healthz over plain HTTP, or over HTTPS when server.tls is set (the check refuses no certificate:
# it only asks whether the process answers).
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "const p=process.env.PORT||8080,o={host:'127.0.0.1',port:p,path:'/healthz',timeout:2500},ok=r=>process.exit(r.statusCode===200?0:1),no=()=>process.exit(1);require('http').get(o,ok).on('error',()=>require('https').get({...o,rejectUnauthorized:false},ok).on('error',no))"]
# tini forwards SIGTERM to node and reaps zombies; node handles SIGTERM with a graceful shutdown.
ENTRYPOINT ["tini", "--", "node", "dist/src/cli/main.js"]
CMD ["start"]
