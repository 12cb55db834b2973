#!/usr/bin/env bash
# The cached anonymous article read of two builds side by side in one run: BENCH_VERSUS_REF (a git
# revision, e.g. the commit before a change) against the working tree, on one database, each its
# own server and Redis key prefix, measured in turn BENCH_VERSUS_RUNS times (interleaved, so a
# machine that slows down slows both). For goals such as "the cached article read stays within 5%
# of before" (issue #31). Prints each run and the mean ratio new/old.
#
#   BENCH_VERSUS_REF=0848ab3^ scripts/bench-versus.sh      (make bench-versus)
#
# Needs PostgreSQL and Redis (scripts/services.sh starts them); builds under $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
REF=${BENCH_VERSUS_REF:?set BENCH_VERSUS_REF to the git revision to compare against}
RUNS=${BENCH_VERSUS_RUNS:-3}
CONC=${BENCH_CONCURRENCY:-32}
DUR=${BENCH_VERSUS_DURATION:-10s}
PG=${BENCH_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
RDS=${BENCH_REDIS_URL:-redis://127.0.0.1:6379/0}
DB=inkwell_bench_versus
WORK=$(mktemp -d "${TMPDIR:-/tmp}/inkwell-versus.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	psql "$PG" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT
say() { printf 'versus: %s\n' "$*" >&2; }

DATABASE_URL=$PG REDIS_URL=$RDS scripts/services.sh >/dev/null
commit=$(git rev-parse --verify --quiet "$REF^{commit}") || { echo "BENCH_VERSUS_REF=$REF is not a commit" >&2; exit 2; }
say "building $REF ($(git rev-parse --short "$commit")) and the working tree ($(git rev-parse --short HEAD))"
mkdir -p "$WORK/old"
git archive "$commit" | tar -x -C "$WORK/old"
go -C "$WORK/old" build -o "$WORK/inkwell-old" ./cmd/inkwell
go build -o "$WORK/inkwell-new" ./cmd/inkwell
go build -o "$WORK/loadgen" ./bench/loadgen

psql "$PG" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null
url="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
# serve BINARY ADDR PREFIX MIGRATE: the newer build migrates; the older one runs on that schema,
# as in a rolling upgrade.
serve() {
	env DATABASE_URL="$url" REDIS_URL="$RDS" INKWELL_ADDR="$2" INKWELL_REDIS_PREFIX="$3" INKWELL_MIGRATE_ON_START="$4" \
		INKWELL_LOG_LEVEL=warn INKWELL_JWT_SECRET=inkwell-bench-jwt-secret-0123456789abcdef INKWELL_JWT_LIFETIME=1h \
		INKWELL_RATE_WRITES=0 INKWELL_RATE_AUTH=0 INKWELL_RATE_SEARCH=0 INKWELL_METRICS_ADDR= INKWELL_DRAIN_DELAY=0 \
		"$1" serve >"$WORK/$3log" 2>&1 &
	pids+=($!)
	for _ in $(seq 150); do curl -sf "http://$2/healthz" >/dev/null && return; sleep 0.2; done
	echo "the server on $2 did not start: $(tail -5 "$WORK/$3log")" >&2
	exit 1
}
prefix="versus$$"
serve "$WORK/inkwell-new" 127.0.0.1:18701 "$prefix-new:" true
"$WORK/loadgen" seed -base http://127.0.0.1:18701 -users 20 -articles 200 -tags 8 -workers 4 -writers "$CONC" \
	-tokens "$WORK/tokens" >"$WORK/seed.out" 2>/dev/null
slug=$(head -n 1 "$WORK/seed.out")
serve "$WORK/inkwell-old" 127.0.0.1:18702 "$prefix-old:" false
old=http://127.0.0.1:18702/api/articles/$slug new=http://127.0.0.1:18701/api/articles/$slug
say "answer bytes: old $(curl -s "$old" | wc -c), new $(curl -s "$new" | wc -c)"
sum_old=0 sum_new=0
for r in $(seq "$RUNS"); do
	out=$("$WORK/loadgen" run -c "$CONC" -d "$DUR" -warmup 2s old="$old" new="$new" 2>&1 | grep -E '^run: (old|new) .* req/s')
	echo "$out"
	o=$(awk '$2=="old"{print $3}' <<<"$out") n=$(awk '$2=="new"{print $3}' <<<"$out")
	sum_old=$((sum_old + o)) sum_new=$((sum_new + n))
done
awk -v o="$sum_old" -v n="$sum_new" -v r="$RUNS" -v ref="$REF" 'BEGIN { printf "mean over %d runs: old (%s) %.0f req/s, new %.0f req/s, new/old = %.3f\n", r, ref, o/r, n/r, n/o }'
