#!/usr/bin/env bash
# Benchmark inkwell's API read paths against a bare-gin ceiling on this machine (docs/BENCHMARKS.md).
#
#   scripts/bench.sh            measure and print the results as markdown
#   BENCH_WRITE=1 scripts/bench.sh   ... and rewrite the results section of docs/BENCHMARKS.md
#
# Settings (environment):
#   BENCH_CONCURRENCY  connections per measurement (default 32, at most 256)
#   BENCH_DURATION     measured window per endpoint (default 10s, at most 60s)
#   BENCH_WARMUP       unmeasured warm-up before each window (default 2s)
#   BENCH_WRITE        1: rewrite docs/BENCHMARKS.md between its results markers
#   BENCH_REF          a git revision (e.g. HEAD): build the server from that commit instead of the
#                      working tree (measure a clean snapshot while the tree is being edited)
#   BENCH_COMMAND      the command recorded in docs/BENCHMARKS.md (make bench sets "make bench")
#
# It runs scripts/services.sh, builds bin/inkwell and bin/loadgen, creates a fresh database
# inkwell_bench (dropped first if it exists, dropped again at the end), starts inkwell on
# 127.0.0.1:18080 with its own Redis key prefix and the bare-gin ceiling on 127.0.0.1:18090, seeds
# through the public API, then measures one endpoint after another. All load stays on loopback; the
# run takes about a minute and a half with the defaults.
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT_DIR"

CONCURRENCY=${BENCH_CONCURRENCY:-32}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-2s}
WRITE=${BENCH_WRITE:-0}
COMMAND=${BENCH_COMMAND:-scripts/bench.sh}
REF=${BENCH_REF:-}

API_ADDR=127.0.0.1:18080
CEILING_ADDR=127.0.0.1:18090
BENCH_DB=inkwell_bench
PG_ADMIN_URL="postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
BENCH_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$BENCH_DB?sslmode=disable"
BENCH_REDIS_URL=redis://127.0.0.1:6379/0
REDIS_PREFIX="inkwellbench:$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n'):"
JWT_SECRET=inkwell-bench-jwt-secret-0123456789abcdef # fixed: the bench's own throwaway server
DOC=docs/BENCHMARKS.md

say() { printf 'bench: %s\n' "$*" >&2; }
die() {
	printf 'bench: %s\n' "$*" >&2
	exit 1
}

# Validate the settings here so a typo fails before anything starts.
if ! [[ $CONCURRENCY =~ ^[0-9]+$ ]] || ((CONCURRENCY < 1 || CONCURRENCY > 256)); then
	die "BENCH_CONCURRENCY must be 1..256, not '$CONCURRENCY'"
fi
dur_ok() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?(ms|s)$ ]]; }
dur_ok "$DURATION" || die "BENCH_DURATION must look like 10s or 500ms, not '$DURATION'"
dur_ok "$WARMUP" || die "BENCH_WARMUP must look like 2s or 500ms, not '$WARMUP'"
if [[ $WRITE == 1 ]]; then
	if ! grep -q '^<!-- results:start -->$' "$DOC" || ! grep -q '^<!-- results:end -->$' "$DOC"; then
		die "$DOC lacks the <!-- results:start --> / <!-- results:end --> marker lines"
	fi
fi
for tool in psql curl; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is required"
done

port_taken() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
for addr in "$API_ADDR" "$CEILING_ADDR"; do
	if port_taken "$addr"; then die "something already listens on $addr; stop it first"; fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/inkwell-bench.XXXXXX")
API_PID="" CEILING_PID=""

psql_admin() { PGCONNECT_TIMEOUT=5 psql -X -q -v ON_ERROR_STOP=1 "$PG_ADMIN_URL" "$@"; }

stop_pid() { # stop_pid PID NAME: SIGTERM one process we started, wait up to 10 s, then SIGKILL it
	local pid=$1 i
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 40; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	if kill -0 "$pid" 2>/dev/null; then
		say "$2 (pid $pid) did not stop; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	stop_pid "$API_PID" inkwell
	stop_pid "$CEILING_PID" ceiling
	if [[ $rc -ne 0 && -s $WORK/inkwell.log ]]; then
		say "last lines of the inkwell log:"
		tail -n 20 "$WORK/inkwell.log" >&2 || true
	fi
	psql_admin -c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" >/dev/null 2>&1 ||
		say "could not drop database $BENCH_DB"
	if command -v redis-cli >/dev/null 2>&1; then # the keys expire anyway; this just tidies up
		redis-cli -u "$BENCH_REDIS_URL" --scan --pattern "${REDIS_PREFIX}*" 2>/dev/null |
			xargs -r -n 200 redis-cli -u "$BENCH_REDIS_URL" unlink >/dev/null 2>&1 || true
	fi
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_http SECONDS URL PID NAME: until URL answers 200, failing early if PID exits.
wait_http() {
	local secs=$1 url=$2 pid=$3 name=$4 i
	for ((i = 0; i < secs * 4; i++)); do
		if [[ $(curl -s -o /dev/null -m 1 -w '%{http_code}' "$url" 2>/dev/null) == 200 ]]; then return 0; fi
		kill -0 "$pid" 2>/dev/null || die "$name exited during start-up"
		sleep 0.25
	done
	die "$name did not answer $url within ${secs}s"
}

# machine_busy SECONDS: how many cores were busy (user+system+irq, all processes) over SECONDS.
machine_busy() {
	local a b
	a=$(head -n 1 /proc/stat 2>/dev/null) || return 0
	sleep "$1"
	b=$(head -n 1 /proc/stat)
	awk -v a="$a" -v b="$b" -v s="$1" 'BEGIN {
		split(a, x); split(b, y)
		busy = (y[2] + y[3] + y[4] + y[7] + y[8]) - (x[2] + x[3] + x[4] + x[7] + x[8])
		printf "%.2f", busy / 100 / s
	}'
}

# 1. Services and binaries.
DATABASE_URL=$PG_ADMIN_URL REDIS_URL=$BENCH_REDIS_URL scripts/services.sh >&2
if [[ -n $REF ]]; then
	commit=$(git rev-parse --verify --quiet "$REF^{commit}") || die "BENCH_REF=$REF is not a commit"
	BUILT_REV=$(git rev-parse --short "$commit")
	say "building bin/inkwell from $REF ($BUILT_REV) and bin/loadgen from the working tree"
	mkdir -p "$WORK/src"
	git archive "$commit" | tar -x -C "$WORK/src"
	(cd "$WORK/src" && go build -o "$ROOT_DIR/bin/inkwell" .)
else
	BUILT_REV=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
	if [[ -n $(git status --porcelain 2>/dev/null) ]]; then BUILT_REV="$BUILT_REV (with uncommitted changes)"; fi
	say "building bin/inkwell and bin/loadgen from the working tree ($BUILT_REV)"
	go build -o bin/inkwell .
fi
go build -o bin/loadgen ./bench/loadgen

# 2. A fresh database, and the server on it.
psql_admin -c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" >/dev/null
psql_admin -c "CREATE DATABASE $BENCH_DB" >/dev/null
say "starting inkwell on $API_ADDR (database $BENCH_DB, redis prefix $REDIS_PREFIX)"
INKWELL_ADDR=$API_ADDR DATABASE_URL=$BENCH_DATABASE_URL REDIS_URL=$BENCH_REDIS_URL \
	INKWELL_REDIS_PREFIX=$REDIS_PREFIX INKWELL_MIGRATE_ON_START=true INKWELL_LOG_LEVEL=warn \
	INKWELL_JWT_SECRET=$JWT_SECRET bin/inkwell serve >"$WORK/inkwell.log" 2>&1 &
API_PID=$!
wait_http 30 "http://$API_ADDR/healthz" "$API_PID" inkwell

# 3. Seed through the public API; the slug printed is the article we read.
SLUG=$(timeout 120 bin/loadgen seed -base "http://$API_ADDR" -users 20 -articles 200 -tags 8 -workers 4)
[[ -n $SLUG ]] || die "seeding printed no slug"

# 4. The bare-gin ceiling.
bin/loadgen ceiling -addr "$CEILING_ADDR" 2>"$WORK/ceiling.log" &
CEILING_PID=$!
wait_http 10 "http://$CEILING_ADDR/ceiling" "$CEILING_PID" ceiling

# 5. Warm the article's cache entries (article, author, counters), then measure one endpoint after
#    another. healthz runs inkwell's middleware chain and nothing else: it separates the cost of
#    the chain from the cost of the handlers.
for _ in 1 2 3; do
	curl -sf -o /dev/null "http://$API_ADDR/api/articles/$SLUG" || die "cannot read article $SLUG"
	curl -sf -o /dev/null "http://$API_ADDR/api/tags" || die "cannot read tags"
done
BUSY_BEFORE=$(machine_busy 2)
say "machine busy before measuring: $BUSY_BEFORE of $(nproc) cores (other work on the machine skews the numbers)"
# The redis-server answering on 6379 (not any other one a test may have started).
REDIS_PID=$(ss -ltnpH 'sport = :6379' 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || true)
cpu_flags=(-cpu "ceiling=$CEILING_PID" -cpu "inkwell=$API_PID" -cpu postgres=comm:postgres)
if [[ -n $REDIS_PID ]]; then cpu_flags+=(-cpu "redis=$REDIS_PID"); fi
dur_s() { awk -v d="$1" 'BEGIN { if (d ~ /ms$/) print substr(d, 1, length(d) - 2) / 1000; else print substr(d, 1, length(d) - 1) }'; }
RUN_LIMIT=$(awk -v d="$(dur_s "$DURATION")" -v w="$(dur_s "$WARMUP")" 'BEGIN { printf "%d", 5 * (d + w + 10) + 30 }')
say "measuring 5 endpoints, ${WARMUP} + ${DURATION} each, $CONCURRENCY connections"
timeout "$RUN_LIMIT" bin/loadgen run -c "$CONCURRENCY" -d "$DURATION" -warmup "$WARMUP" \
	-ref ceiling -goal article=0.5 -json bin/bench-results.json "${cpu_flags[@]}" \
	"ceiling=http://$CEILING_ADDR/ceiling" \
	"healthz=http://$API_ADDR/healthz" \
	"article=http://$API_ADDR/api/articles/$SLUG" \
	"list=http://$API_ADDR/api/articles?limit=20" \
	"tags=http://$API_ADDR/api/tags" >"$WORK/table.md"

# 6. Report.
mem_gib=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo 2>/dev/null || echo "?")
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo "?")
pg_ver=$(psql_admin -tAc 'SHOW server_version' 2>/dev/null | awk '{ print $1 }' || echo "?")
redis_ver=$(redis-cli -u "$BENCH_REDIS_URL" info server 2>/dev/null | awk -F: '/^redis_version:/ { print $2 }' | tr -d '\r' || echo "?")
# shellcheck disable=SC2016 # the backquotes are markdown, not command substitution
{
	printf 'Measured %s on commit `%s`.\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$BUILT_REV"
	printf -- '- Machine: %s cores (`nproc`), %s, %s GiB RAM, %s\n' "$(nproc)" "$cpu_model" "$mem_gib" "$(uname -sr)"
	printf -- '- Software: %s, PostgreSQL %s, Redis %s\n' "$(go version | awk '{ print $3 }')" "$pg_ver" "$redis_ver"
	printf -- '- Command: `%s` (BENCH_CONCURRENCY=%s BENCH_DURATION=%s BENCH_WARMUP=%s%s)\n' "$COMMAND" "$CONCURRENCY" "$DURATION" "$WARMUP" "${REF:+ BENCH_REF=$REF}"
	printf -- '- Idle check: %s of %s cores busy in the 2 s before measuring (all processes; ~0 means a quiet machine)\n' "${BUSY_BEFORE:-?}" "$(nproc)"
	printf -- '- Data: 20 users, 200 articles (250–450-byte bodies, 2–4 of 8 tags), 60 follows, 200 favorites; anonymous reads; the article row reads `%s`\n\n' "$SLUG"
	cat "$WORK/table.md"
} >"$WORK/results.md"

echo
cat "$WORK/results.md"
if [[ $WRITE == 1 ]]; then
	awk -v block="$WORK/results.md" '
		/^<!-- results:start -->$/ { print; print ""; while ((getline line < block) > 0) print line; print ""; skip = 1; next }
		/^<!-- results:end -->$/ { skip = 0 }
		!skip { print }
	' "$DOC" >"$WORK/doc.md"
	cat "$WORK/doc.md" >"$DOC"
	say "rewrote the results section of $DOC"
fi
