# The service image: the TypeScript sources run directly (no build step), as with `npm start`;
# the web console is built in a first stage and only its static files are copied.
FROM node:20-bookworm-slim AS console
WORKDIR /app
COPY . .
# `prepare` builds web/dist (web/ is its own package with its own lock file).
RUN npm ci --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# The client and the lint tools are npm workspaces: npm ci needs their manifests. The service does not need it built
# (its build script skips when TypeScript, a dev dependency, is absent); nor the console, built in the first stage.
COPY packages/sdk/package.json ./packages/sdk/
COPY packages/sdk/scripts ./packages/sdk/scripts
COPY tools/lint/package.json ./tools/lint/
COPY scripts ./scripts
RUN LOUPE_SKIP_WEB_BUILD=1 npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
# The contract the server shares with the client (span kinds, template renderer).
COPY packages/sdk/src ./packages/sdk/src
COPY postgres ./postgres
COPY clickhouse ./clickhouse
COPY --from=console /app/web/dist ./web/dist
# The ingest write-ahead log: answered writes not yet in ClickHouse. Mount a volume here so a
# replaced container applies them at its next start (docker-compose.yml does).
RUN mkdir -p /var/lib/loupe/ingest-log && chown -R node:node /var/lib/loupe
USER node
ENV HOST=0.0.0.0 PORT=3000 LOUPE_DATA_DIR=/tmp/loupe LOUPE_INGEST_LOG_DIR=/var/lib/loupe/ingest-log
VOLUME /var/lib/loupe
EXPOSE 3000 4317
# node directly (not npm) so SIGTERM reaches the service and it shuts down gracefully.
# The V8 flags of src/node-flags.ts, as npm start passes them.
CMD ["node", "--max-semi-space-size=32", "--import", "tsx", "src/main.ts", "start"]
