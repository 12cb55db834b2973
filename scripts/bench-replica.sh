# shellcheck shell=bash
# The "replica" section of scripts/bench.sh (issue #34), sourced by it: what one streaming read
# replica takes off the primary, and what routing costs. It uses bench.sh's helpers and settings
# (step, say, die, wait_http, stop_pid, machine_busy, WORK, CONCURRENCY, ...).
#
# It runs on the replica pair of scripts/services.sh replica (a primary on 5433 and its streaming
# replica on 5434, replaying 500 ms behind as the tests keep it; started when absent), in a
# database of its own (inkwell_bench_replica, dropped first if it exists and again at the end),
# with two servers on it, each with a Redis key prefix of its own:
#   A on $API_ADDR: no replica, every read on the primary;
#   B on $API2_ADDR: DATABASE_REPLICA_URLS set to the replica (INKWELL_REPLICA_MAX_LAG 1s).
# After seeding through A and waiting until the replica has replayed it, loadgen measures the same
# reads on A and on B one after another, three rounds: the first page of the list (cached), the
# same page signed in, and the third page (not cached: every request reads PostgreSQL). It
# reports each row's req/s (median of the rounds and their spread), the CPU per request of the
# primary's and the replica's PostgreSQL processes (each cluster's postmaster and its children),
# the share of B's routed reads the replica served (B's inkwell_db_routed_reads_total), and the
# routing overhead: 1 - B/A on the list row (goal: <= 5%).

REPLICA_DBS=() # created by this run: replica_cleanup drops them
REPLICA_DB=inkwell_bench_replica
REPLICA_ROUNDS=3
REPLICA_PRIMARY_ADMIN="postgres://postgres@127.0.0.1:${REPLICA_PRIMARY_PORT:-5433}/postgres?sslmode=disable"
REPLICA_ADMIN="postgres://postgres@127.0.0.1:${REPLICA_PORT:-5434}/postgres?sslmode=disable"

replica_psql() { # replica_psql URL SQL
	PGCONNECT_TIMEOUT=5 PGOPTIONS='-c client_min_messages=warning' psql -X -q -tA -v ON_ERROR_STOP=1 "$1" -c "$2"
}

# replica_cleanup: bench.sh's clean-up calls it; drops what this section created.
replica_cleanup() {
	local db
	for db in "${REPLICA_DBS[@]}"; do
		replica_psql "$REPLICA_PRIMARY_ADMIN" "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 ||
			say "could not drop database $db on the replica pair's primary"
	done
}

# replica_postmaster ADMIN_URL: the pid of the postmaster of the cluster at ADMIN_URL.
replica_postmaster() {
	local dir pid
	dir=$(replica_psql "$1" "SELECT current_setting('data_directory')") || return 1
	pid=$(head -n 1 "$dir/postmaster.pid" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

# replica_routed METRICS_URL TARGET: B's inkwell_db_routed_reads_total{target="TARGET"} (0 if absent).
replica_routed() {
	curl -sf "$1" | awk -v t="target=\"$2\"" '/^inkwell_db_routed_reads_total\{/ && index($0, t) { v = $NF } END { print v + 0 }'
}

replica_section() {
	local db_url replica_url a_pid b_pid metrics_addr pm_primary pm_replica lsn i round targets before_r before_p before_f
	# 500 ms behind, as make test keeps it: a bench run never changes what a test run expects.
	step replica-pair 300 env REPLICA_DELAY=500ms scripts/services.sh replica
	replica_psql "$REPLICA_PRIMARY_ADMIN" "DROP DATABASE IF EXISTS $REPLICA_DB WITH (FORCE)" >/dev/null
	replica_psql "$REPLICA_PRIMARY_ADMIN" "CREATE DATABASE $REPLICA_DB" >/dev/null
	REPLICA_DBS+=("$REPLICA_DB")
	db_url="postgres://postgres@127.0.0.1:${REPLICA_PRIMARY_PORT:-5433}/$REPLICA_DB?sslmode=disable"
	replica_url="postgres://postgres@127.0.0.1:${REPLICA_PORT:-5434}/$REPLICA_DB?sslmode=disable"
	pm_primary=$(replica_postmaster "$REPLICA_PRIMARY_ADMIN") || die "cannot find the replica pair's primary postmaster (its data directory must be readable)"
	pm_replica=$(replica_postmaster "$REPLICA_ADMIN") || die "cannot find the replica's postmaster (its data directory must be readable)"
	metrics_addr=127.0.0.1:$((PORT + 20))
	say "replica: starting A on $API_ADDR (primary only) and B on $API2_ADDR (with the replica), database $REPLICA_DB"
	replica_serve() { # replica_serve ADDR PREFIX LOG [VAR=VALUE...]
		local addr=$1 prefix=$2 log=$3
		shift 3
		env INKWELL_ADDR="$addr" DATABASE_URL="$db_url" REDIS_URL="$BENCH_REDIS_URL" \
			INKWELL_REDIS_PREFIX="$prefix" INKWELL_MIGRATE_ON_START=true INKWELL_LOG_LEVEL=warn \
			INKWELL_JWT_SECRET="$JWT_SECRET" INKWELL_JWT_LIFETIME=1h INKWELL_RATE_WRITES=0 INKWELL_RATE_AUTH=0 \
			INKWELL_RATE_SEARCH=0 INKWELL_PPROF_ADDR= INKWELL_METRICS_ADDR= INKWELL_DRAIN_DELAY=0 "$@" \
			bin/inkwell serve >"$WORK/$log.log" 2>&1 &
	}
	replica_serve "$API_ADDR" "${REDIS_PREFIX}replica-a:" inkwell-replica-a
	a_pid=$!
	API_PID=$a_pid # bench.sh's clean-up stops them if the run fails
	wait_http 30 "http://$API_ADDR/healthz" "$a_pid" "inkwell A"
	replica_serve "$API2_ADDR" "${REDIS_PREFIX}replica-b:" inkwell-replica-b \
		DATABASE_REPLICA_URLS="$replica_url" INKWELL_REPLICA_MAX_LAG=1s INKWELL_METRICS_ADDR="$metrics_addr"
	b_pid=$!
	API2_PID=$b_pid
	wait_http 30 "http://$API2_ADDR/healthz" "$b_pid" "inkwell B"
	step replica-seed 180 bin/loadgen seed -base "http://$API_ADDR" -users 20 -articles 200 -tags 8 -workers 4 \
		-writers "$CONCURRENCY" -tokens "$WORK/replica-tokens"
	lsn=$(replica_psql "$db_url" "SELECT pg_current_wal_insert_lsn()")
	for ((i = 0; i < 150; i++)); do
		[[ $(replica_psql "$replica_url" "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn") == t ]] && break
		sleep 0.2
	done
	((i < 150)) || die "the replica did not replay the seed within 30 s"
	for addr in "$API_ADDR" "$API2_ADDR"; do
		for _ in 1 2 3; do
			curl -sf -o /dev/null "http://$addr/api/articles?limit=20" || die "cannot read the list on $addr"
			curl -sf -o /dev/null "http://$addr/api/articles?limit=20&offset=40" || die "cannot read the third page on $addr"
		done
	done
	targets=(
		"list-A=http://$API_ADDR/api/articles?limit=20"
		"list-B=http://$API2_ADDR/api/articles?limit=20"
		"signed-A=http://$API_ADDR/api/articles?limit=20"
		"signed-B=http://$API2_ADDR/api/articles?limit=20"
		"page3-A=http://$API_ADDR/api/articles?limit=20&offset=40"
		"page3-B=http://$API2_ADDR/api/articles?limit=20&offset=40"
	)
	REPLICA_BUSY=$(machine_busy 2)
	say "replica: machine busy before measuring: $REPLICA_BUSY of $(nproc) cores"
	before_r=$(replica_routed "http://$metrics_addr/metrics" replica)
	before_p=$(replica_routed "http://$metrics_addr/metrics" primary)
	before_f=$(replica_routed "http://$metrics_addr/metrics" fallback)
	for ((round = 1; round <= REPLICA_ROUNDS; round++)); do
		step -v "replica-round-$round" 600 bin/loadgen run -c "$CONCURRENCY" -d "$DURATION" -warmup "$WARMUP" -ref list-A \
			-tokens "$WORK/replica-tokens" -signed signed-A,signed-B -json "$WORK/replica-$round.json" \
			-cpu "inkwell-A=$a_pid" -cpu "inkwell-B=$b_pid" -cpu "primary=tree:$pm_primary" -cpu "replica=tree:$pm_replica" \
			"${targets[@]}"
	done
	REPLICA_ROUTED_R=$(($(replica_routed "http://$metrics_addr/metrics" replica) - before_r))
	REPLICA_ROUTED_P=$(($(replica_routed "http://$metrics_addr/metrics" primary) - before_p))
	REPLICA_ROUTED_F=$(($(replica_routed "http://$metrics_addr/metrics" fallback) - before_f))
	REPLICA_DELAY_NOW=$(replica_psql "$REPLICA_ADMIN" "SHOW recovery_min_apply_delay")
	stop_pid "$a_pid" "inkwell A"
	stop_pid "$b_pid" "inkwell B"
	API_PID="" API2_PID=""
	replica_report >"$WORK/replica.md"
}

# replica_cpu FILE ROW LABEL: the CPU µs per request loadgen recorded for LABEL on ROW.
replica_cpu() {
	awk -v want="$2" -v label="\"$3\":" '
		/"name":/ { n = $2; gsub(/[",]/, "", n) }
		/"cpuMicrosPerRequest":/ { inmap = 1; next }
		inmap && /}/ { inmap = 0 }
		inmap && n == want && $1 == label { v = $2; gsub(/,/, "", v); print v; exit }' "$1"
}

# replica_stat ROW FIELD KIND: over the rounds, the median (KIND=median), or "min – max" (range)
# of ROW's FIELD (rps, or cpu:LABEL).
replica_stat() {
	local round v vals=()
	for ((round = 1; round <= REPLICA_ROUNDS; round++)); do
		if [[ $2 == cpu:* ]]; then
			v=$(replica_cpu "$WORK/replica-$round.json" "$1" "${2#cpu:}")
		else
			v=$(awk -v want="$1" -v field="\"$2\":" '/"name":/ { n = $2; gsub(/[",]/, "", n) } $1 == field && n == want { v = $2; gsub(/,/, "", v); print v; exit }' "$WORK/replica-$round.json")
		fi
		vals+=("${v:-0}")
	done
	printf '%s\n' "${vals[@]}" | sort -g | awk -v kind="$3" -v digits="$([[ $2 == rps ]] && echo 0 || echo 1)" '{ v[NR] = $1 } END {
		if (kind == "median") printf "%." digits "f", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)
		else printf "%.0f – %.0f", v[1], v[NR] }'
}

# replica_report: the section's markdown.
# shellcheck disable=SC2016 # the backquotes are markdown, not command substitution
replica_report() {
	local row a b overhead verdict share routed cpu_model
	cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo "?")
	printf 'Measured by `%s` at %s, %s UTC, on this machine: %s cores (`nproc`), %s, %s; PostgreSQL (primary and streaming replica, `recovery_min_apply_delay` %s), Redis, the two servers and loadgen all share the cores; %s of %s cores busy in the 2 s before (~0 means a quiet machine). %s rounds, %s connections, %s + %s per row; req/s is the median of the rounds (their range beside it); CPU is µs per request, the median of the rounds, from /proc (each PostgreSQL cluster: its postmaster and every process it forked).\n\n' \
		"$COMMAND" "$BUILT_REV" "$(date -u '+%Y-%m-%d %H:%M')" "$(nproc)" "$cpu_model" "$(uname -sr)" "$REPLICA_DELAY_NOW" "$REPLICA_BUSY" "$(nproc)" \
		"$REPLICA_ROUNDS" "$CONCURRENCY" "$WARMUP" "$DURATION"
	printf '| Row | Server | req/s | range | inkwell CPU | primary CPU | replica CPU |\n|---|---|--:|--:|--:|--:|--:|\n'
	for row in list signed page3; do
		for side in A B; do
			local what="A: primary only" server_label=inkwell-A
			if [[ $side == B ]]; then what="B: with the replica" server_label=inkwell-B; fi
			printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$(replica_row_name "$row")" "$what" \
				"$(replica_stat "$row-$side" rps median)" "$(replica_stat "$row-$side" rps range)" \
				"$(replica_stat "$row-$side" "cpu:$server_label" median)" \
				"$(replica_stat "$row-$side" cpu:primary median)" "$(replica_stat "$row-$side" cpu:replica median)"
		done
	done
	a=$(replica_stat list-A rps median)
	b=$(replica_stat list-B rps median)
	overhead=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a <= 0) print "?"; else printf "%.1f", 100 * (1 - b / a) }')
	verdict=$(awk -v o="$overhead" 'BEGIN { print (o != "?" && o <= 5 ? "met" : "NOT met") }')
	routed=$((REPLICA_ROUTED_R + REPLICA_ROUTED_P + REPLICA_ROUTED_F))
	share=$(awk -v r="$REPLICA_ROUTED_R" -v n="$routed" 'BEGIN { if (n == 0) print "?"; else printf "%.1f", 100 * r / n }')
	printf '\nB routed %s reads while the rows ran (`inkwell_db_routed_reads_total`): **%s%% to the replica** (%s), %s to the primary (no replica had replayed enough, or a signed-in reader'"'"'s mark could not be looked up), %s fallbacks (a replica failed the read).\n' \
		"$routed" "$share" "$REPLICA_ROUTED_R" "$REPLICA_ROUTED_P" "$REPLICA_ROUTED_F"
	printf '\n**Routing overhead on the list row: %s%%** (1 − B/A of the medians; goal: <= 5%%: %s). A negative figure means B was faster: the rows run one after another, and a few percent either way is the machine'"'"'s noise.\n' \
		"$overhead" "$verdict"
}

replica_row_name() {
	case $1 in
	list) printf '`GET /api/articles?limit=20` (cached first page)' ;;
	signed) printf 'the same, signed in' ;;
	page3) printf '`GET /api/articles?limit=20&offset=40` (third page: PostgreSQL)' ;;
	esac
}
