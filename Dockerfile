# The service image: the TypeScript sources run directly (no build step), as with `npm start`.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# The client and the lint tools are npm workspaces: npm ci needs their manifests. The service does not need it built
# (its build script skips when TypeScript, a dev dependency, is absent).
COPY packages/sdk/package.json ./packages/sdk/
COPY packages/sdk/scripts ./packages/sdk/scripts
COPY tools/lint/package.json ./tools/lint/
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
# The contract the server shares with the client (span kinds, template renderer).
COPY packages/sdk/src ./packages/sdk/src
COPY postgres ./postgres
COPY clickhouse ./clickhouse
USER node
ENV HOST=0.0.0.0 PORT=3000 LOUPE_DATA_DIR=/tmp/loupe
EXPOSE 3000
# node directly (not npm) so SIGTERM reaches the service and it shuts down gracefully.
CMD ["node", "--import", "tsx", "src/main.ts", "start"]
