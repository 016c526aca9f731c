# One image for both Postern apps; docker-compose.yml picks the command.
# The workspaces export their TypeScript source and run under tsx, so there
# is no build step.
FROM node:20-bookworm-slim

WORKDIR /app

# Manifests first, so the dependency layer is rebuilt only when they change.
# Add a line here for each new workspace: `npm ci` needs every workspace's
# package.json that the lockfile names.
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY packages/store/package.json packages/store/
COPY apps/ingest/package.json apps/ingest/
COPY apps/sender/package.json apps/sender/
COPY apps/dashboard/package.json apps/dashboard/
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY tsconfig.base.json tsconfig.json ./
COPY packages/ packages/
COPY apps/ apps/

# Set after `npm ci`, which would otherwise skip devDependencies.
ENV NODE_ENV=production
USER node
# ingest API on 3000; the sender's /healthz, /readyz and /metrics on 3001 (SENDER_PORT).
EXPOSE 3000 3001
CMD ["node", "--import", "tsx", "apps/ingest/src/main.ts"]
