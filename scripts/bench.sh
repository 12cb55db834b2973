#!/usr/bin/env bash
# Benchmark inkwell on this machine (docs/BENCHMARKS.md): every load test of the project in one
# run, next to a bare-gin ceiling measured in the same run.
#
#   scripts/bench.sh                 measure and print the results as markdown
#   BENCH_WRITE=1 scripts/bench.sh   ... and rewrite the results section of docs/BENCHMARKS.md
#
# Settings (environment):
#   BENCH_CONCURRENCY    connections per HTTP measurement (default 32, at most 256)
#   BENCH_DURATION       measured window per HTTP row (default 10s, at most 60s)
#   BENCH_WARMUP         unmeasured warm-up before each window (default 2s)
#   BENCH_RANK_ARTICLES  articles bulk-seeded for the ranking pass (default 100000, 1000..1000000)
#   BENCH_BUDGET         the whole run's time limit in seconds (default 600, at most 3600); every
#                        step also has its own limit, and the run fails when either runs out
#   BENCH_WRITE          1: rewrite docs/BENCHMARKS.md between its results markers
#   BENCH_REF            a git revision (e.g. HEAD): build the server and run the Go benchmarks from
#                        that commit instead of the working tree (measure a clean snapshot while the
#                        tree is being edited)
#   BENCH_COMMAND        the command recorded in docs/BENCHMARKS.md (make bench sets "make bench")
#   BENCH_FLEET_ONLY     1: only the ceiling and article rows, then the two-instance part (step 3
#                        below); with BENCH_WRITE=1 it rewrites only the fleet section of the doc
#                        (make bench-fleet)
#   BENCH_PPROF_ADDR     a loopback address: the server serves /debug/pprof there (to profile a row)
#   BENCH_API_ADDR, BENCH_API2_ADDR, BENCH_CEILING_ADDR   the addresses, when BENCH_PORT's
#                        (below) do not suit
#   BENCH_PROPAGATION_WRITES   edits the propagation row measures (default 1000, 1..10000)
#   BENCH_PROPAGATION_BUDGET   seconds the propagation row may take at most (default 90, 10..300):
#                        it reports how many edits it measured when it stops early
#   BENCH_SCALE          0: skip the scale section (step 4 below); default 1
#   BENCH_SCALE_ONLY     1: only the scale section; with BENCH_WRITE=1 it rewrites only its section
#                        of the doc (make bench-scale)
#   BENCH_SCALE_ARTICLES articles of the scale section's large database (default 1000000)
#   BENCH_SCALE_SMALL    ... and of its small one (default 1000)
#   BENCH_SCALE_DURATION / BENCH_SCALE_WARMUP   measured window and warm-up per scale row (10s, 2s)
#   BENCH_ROWS           only these HTTP rows, comma-separated (e.g. likes,comments or
#                        article,article-signed; the ceiling is always measured too, as the
#                        reference), then the count check; skips the two-instance part, the loads
#                        without HTTP and the scale section; not with BENCH_WRITE=1
#   BENCH_PORT           first of the ports the run listens on (default 18080: inkwell on it, the
#                        second instance on +1, the ceiling on +10), for running beside another run
#   BENCH_DB_NAME        the database the run creates and drops (default inkwell_bench)
#   BENCH_SEARCH         0: skip the search section (step 5 below); default 1
#   BENCH_SEARCH_ONLY    1: only the search section; with BENCH_WRITE=1 it rewrites only its section
#                        of the doc (make bench-search)
#   BENCH_SEARCH_ARTICLES articles of the search section's database (default 1000000)
#   BENCH_SEARCH_DB      its name (default inkwell_bench_search2; also <name>_pub_before/_after)
#   BENCH_SEARCH_CONCURRENCY / BENCH_SEARCH_DURATION / BENCH_SEARCH_WARMUP   per search row (16, 10s, 15s)
#   BENCH_SEARCH_SERVICE_DURATION  per search row at one connection (5s)
#   BENCH_SEARCH_ROWS    only these search rows (default mixed,rare,common,misspelt,users,tags)
#   BENCH_MEDIA          0: skip the media section (step 6 below); default 1
#   BENCH_MEDIA_ONLY     1: only the media section; with BENCH_WRITE=1 it rewrites only its section
#                        of the doc (make bench-media)
#   BENCH_REALTIME       0: skip the realtime section (step 7 below); default 1
#   BENCH_REALTIME_ONLY  1: only the realtime section; with BENCH_WRITE=1 it rewrites only its
#                        section of the doc (make bench-realtime)
#   BENCH_SSE_STREAMS    idle streams of the realtime section (default 10000)
#   BENCH_REPLICA        0: skip the replica section (step 8 below); default 1
#   BENCH_REPLICA_ONLY   1: only the replica section; with BENCH_WRITE=1 it rewrites only its
#                        section of the doc (make bench-replica)
#   BENCH_WRK_ONLY       1: only the wrk rows (after seeding; scripts/bench-wrk.sh); with BENCH_WRITE=1
#                        it rewrites only their section of the doc (make bench-wrk)
#   BENCH_WRK_ROUNDS     rounds of the wrk rows (default 3, 1..9)
#   BENCH_SEARCH_BEFORE_REF the build whose publish latency is "before" (default: the first parent of
#                        the merge of h-search found in the history)
#
# It runs scripts/services.sh, builds bin/inkwell, bin/loadgen and the job package's tests, creates
# a fresh database inkwell_bench (dropped first if it exists, dropped again at the end), starts
# inkwell on 127.0.0.1:18080 with its own Redis key prefix and the bare-gin ceiling on
# 127.0.0.1:18090, seeds through the public API (plus one writer user per connection), then:
#   1. HTTP, one row after another: ceiling, healthz, cached article, list, tags, sitemap index, feed (Atom),
#      likes (favorite/unfavorite), comments; then the hot reads (ceiling, article anonymous and
#      signed in, list, tags, feed, sitemap index) through wrk -t2 -c64 in three rounds
#      (scripts/bench-wrk.sh; scripts/services.sh wrk installs wrk);
#   2. a fleet of two: a second instance B on 127.0.0.1:18081, same database and Redis prefix;
#      the cached article read on each instance alone (the other idle beside it), against row 1's
#      single-instance figure; then the propagation delay (loadgen propagate): edits through the
#      first instance, each timed from its answer until B's reads show it, while B serves a steady
#      read load;
#   3. with the servers stopped: the read-event consumer and the job queue (their Go benchmarks,
#      which make and drop their own databases), and one ranking pass over BENCH_RANK_ARTICLES
#      articles bulk-seeded into inkwell_bench;
#   4. the scale section (scripts/bench-scale.sh): two more databases, inkwell_bench_1k and
#      inkwell_bench_1m, bulk-seeded with inkwell seed, the list rows on each with a fresh server,
#      next to the ceiling, compared by loadgen scale;
#   5. the search section (scripts/bench-search.sh): inkwell_bench_search2 bulk-seeded with
#      inkwell seed, and once more with --no-search on a scratch database (the difference is what indexing costs the seed), article,
#      people and tag search and "did you mean" rows at 16 connections, and publish latency of this
#      build against the build before the search index;
#   6. the media section (scripts/bench-media.sh): inkwell_bench_media with a fresh server and the
#      local store, 2 MB JPEG uploads one at a time (p50, server CPU per upload), the stored
#      thumbnail served next to the ceiling, and 16 concurrent ~9.5 MB uploads (server peak RSS);
#   7. the realtime section (scripts/bench-realtime.sh): live notification streams on one instance
#      process (RSS of 10,000 idle streams, publish-to-receive p50/p99 at 1,000 streams) and webhook
#      deliveries to a local receiver (deliveries/s, the queue's CPU per delivery), each with
#      databases of its own;
#   8. the replica section (scripts/bench-replica.sh): on the replica pair of scripts/services.sh
#      replica, the list rows on a server without and one with a read replica, three rounds: req/s,
#      the primary's and the replica's CPU per request, the replica's share of routed reads, and
#      the routing overhead on the list row.
# After the HTTP rows, the likes and comments rows are checked against PostgreSQL: the article's
# like rows, the sum of its counter shards and the favoritesCount the API serves must agree, and
# match what the writers did; its comments must be numbered 1..n with no gap or repeat, one per 200
# answer. A count that is not exact fails the run.
# All load stays on loopback; the run takes about seven minutes with the defaults.
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT_DIR"

SECONDS=0
CONCURRENCY=${BENCH_CONCURRENCY:-32}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-2s}
WRITE=${BENCH_WRITE:-0}
COMMAND=${BENCH_COMMAND:-scripts/bench.sh}
REF=${BENCH_REF:-}
RANK_ARTICLES=${BENCH_RANK_ARTICLES:-100000}
RANK_USERS=1000
BUDGET=${BENCH_BUDGET:-600}
FLEET_ONLY=${BENCH_FLEET_ONLY:-0}
PROP_WRITES=${BENCH_PROPAGATION_WRITES:-1000}
PROP_BUDGET=${BENCH_PROPAGATION_BUDGET:-90}
SCALE=${BENCH_SCALE:-1}
SCALE_ONLY=${BENCH_SCALE_ONLY:-0}
SEARCH=${BENCH_SEARCH:-1}
SEARCH_ONLY=${BENCH_SEARCH_ONLY:-0}
MEDIA=${BENCH_MEDIA:-1}
MEDIA_ONLY=${BENCH_MEDIA_ONLY:-0}
REALTIME=${BENCH_REALTIME:-1}
REALTIME_ONLY=${BENCH_REALTIME_ONLY:-0}
REPLICA=${BENCH_REPLICA:-1}
REPLICA_ONLY=${BENCH_REPLICA_ONLY:-0}
WRK_ONLY=${BENCH_WRK_ONLY:-0}
ROWS=${BENCH_ROWS:-}
PORT=${BENCH_PORT:-18080}
BENCH_DB=${BENCH_DB_NAME:-inkwell_bench}

if ! [[ $PORT =~ ^[0-9]+$ ]] || ((PORT < 1024 || PORT > 65000)); then
	printf 'bench: FAILED: BENCH_PORT must be 1024..65000, not %s\n' "$PORT" >&2
	exit 1
fi
if ! [[ $BENCH_DB =~ ^[a-z_][a-z0-9_]{0,62}$ ]]; then
	printf 'bench: FAILED: BENCH_DB_NAME must be a lower-case identifier, not %s\n' "$BENCH_DB" >&2
	exit 1
fi
API_ADDR=${BENCH_API_ADDR:-127.0.0.1:$PORT}
API2_ADDR=${BENCH_API2_ADDR:-127.0.0.1:$((PORT + 1))}
CEILING_ADDR=${BENCH_CEILING_ADDR:-127.0.0.1:$((PORT + 10))}
PPROF_ADDR=${BENCH_PPROF_ADDR:-}
PG_ADMIN_URL="postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
BENCH_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$BENCH_DB?sslmode=disable"
BENCH_REDIS_URL=redis://127.0.0.1:6379/0
REDIS_PREFIX="inkwellbench:$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n'):"
JWT_SECRET=inkwell-bench-jwt-secret-0123456789abcdef # fixed: the bench's own throwaway server
DOC=docs/BENCHMARKS.md

# Messages go to fd 3 (the terminal's stderr), so they show even from inside redirected steps.
exec 3>&2
say() { printf 'bench: %s\n' "$*" >&3; }
die() {
	printf 'bench: FAILED: %s\n' "$*" >&3
	exit 1
}

# Validate the settings here so a typo fails before anything starts.
if ! [[ $CONCURRENCY =~ ^[0-9]+$ ]] || ((CONCURRENCY < 1 || CONCURRENCY > 256)); then
	die "BENCH_CONCURRENCY must be 1..256, not '$CONCURRENCY'"
fi
dur_ok() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?(ms|s)$ ]]; }
dur_ok "$DURATION" || die "BENCH_DURATION must look like 10s or 500ms, not '$DURATION'"
dur_ok "$WARMUP" || die "BENCH_WARMUP must look like 2s or 500ms, not '$WARMUP'"
if ! [[ $RANK_ARTICLES =~ ^[0-9]+$ ]] || ((RANK_ARTICLES < 1000 || RANK_ARTICLES > 1000000)); then
	die "BENCH_RANK_ARTICLES must be 1000..1000000, not '$RANK_ARTICLES'"
fi
if ! [[ $BUDGET =~ ^[0-9]+$ ]] || ((BUDGET < 60 || BUDGET > 3600)); then
	die "BENCH_BUDGET must be 60..3600 seconds, not '$BUDGET'"
fi
if ! [[ $PROP_WRITES =~ ^[0-9]+$ ]] || ((PROP_WRITES < 1 || PROP_WRITES > 10000)); then
	die "BENCH_PROPAGATION_WRITES must be 1..10000, not '$PROP_WRITES'"
fi
if ! [[ $PROP_BUDGET =~ ^[0-9]+$ ]] || ((PROP_BUDGET < 10 || PROP_BUDGET > 300)); then
	die "BENCH_PROPAGATION_BUDGET must be 10..300 seconds, not '$PROP_BUDGET'"
fi
[[ $FLEET_ONLY == 0 || $FLEET_ONLY == 1 ]] || die "BENCH_FLEET_ONLY must be 0 or 1, not '$FLEET_ONLY'"
[[ $SCALE == 0 || $SCALE == 1 ]] || die "BENCH_SCALE must be 0 or 1, not '$SCALE'"
[[ $SCALE_ONLY == 0 || $SCALE_ONLY == 1 ]] || die "BENCH_SCALE_ONLY must be 0 or 1, not '$SCALE_ONLY'"
((!(SCALE_ONLY && FLEET_ONLY))) || die "BENCH_SCALE_ONLY and BENCH_FLEET_ONLY exclude each other"
((!(SCALE_ONLY && !SCALE))) || die "BENCH_SCALE_ONLY=1 with BENCH_SCALE=0 leaves nothing to run"
[[ $SEARCH == 0 || $SEARCH == 1 ]] || die "BENCH_SEARCH must be 0 or 1, not '$SEARCH'"
[[ $SEARCH_ONLY == 0 || $SEARCH_ONLY == 1 ]] || die "BENCH_SEARCH_ONLY must be 0 or 1, not '$SEARCH_ONLY'"
((!(SEARCH_ONLY && (FLEET_ONLY || SCALE_ONLY)))) || die "BENCH_SEARCH_ONLY excludes BENCH_FLEET_ONLY and BENCH_SCALE_ONLY"
((!(SEARCH_ONLY && !SEARCH))) || die "BENCH_SEARCH_ONLY=1 with BENCH_SEARCH=0 leaves nothing to run"
[[ $MEDIA == 0 || $MEDIA == 1 ]] || die "BENCH_MEDIA must be 0 or 1, not '$MEDIA'"
[[ $MEDIA_ONLY == 0 || $MEDIA_ONLY == 1 ]] || die "BENCH_MEDIA_ONLY must be 0 or 1, not '$MEDIA_ONLY'"
((!(MEDIA_ONLY && (FLEET_ONLY || SCALE_ONLY || SEARCH_ONLY)))) || die "BENCH_MEDIA_ONLY excludes BENCH_FLEET_ONLY, BENCH_SCALE_ONLY and BENCH_SEARCH_ONLY"
((!(MEDIA_ONLY && !MEDIA))) || die "BENCH_MEDIA_ONLY=1 with BENCH_MEDIA=0 leaves nothing to run"
[[ $REALTIME == 0 || $REALTIME == 1 ]] || die "BENCH_REALTIME must be 0 or 1, not '$REALTIME'"
[[ $REALTIME_ONLY == 0 || $REALTIME_ONLY == 1 ]] || die "BENCH_REALTIME_ONLY must be 0 or 1, not '$REALTIME_ONLY'"
((!(REALTIME_ONLY && (FLEET_ONLY || SCALE_ONLY || SEARCH_ONLY || MEDIA_ONLY)))) || die "BENCH_REALTIME_ONLY excludes BENCH_FLEET_ONLY, BENCH_SCALE_ONLY, BENCH_SEARCH_ONLY and BENCH_MEDIA_ONLY"
((!(REALTIME_ONLY && !REALTIME))) || die "BENCH_REALTIME_ONLY=1 with BENCH_REALTIME=0 leaves nothing to run"
[[ $REPLICA == 0 || $REPLICA == 1 ]] || die "BENCH_REPLICA must be 0 or 1, not '$REPLICA'"
[[ $REPLICA_ONLY == 0 || $REPLICA_ONLY == 1 ]] || die "BENCH_REPLICA_ONLY must be 0 or 1, not '$REPLICA_ONLY'"
((!(REPLICA_ONLY && (FLEET_ONLY || SCALE_ONLY || SEARCH_ONLY || MEDIA_ONLY || REALTIME_ONLY)))) || die "BENCH_REPLICA_ONLY excludes the other BENCH_*_ONLY settings"
((!(REPLICA_ONLY && !REPLICA))) || die "BENCH_REPLICA_ONLY=1 with BENCH_REPLICA=0 leaves nothing to run"
[[ $WRK_ONLY == 0 || $WRK_ONLY == 1 ]] || die "BENCH_WRK_ONLY must be 0 or 1, not '$WRK_ONLY'"
((!(WRK_ONLY && (FLEET_ONLY || SCALE_ONLY || SEARCH_ONLY || MEDIA_ONLY || REALTIME_ONLY || REPLICA_ONLY)))) || die "BENCH_WRK_ONLY excludes the other BENCH_*_ONLY settings"
if ((WRK_ONLY)); then SEARCH=0 SCALE=0 MEDIA=0 REALTIME=0 REPLICA=0; fi
if ((FLEET_ONLY || SCALE_ONLY || MEDIA_ONLY || REALTIME_ONLY || REPLICA_ONLY)); then SEARCH=0; fi
if ((FLEET_ONLY || SEARCH_ONLY || MEDIA_ONLY || REALTIME_ONLY || REPLICA_ONLY)); then SCALE=0; fi
if ((FLEET_ONLY || SCALE_ONLY || SEARCH_ONLY || REALTIME_ONLY || REPLICA_ONLY)); then MEDIA=0; fi
if ((FLEET_ONLY || SCALE_ONLY || SEARCH_ONLY || MEDIA_ONLY || REPLICA_ONLY)); then REALTIME=0; fi
if ((FLEET_ONLY || SCALE_ONLY || SEARCH_ONLY || MEDIA_ONLY || REALTIME_ONLY)); then REPLICA=0; fi
# shellcheck source=scripts/bench-scale.sh
source "$ROOT_DIR/scripts/bench-scale.sh"
scale_check_settings
# shellcheck source=scripts/bench-search.sh
source "$ROOT_DIR/scripts/bench-search.sh"
search_check_settings
# shellcheck source=scripts/bench-media.sh
source "$ROOT_DIR/scripts/bench-media.sh"
# shellcheck source=scripts/bench-realtime.sh
source "$ROOT_DIR/scripts/bench-realtime.sh"
realtime_check_settings
# shellcheck source=scripts/bench-replica.sh
source "$ROOT_DIR/scripts/bench-replica.sh"
# shellcheck source=scripts/bench-wrk.sh
source "$ROOT_DIR/scripts/bench-wrk.sh"
if [[ -n $ROWS ]]; then
	[[ $ROWS =~ ^[a-z-]+(,[a-z-]+)*$ ]] || die "BENCH_ROWS must be row names separated by commas (e.g. likes,comments), not '$ROWS'"
	((FLEET_ONLY == 0)) || die "BENCH_ROWS and BENCH_FLEET_ONLY=1 do not go together"
	[[ $WRITE == 0 ]] || die "BENCH_ROWS measures a part of the run: it does not rewrite $DOC (BENCH_WRITE=1)"
fi
if [[ $WRITE == 1 ]]; then
	for section in results wrk-results fleet-results scale-results search-results media-results realtime-results replica-results; do
		if ! grep -q "^<!-- $section:start -->\$" "$DOC" || ! grep -q "^<!-- $section:end -->\$" "$DOC"; then
			die "$DOC lacks the <!-- $section:start --> / <!-- $section:end --> marker lines"
		fi
	done
fi
for tool in psql curl timeout; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is required"
done

port_taken() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
for addr in "$API_ADDR" "$API2_ADDR" "$CEILING_ADDR"; do
	if port_taken "$addr"; then die "something already listens on $addr; stop it first"; fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/inkwell-bench.XXXXXX")
MAIN_DBS=() # $BENCH_DB once this run has created it
API_PID="" API2_PID="" CEILING_PID=""

psql_admin() { PGCONNECT_TIMEOUT=5 PGOPTIONS='-c client_min_messages=warning' psql -X -q -v ON_ERROR_STOP=1 "$PG_ADMIN_URL" "$@"; }

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
	if ((rc != 0)); then say "the run failed after ${SECONDS}s; cleaning up"; fi
	stop_pid "$API_PID" inkwell
	stop_pid "$API2_PID" "inkwell B"
	stop_pid "$CEILING_PID" ceiling
	for log in "$WORK"/inkwell*.log; do
		if [[ $rc -ne 0 && -s $log ]]; then
			say "last lines of the ${log##*/} log:"
			tail -n 20 "$log" >&3 || true
		fi
	done
	# Only the databases this run created (a scale- or search-only run never makes $BENCH_DB, and
	# another run may be using it).
	for db in "${MAIN_DBS[@]}" "${SCALE_DBS[@]}" "${SEARCH_DBS[@]}" "${MEDIA_DBS[@]}"; do
		psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 ||
			say "could not drop database $db"
	done
	replica_cleanup
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

# step [-v] NAME CAP CMD...: run CMD (an executable, not a shell function) under `timeout`, with a
# limit of CAP seconds or what is left of the run's BENCH_BUDGET, whichever is less. Its stdout goes
# to $WORK/NAME.out, its stderr to $WORK/NAME.err (with -v: to the terminal, to watch progress). A
# failure or a timeout ends the run, naming the step and showing the end of its output.
step() {
	local live=0 name cap limit rc=0 left f
	if [[ $1 == -v ]]; then
		live=1
		shift
	fi
	name=$1 cap=$2
	shift 2
	left=$((BUDGET - SECONDS))
	((left > 5)) || die "the run's time budget (BENCH_BUDGET=${BUDGET}s) ran out before step '$name'"
	limit=$((left < cap ? left : cap))
	if ((live)); then
		timeout -k 10 "$limit" "$@" >"$WORK/$name.out" 2>&3 || rc=$?
	else
		timeout -k 10 "$limit" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
	fi
	((rc == 0)) && return 0
	for f in "$WORK/$name.err" "$WORK/$name.out"; do
		if [[ -s $f ]]; then
			printf 'bench: last lines of %s:\n' "${f##*/}" >&3
			tail -n 25 "$f" >&3
		fi
	done
	if ((rc == 124 || rc == 137)); then
		if ((limit < cap)); then
			die "step '$name' was stopped after ${limit}s: the run's time budget (BENCH_BUDGET=${BUDGET}s) ran out"
		fi
		die "step '$name' timed out after ${limit}s ($*)"
	fi
	die "step '$name' failed with exit status $rc ($*)"
}

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

# go_seconds DURATION: a Go duration as printed by time.Duration (1m2.5s, 1.2s, 350ms, 900µs) in s.
go_seconds() {
	awk -v d="$1" 'BEGIN {
		t = 0; ok = 0
		while (match(d, /^[0-9.]+(h|m|s|ms|µs|us|ns)/)) {
			part = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1)
			match(part, /^[0-9.]+/); v = substr(part, 1, RLENGTH); u = substr(part, RLENGTH + 1)
			t += v * (u == "h" ? 3600 : u == "m" ? 60 : u == "s" ? 1 : u == "ms" ? 1e-3 : u == "ns" ? 1e-9 : 1e-6)
			ok = 1
		}
		if (!ok || d != "") exit 1
		printf "%.3f", t
	}'
}

# dur_s DURATION: 10s or 500ms in seconds; mmss SECONDS: "1 min 05 s".
dur_s() { awk -v d="$1" 'BEGIN { if (d ~ /ms$/) print substr(d, 1, length(d) - 2) / 1000; else print substr(d, 1, length(d) - 1) }'; }
mmss() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }

# bench_metric FILE UNIT: the value reported before UNIT on the benchmark line of go test output.
bench_metric() {
	awk -v unit="$2" '/^Benchmark/ { for (i = 2; i <= NF; i++) if ($i == unit) v = $(i - 1) } END { if (v == "") exit 1; print v }' "$1"
}

# 1. Services and binaries (the job package's tests too: a compile error fails the run here, not
#    after the HTTP rows).
step services 120 env DATABASE_URL="$PG_ADMIN_URL" REDIS_URL="$BENCH_REDIS_URL" scripts/services.sh
if ((!FLEET_ONLY && !REALTIME_ONLY && !REPLICA_ONLY)); then step wrk-install 300 scripts/services.sh wrk; fi
SRC=$ROOT_DIR
if [[ -n $REF ]]; then
	commit=$(git rev-parse --verify --quiet "$REF^{commit}") || die "BENCH_REF=$REF is not a commit"
	BUILT_REV=$(git rev-parse --short "$commit")
	say "building bin/inkwell and the Go benchmarks from $REF ($BUILT_REV), bin/loadgen from the working tree"
	SRC=$WORK/src
	mkdir -p "$SRC"
	git archive "$commit" | tar -x -C "$SRC"
else
	BUILT_REV=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
	if [[ -n $(git status --porcelain 2>/dev/null) ]]; then BUILT_REV="$BUILT_REV (with uncommitted changes)"; fi
	say "building bin/inkwell, bin/loadgen and the job package's tests from the working tree ($BUILT_REV)"
fi
mkdir -p bin
main_pkg=./cmd/inkwell
[[ -d "$SRC/cmd/inkwell" ]] || main_pkg=. # refs from before the binary moved to cmd/inkwell
step build-inkwell 300 go -C "$SRC" build -o "$ROOT_DIR/bin/inkwell" "$main_pkg"
step build-loadgen 300 go build -o bin/loadgen ./bench/loadgen
if ((!SCALE_ONLY && !SEARCH_ONLY && !MEDIA_ONLY && !REPLICA_ONLY)); then # the realtime section runs them too
	step build-jobtests 300 go -C "$SRC" test -c -o "$WORK/job.test" ./job/
	rm -f "$WORK/job.test"
fi

# write_section NAME FILE: replace the lines between <!-- NAME:start --> and <!-- NAME:end -->.
write_section() {
	awk -v block="$2" -v start="<!-- $1:start -->" -v end="<!-- $1:end -->" '
		$0 == start { print; print ""; while ((getline line < block) > 0) print line; print ""; skip = 1; next }
		$0 == end { skip = 0 }
		!skip { print }
	' "$DOC" >"$WORK/doc.md"
	cat "$WORK/doc.md" >"$DOC"
	say "rewrote the $1 section of $DOC"
}

# only_section NAME: run the NAME section alone (NAME_section writes $WORK/NAME.md), print it,
# rewrite its part of the doc with BENCH_WRITE=1, and end the run.
only_section() {
	"${1}_section"
	echo
	cat "$WORK/$1.md"
	if [[ $WRITE == 1 ]]; then write_section "$1-results" "$WORK/$1.md"; fi
	say "done in $(mmss "$SECONDS")"
	exit 0
}
if ((SEARCH_ONLY)); then only_section search; fi
if ((MEDIA_ONLY)); then only_section media; fi
if ((SCALE_ONLY)); then only_section scale; fi
if ((REALTIME_ONLY)); then only_section realtime; fi
if ((REPLICA_ONLY)); then only_section replica; fi

# 2. A fresh database, and the server on it. Rate limits off (the write rows would hit the per-user
#    limit within a second, and seeding registers more users than the per-IP limit allows); tokens
#    live an hour, so the writers' tokens outlast the run.
psql_admin -c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" >/dev/null
psql_admin -c "CREATE DATABASE $BENCH_DB" >/dev/null
MAIN_DBS+=("$BENCH_DB")
say "starting inkwell on $API_ADDR (database $BENCH_DB, redis prefix $REDIS_PREFIX)"
# serve ADDR LOG: one instance of the bench's server, in the background (its pid in $!). No
# metrics listener (two instances would take one port) and no drain delay (nothing balances them).
serve() {
	INKWELL_ADDR=$1 DATABASE_URL=$BENCH_DATABASE_URL REDIS_URL=$BENCH_REDIS_URL \
		INKWELL_REDIS_PREFIX=$REDIS_PREFIX INKWELL_MIGRATE_ON_START=true INKWELL_LOG_LEVEL=warn \
		INKWELL_JWT_SECRET=$JWT_SECRET INKWELL_JWT_LIFETIME=1h INKWELL_RATE_WRITES=0 INKWELL_RATE_AUTH=0 INKWELL_RATE_SEARCH=0 \
		INKWELL_PPROF_ADDR=$PPROF_ADDR INKWELL_METRICS_ADDR= INKWELL_DRAIN_DELAY=0 bin/inkwell serve >"$WORK/$2.log" 2>&1 &
}
serve "$API_ADDR" inkwell
API_PID=$!
wait_http 30 "http://$API_ADDR/healthz" "$API_PID" inkwell

# 3. Seed through the public API; the slug printed is the article we read, like and comment on. The
#    writers are one extra user per connection, for the write rows.
say "seeding through the API (20 users, 200 articles, $CONCURRENCY writers)"
step seed 180 bin/loadgen seed -base "http://$API_ADDR" -users 20 -articles 200 -tags 8 -workers 4 \
	-writers "$CONCURRENCY" -tokens "$WORK/tokens"
SLUG=$(head -n 1 "$WORK/seed.out")
[[ -n $SLUG ]] || die "seeding printed no slug"
[[ $SLUG =~ ^[a-z0-9-]+$ ]] || die "seeding printed an unexpected slug: $SLUG"
# psql_bench SQL: one query on the bench database. A refused connection (psql's status 2, e.g. "too
# many clients" while other work shares the server) is retried a few times: the queries only read.
psql_bench() {
	local i rc
	for ((i = 0; i < 5; i++)); do
		rc=0
		PGCONNECT_TIMEOUT=5 psql -X -q -tA -v ON_ERROR_STOP=1 "$BENCH_DATABASE_URL" -c "$1" && return 0 || rc=$?
		((rc == 2)) || return "$rc"
		sleep 1
	done
	return "$rc"
}
ARTICLE_ID=$(psql_bench "SELECT id FROM articles WHERE slug = '$SLUG'") || die "cannot find article $SLUG in $BENCH_DB"
COMMENTS_BEFORE=$(psql_bench "SELECT count(*) FROM comments WHERE article_id = $ARTICLE_ID")

# 4. The bare-gin ceiling.
bin/loadgen ceiling -addr "$CEILING_ADDR" 2>"$WORK/ceiling.log" &
CEILING_PID=$!
wait_http 10 "http://$CEILING_ADDR/ceiling" "$CEILING_PID" ceiling

# 5. Warm the article's cache entries (article, author, counters), then measure one HTTP row after
#    another. healthz runs inkwell's middleware chain and nothing else: it separates the cost of
#    the chain from the cost of the handlers. The write rows come last, so the reads see the seeded
#    data only. likes: each connection's own user favorites and unfavorites the article in turn,
#    so every request changes state; comments: each connection's user comments on it.
for _ in 1 2 3; do
	curl -sf -o /dev/null "http://$API_ADDR/api/articles/$SLUG" || die "cannot read article $SLUG"
	curl -sf -o /dev/null "http://$API_ADDR/api/tags" || die "cannot read tags"
	curl -sf -o /dev/null "http://$API_ADDR/sitemap.xml" || die "cannot read the sitemap index"
	curl -sf -o /dev/null "http://$API_ADDR/feeds/articles.atom" || die "cannot read the Atom feed"
done
BUSY_BEFORE=$(machine_busy 2)
say "machine busy before measuring: $BUSY_BEFORE of $(nproc) cores (other work on the machine skews the numbers)"
# The redis-server answering on 6379 (not any other one a test may have started).
REDIS_PID=$(ss -ltnpH 'sport = :6379' 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || true)
cpu_flags=(-cpu "ceiling=$CEILING_PID" -cpu "inkwell=$API_PID" -cpu postgres=comm:postgres)
if [[ -n $REDIS_PID ]]; then cpu_flags+=(-cpu "redis=$REDIS_PID"); fi
targets=(
	"ceiling=http://$CEILING_ADDR/ceiling"
	"healthz=http://$API_ADDR/healthz"
	"article=http://$API_ADDR/api/articles/$SLUG"
	"article-signed=http://$API_ADDR/api/articles/$SLUG"
	"list=http://$API_ADDR/api/articles?limit=20"
	"tags=http://$API_ADDR/api/tags"
	"sitemap-index=http://$API_ADDR/sitemap.xml"
	"feed=http://$API_ADDR/feeds/articles.atom"
	"likes=POST+DELETE http://$API_ADDR/api/articles/$SLUG/favorite"
	"comments=POST http://$API_ADDR/api/articles/$SLUG/comments"
)
COMMENT_BODY='{"comment":{"body":"A benchmark comment: long enough to look like a real one, short enough to stay a single line of text."}}'
write_flags=(-tokens "$WORK/tokens" -body "comments=$COMMENT_BODY")
HTTP_JSON=bin/bench-results.json
goal_flags=(-goal article=0.5)
if ((FLEET_ONLY)); then
	targets=("${targets[0]}" "${targets[2]}") # the ceiling and the single-instance article read
	write_flags=()
	HTTP_JSON=$WORK/http.json
fi
if [[ -n $ROWS ]]; then
	kept=("${targets[0]}") # the ceiling: every row is compared with it
	for t in "${targets[@]:1}"; do
		if [[ ",$ROWS," == *",${t%%=*},"* ]]; then kept+=("$t"); fi
	done
	((${#kept[@]} > 1)) || die "BENCH_ROWS=$ROWS names none of the rows: ${targets[*]%%=*}"
	targets=("${kept[@]}")
	HTTP_JSON=$WORK/http.json
	write_flags=(-tokens "$WORK/tokens")
	if [[ ",$ROWS," == *",comments,"* ]]; then write_flags+=(-body "comments=$COMMENT_BODY"); fi
fi
if ((WRK_ONLY)); then # the hot reads only, next to the ceiling, for their CPU per request
	kept=("${targets[0]}")
	for t in "${targets[@]:1}"; do
		case ${t%%=*} in article | article-signed | list | tags | feed | sitemap-index) kept+=("$t") ;; esac
	done
	targets=("${kept[@]}")
	HTTP_JSON=$WORK/http.json
	write_flags=(-tokens "$WORK/tokens")
fi
# Goals and flags only for the rows measured: a goal about a row left out would fail the run.
has_row() { [[ " ${targets[*]%%=*} " == *" $1 "* ]]; }
goal_flags=()
if has_row article; then goal_flags+=(-goal article=0.5); fi
if has_row article-signed; then
	write_flags+=(-signed article-signed)
	if has_row article; then goal_flags+=(-goal article-signed/article=0.5); fi
fi
RUN_LIMIT=$(awk -v n="${#targets[@]}" -v d="$(dur_s "$DURATION")" -v w="$(dur_s "$WARMUP")" 'BEGIN { printf "%d", n * (d + w + 10) + 30 }')
say "measuring ${#targets[@]} HTTP rows, ${WARMUP} + ${DURATION} each, $CONCURRENCY connections"
HTTP_START=$SECONDS
step -v http "$RUN_LIMIT" bin/loadgen run -c "$CONCURRENCY" -d "$DURATION" -warmup "$WARMUP" \
	-ref ceiling "${goal_flags[@]}" -json "$HTTP_JSON" "${cpu_flags[@]}" \
	"${write_flags[@]}" "${targets[@]}"
HTTP_SECS=$((SECONDS - HTTP_START))

if ((WRK_ONLY)); then
	wrk_rows
	{
		wrk_header
		printf 'Through loadgen first (closed loop, %s connections, %s + %s per row; the signed-in row sends each connection as its own user), with the CPU per request of each process:\n\n' "$CONCURRENCY" "$WARMUP" "$DURATION"
		cat "$WORK/http.out"
		echo
		cat "$WORK/wrk.md"
	} >"$WORK/wrk-only.md"
	echo
	cat "$WORK/wrk-only.md"
	if [[ $WRITE == 1 ]]; then write_section wrk-results "$WORK/wrk-only.md"; fi
	say "done in $(mmss "$SECONDS")"
	exit 0
fi
# json_num FILE NAME FIELD: the number loadgen run -json recorded in FIELD for target NAME.
json_num() {
	awk -v want="$2" -v field="\"$3\":" '/"name":/ { n = $2; gsub(/[",]/, "", n) } $1 == field && n == want { v = $2; gsub(/,/, "", v); print v; exit }' "$1"
}
# 5a. Exact counts after the write rows, checked against PostgreSQL and the API.
ran() { printf '%s\n' "${targets[@]}" | grep -q "^$1="; }
: >"$WORK/exact.md"
inexact=()
if ran likes || ran comments; then
	{
		printf '\nCounts after the write rows (PostgreSQL, and the anonymous `GET /api/articles/%s`, served from the cache):\n\n' "$SLUG"
		printf '| Row | Checked | Values | Exact |\n|---|---|---|---|\n'
	} >>"$WORK/exact.md"
fi
if ran likes; then
	liked_rows=$(psql_bench "SELECT count(*) FROM likes WHERE biz = 'article' AND biz_id = $ARTICLE_ID AND liked")
	writer_rows=$(psql_bench "SELECT count(*) FROM likes l JOIN users u ON u.id = l.user_id WHERE l.biz = 'article' AND l.biz_id = $ARTICLE_ID AND l.liked AND u.username ~ '_w[0-9]+\$'")
	shard_sum=$(psql_bench "SELECT coalesce(sum(like_cnt), 0) FROM interactives WHERE biz = 'article' AND biz_id = $ARTICLE_ID")
	shard_rows=$(psql_bench "SELECT count(*) FROM interactives WHERE biz = 'article' AND biz_id = $ARTICLE_ID")
	api_likes=$(curl -sf "http://$API_ADDR/api/articles/$SLUG" | grep -o '"favoritesCount":-\?[0-9]*' | cut -d: -f2) || api_likes="?"
	ended_on=$(json_num "$HTTP_JSON" likes endedOnFirst) || ended_on="?"
	ok_likes=$(json_num "$HTTP_JSON" likes okTotal) || ok_likes="?"
	verdict=yes
	if [[ $liked_rows != "$shard_sum" || $liked_rows != "$api_likes" || $writer_rows != "$ended_on" ]]; then
		verdict=NO
		inexact+=(likes)
	fi
	printf '| likes | like rows = sum of the counter shards = `favoritesCount`; the writers'"'"' like rows = writers whose last answered request was a POST | %s like rows, %s over %s shard rows, `favoritesCount` %s; %s writers'"'"' rows, %s writers ended on POST (%s answered requests in all) | %s |\n' \
		"$liked_rows" "$shard_sum" "$shard_rows" "$api_likes" "$writer_rows" "$ended_on" "$ok_likes" "$verdict" >>"$WORK/exact.md"
fi
if ran comments; then
	read -r c_rows c_distinct c_max c_last < <(psql_bench "SELECT count(*), count(DISTINCT c.seq), coalesce(max(c.seq), 0), s.last_seq FROM article_comment_seqs s LEFT JOIN comments c ON c.article_id = s.article_id WHERE s.article_id = $ARTICLE_ID GROUP BY s.last_seq" | tr '|' ' ')
	ok_comments=$(json_num "$HTTP_JSON" comments okTotal) || ok_comments="?"
	verdict=yes
	if [[ $c_rows != "$((COMMENTS_BEFORE + ok_comments))" || $c_rows != "$c_distinct" || $c_rows != "$c_max" || $c_rows != "$c_last" ]]; then
		verdict=NO
		inexact+=(comments)
	fi
	printf '| comments | rows = rows before + 200 answers; seqs distinct, 1..n (max = rows = the article'"'"'s counter) | %s rows (%s before, %s answered), %s distinct seqs, max seq %s, counter %s | %s |\n' \
		"$c_rows" "$COMMENTS_BEFORE" "$ok_comments" "$c_distinct" "$c_max" "$c_last" "$verdict" >>"$WORK/exact.md"
fi
cat "$WORK/exact.md" >&3
((${#inexact[@]} == 0)) || die "counts not exact after the rows: ${inexact[*]} (see the table above)"

if [[ -n $ROWS ]]; then
	{
		printf 'Measured %s on commit `%s`, BENCH_ROWS=%s, %s connections, %s + %s per row; the machine was %s of %s cores busy just before (other work skews the numbers).\n\n' \
			"$(date -u '+%Y-%m-%d %H:%M UTC')" "$BUILT_REV" "$ROWS" "$CONCURRENCY" "$WARMUP" "$DURATION" "$BUSY_BEFORE" "$(nproc)"
		cat "$WORK/http.out"
		cat "$WORK/exact.md"
	} >"$WORK/rows.md"
	echo
	cat "$WORK/rows.md"
	say "done in $((SECONDS / 60)) min $((SECONDS % 60)) s (BENCH_ROWS: the two-instance part and the loads without HTTP were skipped)"
	exit 0
fi
# 5a'. The hot reads again, through wrk, in rounds next to the ceiling (scripts/bench-wrk.sh).
if ((!FLEET_ONLY)); then wrk_rows; fi

# 5b. A fleet of two. B serves the same database and Redis prefix; the first instance is A. Each
#     instance's cached article read is measured alone (the other idles beside it, subscribed to
#     whatever the instances share), so it compares with the single-instance row above: the fleet
#     must not cost the read path. Then the propagation delay, with B under a steady read load.
say "starting a second instance on $API2_ADDR (same database and Redis prefix)"
serve "$API2_ADDR" inkwell-b
API2_PID=$!
wait_http 30 "http://$API2_ADDR/healthz" "$API2_PID" "inkwell B"
for _ in 1 2 3; do
	curl -sf -o /dev/null "http://$API2_ADDR/api/articles/$SLUG" || die "cannot read article $SLUG on B"
done
FLEET_START=$SECONDS
fleet_cpu=(-cpu "inkwell-A=$API_PID" -cpu "inkwell-B=$API2_PID" -cpu postgres=comm:postgres)
if [[ -n $REDIS_PID ]]; then fleet_cpu+=(-cpu "redis=$REDIS_PID"); fi
FLEET_LIMIT=$(awk -v d="$(dur_s "$DURATION")" -v w="$(dur_s "$WARMUP")" 'BEGIN { printf "%d", 2 * (d + w + 10) + 30 }')
say "measuring the cached article read on each of the two instances, ${WARMUP} + ${DURATION} each"
step -v fleet "$FLEET_LIMIT" bin/loadgen run -c "$CONCURRENCY" -d "$DURATION" -warmup "$WARMUP" \
	-ref article-A -json "$WORK/fleet.json" "${fleet_cpu[@]}" \
	"article-A=http://$API_ADDR/api/articles/$SLUG" "article-B=http://$API2_ADDR/api/articles/$SLUG"
# json_rps FILE NAME: the req/s loadgen run -json recorded for target NAME.
json_rps() {
	awk -v want="$2" '/"name":/ { n = $2; gsub(/[",]/, "", n) } /"rps":/ && n == want { v = $2; gsub(/,/, "", v); print v; exit }' "$1"
}
SINGLE_RPS=$(json_rps "$HTTP_JSON" article) || true
A_RPS=$(json_rps "$WORK/fleet.json" article-A) || true
B_RPS=$(json_rps "$WORK/fleet.json" article-B) || true
[[ -n $SINGLE_RPS && -n $A_RPS && -n $B_RPS ]] || die "cannot read the article rows' req/s from $HTTP_JSON and $WORK/fleet.json"
PROP_CMD="loadgen propagate -write http://$API_ADDR -read http://$API2_ADDR -n $PROP_WRITES -readers 4 -rate 1000 -wait 5s -budget ${PROP_BUDGET}s"
say "propagation: $PROP_CMD"
step -v propagate $((PROP_BUDGET + 60)) bin/loadgen propagate -write "http://$API_ADDR" -read "http://$API2_ADDR" \
	-n "$PROP_WRITES" -readers 4 -rate 1000 -wait 5s -budget "${PROP_BUDGET}s" -json "$WORK/propagate.json"
FLEET_SECS=$((SECONDS - FLEET_START))
stop_pid "$API2_PID" "inkwell B"
API2_PID=""
# A alone again, now that B is gone: tells what the second instance costs from what the run's
# drift costs (the read-event inbox and the counters grow as the rows go on).
say "measuring the cached article read on A alone again"
step -v after "$FLEET_LIMIT" bin/loadgen run -c "$CONCURRENCY" -d "$DURATION" -warmup "$WARMUP" \
	-json "$WORK/after.json" "article-A-alone=http://$API_ADDR/api/articles/$SLUG"
AFTER_RPS=$(json_rps "$WORK/after.json" article-A-alone) || AFTER_RPS=""

# 6. Stop the servers: the rest runs without them (and inkwell's own ranking job would compete
#    for the ranking lock).
stop_pid "$API_PID" inkwell
stop_pid "$CEILING_PID" ceiling
API_PID="" CEILING_PID=""

# 7. The loads without HTTP in front. The Go benchmarks make and drop their own databases and Redis
#    keys (internal/testenv); the ranking pass runs over articles bulk-seeded into inkwell_bench.
#    Skipped with BENCH_FLEET_ONLY=1.
OTHER_SECS=0
if ((!FLEET_ONLY)); then
	OTHER_START=$SECONDS
	BUSY_OTHER=$(machine_busy 2)
	say "machine busy before the non-HTTP loads: $BUSY_OTHER of $(nproc) cores"
	gotest_env=(env TEST_DATABASE_URL="$PG_ADMIN_URL" TEST_REDIS_URL="$BENCH_REDIS_URL")
	READ_CMD="go test -run '^\$' -bench BenchmarkReadCountConsumer -benchtime 50000x ./job/"
	say "read-event consumer: $READ_CMD"
	step readevents 240 "${gotest_env[@]}" go -C "$SRC" test -count 1 -run '^$' \
		-bench '^BenchmarkReadCountConsumer$' -benchtime 50000x ./job/
	READ_EPS=$(bench_metric "$WORK/readevents.out" events/s) || die "no events/s in the read-event benchmark's output ($WORK/readevents.out)"
	READ_STMTS=$(bench_metric "$WORK/readevents.out" stmts/1000events) || READ_STMTS="?"

	QUEUE_CMD="go test -run '^\$' -bench 'BenchmarkQueueThroughput/runners=1/' -benchtime 20000x ./job/"
	say "job queue: $QUEUE_CMD"
	step jobqueue 240 "${gotest_env[@]}" go -C "$SRC" test -count 1 -run '^$' \
		-bench '^BenchmarkQueueThroughput$/^runners=1/^concurrency=8$' -benchtime 20000x ./job/
	QUEUE_JPS=$(bench_metric "$WORK/jobqueue.out" jobs/s) || die "no jobs/s in the job-queue benchmark's output ($WORK/jobqueue.out): was BenchmarkQueueThroughput/runners=1/concurrency=8 renamed?"
	QUEUE_JPC=$(bench_metric "$WORK/jobqueue.out" jobs/cycle) || QUEUE_JPC="?"
	QUEUE_MSPC=$(bench_metric "$WORK/jobqueue.out" ms/cycle) || QUEUE_MSPC="?"

	rank_env=(env DATABASE_URL="$BENCH_DATABASE_URL" REDIS_URL="$BENCH_REDIS_URL" INKWELL_REDIS_PREFIX="$REDIS_PREFIX"
		INKWELL_LOG_LEVEL=warn INKWELL_JWT_SECRET="$JWT_SECRET")
	say "ranking pass: bulk-seeding $RANK_ARTICLES articles and $RANK_USERS users into $BENCH_DB"
	t0=$(date +%s.%N)
	step rankseed 300 "${rank_env[@]}" bin/inkwell seed --articles "$RANK_ARTICLES" --users "$RANK_USERS"
	RANK_SEED_S=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	RANK_WINDOW=$(PGCONNECT_TIMEOUT=5 psql -X -q "$BENCH_DATABASE_URL" -tAc "SELECT count(*) FROM articles WHERE status = 'published' AND published_at >= now() - interval '168 hours'" 2>/dev/null) || RANK_WINDOW="?"
	t0=$(date +%s.%N)
	step rank 120 "${rank_env[@]}" bin/inkwell rank
	RANK_WALL_S=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	# "ranking pass: success in 312.5ms, 100 articles in the hot list"
	rank_line=$(grep -m 1 '^ranking pass:' "$WORK/rank.out") || die "inkwell rank printed no 'ranking pass:' line ($(head -c 300 "$WORK/rank.out"))"
	[[ $rank_line =~ ^ranking\ pass:\ success\ in\ ([^,]+),\ ([0-9]+)\ articles ]] || die "the ranking pass did not succeed: $rank_line"
	RANK_S=$(go_seconds "${BASH_REMATCH[1]}") || die "cannot read the duration in: $rank_line"
	RANK_TOP=${BASH_REMATCH[2]}
	OTHER_SECS=$((SECONDS - OTHER_START))
fi

# 7b. The scale section (scripts/bench-scale.sh): its own databases, servers and ceiling.
SCALE_SECS=0
if ((SCALE)); then scale_section; fi
if ((SEARCH)); then search_section; fi
if ((MEDIA)); then media_section; fi
if ((REALTIME)); then realtime_section; fi
if ((REPLICA)); then replica_section; fi

# 8. Report.
fmt_int() { # 12345.6 -> 12,346; anything else (e.g. "?") unchanged
	awk -v v="$1" 'BEGIN {
		if (v !~ /^[0-9]+(\.[0-9]*)?$/) { print v; exit }
		s = sprintf("%.0f", v); n = length(s); out = ""
		for (i = 1; i <= n; i++) { out = out substr(s, i, 1); if (i < n && (n - i) % 3 == 0) out = out "," }
		print out
	}'
}
WALL=$SECONDS
mem_gib=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo 2>/dev/null || echo "?")
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo "?")
pg_ver=$(psql_admin -tAc 'SHOW server_version' 2>/dev/null | awk '{ print $1 }' || echo "?")
redis_ver=$(redis-cli -u "$BENCH_REDIS_URL" info server 2>/dev/null | awk -F: '/^redis_version:/ { print $2 }' | tr -d '\r' || echo "?")
# machine_lines: the measured-on, machine, software, command, wall time and idle check lines.
# shellcheck disable=SC2016 # the backquotes are markdown, not command substitution
machine_lines() {
	printf 'Measured %s on commit `%s`.\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$BUILT_REV"
	printf -- '- Machine: %s cores (`nproc`), %s, %s GiB RAM, %s\n' "$(nproc)" "$cpu_model" "$mem_gib" "$(uname -sr)"
	printf -- '- Software: %s, PostgreSQL %s, Redis %s\n' "$(go version | awk '{ print $3 }')" "$pg_ver" "$redis_ver"
	printf -- '- Command: `%s` (BENCH_CONCURRENCY=%s BENCH_DURATION=%s BENCH_WARMUP=%s BENCH_RANK_ARTICLES=%s BENCH_PROPAGATION_WRITES=%s BENCH_PROPAGATION_BUDGET=%s%s%s)\n' "$COMMAND" "$CONCURRENCY" "$DURATION" "$WARMUP" "$RANK_ARTICLES" "$PROP_WRITES" "$PROP_BUDGET" "${REF:+ BENCH_REF=$REF}" "$FLEET_NOTE"
	printf -- '- Wall time: %s for the whole run (services, builds, seeding, %s of HTTP rows, %s of the two-instance rows, %s of non-HTTP loads, %s of the scale section; clean-up not counted)\n' "$(mmss "$WALL")" "$(mmss "$HTTP_SECS")" "$(mmss "$FLEET_SECS")" "$(mmss "$OTHER_SECS")" "$(mmss "$SCALE_SECS")"
	if ((FLEET_ONLY)); then
		printf -- '- Idle check: %s of %s cores busy in the 2 s before the HTTP rows (all processes; ~0 means a quiet machine)\n' "${BUSY_BEFORE:-?}" "$(nproc)"
	else
		printf -- '- Idle check: %s of %s cores busy in the 2 s before the HTTP rows, %s before the non-HTTP loads (all processes; ~0 means a quiet machine)\n' "${BUSY_BEFORE:-?}" "$(nproc)" "${BUSY_OTHER:-?}"
	fi
}
FLEET_NOTE=""
if ((FLEET_ONLY)); then FLEET_NOTE=" BENCH_FLEET_ONLY=1"; fi
ratio_pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", 100 * a / b }'; }
within_10() { awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN { exit !(a >= 0.9 * c && b >= 0.9 * c) }'; }
# shellcheck disable=SC2016 # the backquotes are markdown, not command substitution
{
	machine_lines
	printf -- '- Setup: instance A (the server of the rows above, %s) and instance B (%s), started alike on one database and one Redis key prefix; no balancer (each is addressed directly)\n\n' "$API_ADDR" "$API2_ADDR"
	printf 'Cached article read on each instance alone (the other idle beside it), closed loop as above:\n\n'
	cat "$WORK/fleet.out"
	verdict="NOT met"
	if within_10 "$A_RPS" "$B_RPS" "$SINGLE_RPS"; then verdict=met; fi
	printf '\n**Per instance: A %s req/s (%s of the single-instance `article` row, %s req/s, measured just before), B %s req/s (%s)** (goal: within 10%%: %s).\n\n' \
		"$(fmt_int "$A_RPS")" "$(ratio_pct "$A_RPS" "$SINGLE_RPS")" "$(fmt_int "$SINGLE_RPS")" "$(fmt_int "$B_RPS")" "$(ratio_pct "$B_RPS" "$SINGLE_RPS")" "$verdict"
	if [[ -n $AFTER_RPS ]]; then
		printf 'Then B was stopped and A measured alone again: **%s req/s** (%s of the row before the fleet); as much of A'"'"'s loss beside B as A alone shows too is the run'"'"'s drift, not the fleet'"'"'s cost.\n\n' \
			"$(fmt_int "$AFTER_RPS")" "$(ratio_pct "$AFTER_RPS" "$SINGLE_RPS")"
	fi
	printf 'Propagation: `%s`. It edits the body of an article of its own through A, %s times one after another; from the moment each edit'"'"'s answer arrives it reads the article from B (on a connection of its own) until the new body shows, and records the time until that read'"'"'s answer (so even a change that is there at once costs one read). Meanwhile 4 readers read the same article from B at 1,000 requests/s in all. An edit not shown within 5 s counts as 5 s; the run stops after %s s however many edits it measured.\n\n' \
		"$PROP_CMD" "$(fmt_int "$PROP_WRITES")" "$PROP_BUDGET"
	cat "$WORK/propagate.out"
} >"$WORK/fleet.md"
if ((!FLEET_ONLY)); then
	# shellcheck disable=SC2016 # the backquotes are markdown, not command substitution
	{
		machine_lines
		printf -- '- Data: 20 users, 200 articles (250–450-byte bodies, 2–4 of 8 tags), 60 follows, 200 favorites, all through the API; anonymous reads; the article, likes and comments rows use `%s`; %s writer users, one per connection, send the likes and comments\n\n' "$SLUG" "$CONCURRENCY"
		cat "$WORK/http.out"
		cat "$WORK/exact.md"
		printf '\nWithout HTTP in front, measured after the HTTP rows with both servers stopped, one after another:\n\n'
		printf '| Case | Unit | Value | What ran | Command |\n'
		printf '|---|---|--:|---|---|\n'
		printf '| read events | events/s | %s | one `read-count` consumer draining 50,000 read events from the Redis stream in batches of 1,000 (one SQL statement and one Redis script per batch, then `XACK`); %s SQL statements per 1,000 events | `%s` |\n' \
			"$(fmt_int "$READ_EPS")" "$READ_STMTS" "$READ_CMD"
		printf '| job queue | jobs/s | %s | 20,000 no-op jobs claimed and acknowledged by 1 runner × 8 slots against PostgreSQL; %s jobs and %s ms per ack-and-claim cycle | `%s` |\n' \
			"$(fmt_int "$QUEUE_JPS")" "$QUEUE_JPC" "$QUEUE_MSPC" "$QUEUE_CMD"
		printf '| ranking pass | s | %s | one hot-list pass over %s published articles bulk-seeded over 14 days (%s inside the 7-day cutoff), %s users, batches of 10,000, top %s; the whole `inkwell rank` process took %s s, the seed %s s | `inkwell seed --articles %s --users %s && inkwell rank` |\n' \
			"$RANK_S" "$(fmt_int "$RANK_ARTICLES")" "$(fmt_int "$RANK_WINDOW")" "$(fmt_int "$RANK_USERS")" "$RANK_TOP" "$RANK_WALL_S" "$RANK_SEED_S" "$RANK_ARTICLES" "$RANK_USERS"
	} >"$WORK/results.md"
fi
echo
if ((!FLEET_ONLY)); then
	cat "$WORK/results.md"
	echo
	cat "$WORK/wrk.md"
fi
cat "$WORK/fleet.md"
if ((SCALE)); then
	echo
	cat "$WORK/scale.md"
fi
if ((SEARCH)); then
	echo
	cat "$WORK/search.md"
fi
if ((MEDIA)); then
	echo
	cat "$WORK/media.md"
fi
if ((REALTIME)); then
	echo
	cat "$WORK/realtime.md"
fi
if ((REPLICA)); then
	echo
	cat "$WORK/replica.md"
fi
if [[ $WRITE == 1 ]]; then
	if ((!FLEET_ONLY)); then
		write_section results "$WORK/results.md"
		{
			wrk_header
			cat "$WORK/wrk.md"
		} >"$WORK/wrk-full.md"
		write_section wrk-results "$WORK/wrk-full.md"
	fi
	write_section fleet-results "$WORK/fleet.md"
	if ((SCALE)); then write_section scale-results "$WORK/scale.md"; fi
	if ((SEARCH)); then write_section search-results "$WORK/search.md"; fi
	if ((MEDIA)); then write_section media-results "$WORK/media.md"; fi
	if ((REALTIME)); then write_section realtime-results "$WORK/realtime.md"; fi
	if ((REPLICA)); then write_section replica-results "$WORK/replica.md"; fi
fi
say "done in $(mmss "$SECONDS")"
