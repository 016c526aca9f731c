# One image for both Postern apps; docker-compose.yml picks the command.
# Stage 1 installs every dependency and compiles each workspace to dist/ (`npm run build`);
# stage 2 holds production dependencies and the compiled JavaScript only, and runs it with
# plain node: no TypeScript loader, no jest, swc, playwright or turbo.

FROM node:20-bookworm-slim AS build
WORKDIR /app
# Manifests first, so the dependency layer is rebuilt only when they change.
# Add a line here (and in the next stage) for each new workspace: `npm ci` needs every
# workspace's package.json that the lockfile names.
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY packages/store/package.json packages/store/
COPY packages/telemetry/package.json packages/telemetry/
COPY packages/sandbox/package.json packages/sandbox/
COPY packages/client/package.json packages/client/
COPY apps/ingest/package.json apps/ingest/
COPY apps/sender/package.json apps/sender/
COPY apps/dashboard/package.json apps/dashboard/
RUN npm ci --no-audit --no-fund
COPY tsconfig.base.json tsconfig.json turbo.json ./
COPY packages/ packages/
COPY apps/ apps/
RUN npm run build

FROM node:20-bookworm-slim AS production
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY packages/store/package.json packages/store/
COPY packages/telemetry/package.json packages/telemetry/
COPY packages/sandbox/package.json packages/sandbox/
COPY packages/client/package.json packages/client/
COPY apps/ingest/package.json apps/ingest/
COPY apps/sender/package.json apps/sender/
COPY apps/dashboard/package.json apps/dashboard/
# --omit=optional too: typescript is an optional peer of valibot (via @bull-board/api) and would
# come along otherwise; msgpackr-extract, BullMQ's optional native speed-up, is left out with it.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
# The compiled code (the store's Lua scripts are copied into its dist/ by its build) and the
# dashboard's static files, which ingest serves from apps/dashboard/public.
COPY --from=build /app/packages/shared/dist packages/shared/dist
COPY --from=build /app/packages/store/dist packages/store/dist
COPY --from=build /app/packages/telemetry/dist packages/telemetry/dist
# The sandbox's build copies its worker (sandbox-worker.mjs) into dist/.
COPY --from=build /app/packages/sandbox/dist packages/sandbox/dist
COPY --from=build /app/apps/ingest/dist apps/ingest/dist
COPY --from=build /app/apps/sender/dist apps/sender/dist
COPY --from=build /app/apps/dashboard/dist apps/dashboard/dist
COPY apps/dashboard/public apps/dashboard/public
USER node
# ingest API on 3000; the sender's /healthz, /readyz and /metrics on 3001 (SENDER_PORT).
EXPOSE 3000 3001
# The apps' heap settings (scripts/node-flags.mjs; docs/operations.md, "Memory").
CMD ["node", "--max-old-space-size=384", "--max-semi-space-size=4", "--single-threaded-gc", "apps/ingest/dist/main.js"]
