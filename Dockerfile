# syntax=docker/dockerfile:1
# inkwell API server. The binary embeds its migrations; with INKWELL_MIGRATE_ON_START=true it
# applies them at start. See docker-compose.yml for a full stack with PostgreSQL and Redis.

# Images pinned to exact versions (a rebuild gets the same toolchain and base); bump them on purpose.
FROM golang:1.26.8-bookworm AS build
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

# Debian slim rather than distroless: it has bash, which the health check uses to probe GET /healthz
# without curl. ca-certificates: SMTP over TLS, webhooks and OTLP over HTTPS verify their servers.
FROM debian:12.11-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
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
# GET /metrics is served apart from the API, on INKWELL_METRICS_ADDR (:9464 by default): publish
# it only to your Prometheus, never through the balancer.
EXPOSE 8080 9464
# GET /healthz over bash's /dev/tcp on the port of INKWELL_ADDR (":8080", "0.0.0.0:9000"): healthy
# on a 200. /healthz answers as long as the process serves; whether PostgreSQL and Redis answer is
# /readyz's business (the balancer's check), so an outage there does not get containers restarted.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${INKWELL_ADDR##*:} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && IFS= read -r status <&3 && [[ $status == *' 200 '* ]]"]
ENTRYPOINT ["/inkwell"]
CMD ["serve"]
