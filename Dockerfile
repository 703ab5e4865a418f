# syntax=docker/dockerfile:1
#
# The gateway's production image: `docker build -t onec-order-gateway .`
#
# Two stages. `build` installs every dependency (the TypeScript toolchain too), compiles to dist/
# and prunes the dev dependencies; `runtime` gets only the production tree (package.json, the
# pruned node_modules, dist/, schemas/ and 1c/contract/: src/util/package-files.ts) and runs as an
# unprivileged user.
#
# test/packaging/rehearse.ts reads this file and runs its steps in a clean folder on the test
# machine (npm test runs it): the RUN lines of both stages, then the CMD as the USER, the
# HEALTHCHECK's command, an event, and the STOPSIGNAL with the drain. Keep every RUN line free of
# absolute paths other than the WORKDIR's, so the rehearsal can map them into its folder.

# The official Node image, Node 24 LTS (the project's target, .nvmrc), Debian 12 "bookworm" slim:
# the release CI runs on.
# Pinned by tag. For builds that must be reproducible bit for bit, pin the digest as well:
#   ARG NODE_IMAGE=node:24.22.3-bookworm-slim@sha256:<digest>
# (`docker buildx imagetools inspect node:24.22.3-bookworm-slim` prints it). Both stages use the
# same image.
ARG NODE_IMAGE=node:24.22.3-bookworm-slim

FROM ${NODE_IMAGE} AS build
# No compiler: better-sqlite3 13 ships its Node-API binaries inside the npm package (prebuilds/),
# so nothing is compiled or downloaded from outside the registry, and one binary serves every Node.
WORKDIR /app
# The lockfile alone first, so the dependency layer is cached until it changes.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# Then the sources (.dockerignore keeps tests, 1c/, data/ and node_modules/ out of the context).
COPY . .
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and not writable by the user that runs them: the process can change no code.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/schemas ./schemas
COPY --from=build /app/1c/contract ./1c/contract
COPY --from=build /app/dist ./dist
# The SQLite register (DATABASE_URL, with its -wal and -shm files beside it) lives on a volume
# the user owns. With PostgreSQL (DATABASE_URL=postgres://…) the volume stays empty.
RUN mkdir data && chown 1000:1000 data && chmod 0700 data
VOLUME ["/app/data"]
ENV DATABASE_URL=/app/data/gateway.db
ENV PORT=8080
# Secrets: every one (ADMIN_TOKEN, SENDER_TOKENS, DATABASE_URL, ONEC_USER, ONEC_PASSWORD,
# METRICS_TOKEN) may be given as NAME_FILE, a file's path, as the official PostgreSQL image does:
# mount Docker or Kubernetes secrets and set e.g. ONEC_PASSWORD_FILE=/run/secrets/onec_password,
# so no secret shows in `docker inspect` or the process environment (compose.yaml does so).
# GET /metrics: the gateway listens on every address of the container, so /metrics answers 401
# unless METRICS_TOKEN (Prometheus's bearer token) is set, or METRICS_PORT gives it a port of its own.
# Graceful stop. On SIGTERM the gateway answers /readyz 503 for SHUTDOWN_DELAY_MS while serving
# everything else (so a balancer takes it out), then stops listening, lets calls to 1C in flight
# finish and exits 0; main.ts gives that last part at most 10 s. The whole stop is thus at most
# SHUTDOWN_DELAY_MS + 10 s = 15 s, so the orchestrator's grace period must be longer:
#   - Kubernetes: terminationGracePeriodSeconds defaults to 30 s: enough as it is;
#   - compose.yaml sets stop_grace_period: 20s for the gateway;
#   - plain Docker waits only 10 s before SIGKILL: `docker run --stop-timeout 20 …`, `docker stop -t 20`.
# Without a balancer in front (one container, nothing to take it out of), SHUTDOWN_DELAY_MS=0
# stops at once. test/packaging checks these numbers against each other.
ENV SHUTDOWN_DELAY_MS=5000
# The official image's `node` user, by number: Kubernetes' runAsNonRoot can only verify a numeric USER.
USER 1000:1000
EXPOSE 8080
# /readyz: 200 when the register takes its write lock, 503 when not or while stopping. The slim
# image has no curl or wget, so Node's own fetch asks; it honours PORT if it is changed.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# node is PID 1, with no shell and no npm in between, so SIGTERM reaches the gateway itself, whose
# handler (close-with-grace) does the drain; PID 1's default of ignoring unhandled signals does not
# matter once that handler is installed. No tini: the gateway starts no child processes (the
# SQLite writer is a worker thread), so there are no zombies to reap. `docker run --init` adds one
# if you want it anyway. The heap flags are package.json's start script's.
CMD ["node", "--max-semi-space-size=6", "--heap-growing-percent=20", "dist/main.js"]
