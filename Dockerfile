# syntax=docker/dockerfile:1
# inkwell API server. The binary embeds its migrations; with INKWELL_MIGRATE_ON_START=true it
# applies them at start. See docker-compose.yml for a full stack with PostgreSQL and Redis.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so source edits do not re-download them.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
# .git is not in the build context (.dockerignore), so go build cannot record the commit:
# `inkwell --version` prints INKWELL_COMMIT (docker build --build-arg INKWELL_COMMIT=$(git rev-parse HEAD))
# and the time of this build.
ARG INKWELL_COMMIT=""
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath \
        -ldflags="-s -w -X 'main.commit=${INKWELL_COMMIT}' -X 'main.buildTime=$(date -u +%Y-%m-%dT%H:%M:%SZ)'" \
        -o /out/inkwell ./cmd/inkwell

# bookworm-slim rather than distroless: it has bash, which the compose healthcheck uses to probe
# GET /healthz without curl.
FROM debian:bookworm-slim
RUN groupadd --system --gid 10001 inkwell \
    && useradd --system --uid 10001 --gid inkwell --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin inkwell \
    && mkdir -p /var/lib/inkwell && chown 10001:10001 /var/lib/inkwell && chmod 700 /var/lib/inkwell
COPY --from=build /out/inkwell /inkwell
# A writable working directory: in dev without INKWELL_JWT_SECRET the secret is kept in
# .data/jwt-secret under it (it survives restarts of the container, not its re-creation).
WORKDIR /var/lib/inkwell
USER 10001:10001
ENV INKWELL_ADDR=:8080
EXPOSE 8080
ENTRYPOINT ["/inkwell"]
CMD ["serve"]
