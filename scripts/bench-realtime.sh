# shellcheck shell=bash
# The "realtime" section of scripts/bench.sh (issue #33), sourced by it: live notification streams
# and webhook deliveries. It uses bench.sh's helpers and settings (step, say, die, bench_metric,
# machine_busy, SRC, WORK, COMMAND, BUILT_REV, ...). Both measurements make and drop their own
# databases (the test harness) and Redis key prefixes; no server of bench.sh's is running.
#   1. live notification streams (e2e TestNotificationStreamBench, what make bench-sse runs): one
#      instance, a process of the built tree's binary; the RSS of BENCH_SSE_STREAMS idle streams
#      (10,000: 5 per user, the per-user cap) before and after, then publish-to-receive at 1,000
#      streams (one per user): 20 rounds of one notification per user written to PostgreSQL and
#      announced on Redis as a follower fan-out's commit announces it (with the notifications),
#      each event timed from the publish until its client has read its id: line;
#   2. webhook deliveries (job BenchmarkWebhookDeliveries): REALTIME_DELIVERIES signed deliveries
#      over 64 endpoints to a local receiver through the PostgreSQL queue and the delivery job;
#      deliveries/s, and the CPU (user+system, getrusage) of the benchmark's process per delivery:
#      the runner, the job (decrypt, sign, POST, record, enqueue the next), the HTTP client and the
#      receiver; PostgreSQL's own CPU is not in it.

REALTIME_STREAMS=${BENCH_SSE_STREAMS:-10000}
REALTIME_DELIVERIES=20000

realtime_check_settings() {
	if ! [[ $REALTIME_STREAMS =~ ^[0-9]+$ ]] || ((REALTIME_STREAMS < 1000 || REALTIME_STREAMS > 50000)); then
		die "BENCH_SSE_STREAMS must be 1000..50000, not '$REALTIME_STREAMS'"
	fi
}

realtime_section() {
	local sse_cmd wh_cmd
	say "realtime: machine busy before the streams: $(machine_busy 2) of $(nproc) cores"
	REALTIME_BUSY_SSE=$(machine_busy 2)
	sse_cmd="INKWELL_BENCH_SSE=1 BENCH_SSE_STREAMS=$REALTIME_STREAMS go test -count=1 -v -timeout 20m -run '^TestNotificationStreamBench\$' ./e2e"
	step -v realtime-sse 1200 env INKWELL_BENCH_SSE=1 BENCH_SSE_STREAMS="$REALTIME_STREAMS" \
		go -C "$SRC" test -count=1 -v -timeout 20m -run '^TestNotificationStreamBench$' ./e2e
	grep -q 'publish-to-receive at' "$WORK/realtime-sse.out" || die "the stream bench printed no latency line (see $WORK/realtime-sse.out)"
	REALTIME_BUSY_WH=$(machine_busy 2)
	wh_cmd="go test -run '^\$' -bench BenchmarkWebhookDeliveries -benchtime ${REALTIME_DELIVERIES}x ./job/"
	step -v realtime-webhooks 600 go -C "$SRC" test -run '^$' -bench BenchmarkWebhookDeliveries -benchtime "${REALTIME_DELIVERIES}x" ./job/
	realtime_report "$sse_cmd" "$wh_cmd" >"$WORK/realtime.md"
}

# realtime_int 12345.6 -> 12,346 (anything else unchanged).
realtime_int() {
	awk -v v="$1" 'BEGIN {
		if (v !~ /^[0-9]+(\.[0-9]*)?$/) { print v; exit }
		s = sprintf("%.0f", v); n = length(s); out = ""
		for (i = 1; i <= n; i++) { out = out substr(s, i, 1); if (i < n && (n - i) % 3 == 0) out = out "," }
		print out
	}'
}

# realtime_field REGEX: the first capture of REGEX (sed -E) on the stream bench's lines.
realtime_field() { sed -nE "s/.*$1.*/\\1/p" "$WORK/realtime-sse.out" | head -n 1; }

# realtime_report SSE_CMD WEBHOOK_CMD: the section's markdown, from the two steps' outputs.
# shellcheck disable=SC2016 # the backquotes are markdown, not command substitution
realtime_report() {
	local sse_cmd_doc=$1 wh_cmd_doc=$2 rss0 rss1 per opened p50 p90 p99 pmax events dps cpu verdict_sse verdict_wh cpu_model
	rss0=$(realtime_field 'RSS: ([0-9.]+) MiB before')
	rss1=$(realtime_field 'MiB before, ([0-9.]+) MiB with')
	per=$(realtime_field 'streams: ([0-9.]+) KiB per stream')
	opened=$(realtime_field '[0-9]+ streams opened in ([^ ]+)')
	events=$(realtime_field 'streams, [0-9]+ rounds \(([0-9]+) events\)')
	p50=$(realtime_field ': p50 ([^,]+),')
	p90=$(realtime_field ', p90 ([^,]+),')
	p99=$(realtime_field ', p99 ([^,]+),')
	pmax=$(realtime_field ', max ([^ ]+)$')
	dps=$(bench_metric "$WORK/realtime-webhooks.out" deliveries/s) || dps="?"
	cpu=$(bench_metric "$WORK/realtime-webhooks.out" cpu-µs/delivery) || cpu="?"
	verdict_sse=$(awk -v d="$(go_seconds "$p99" 2>/dev/null || echo 999)" 'BEGIN { print (d <= 0.050 ? "met" : "NOT met") }')
	verdict_wh=$(awk -v r="$dps" 'BEGIN { print (r + 0 >= 1000 ? "met" : "NOT met") }')
	cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo "?")
	printf 'Measured by `%s` at %s, %s UTC, on this machine: %s cores (`nproc`), %s, %s; PostgreSQL and Redis local; %s and %s of %s cores busy in the 2 s before the two measurements (all processes; ~0 means a quiet machine; the clients, the server, PostgreSQL and Redis share the cores).\n\n' \
		"$COMMAND" "$BUILT_REV" "$(date -u '+%Y-%m-%d %H:%M')" "$(nproc)" "$cpu_model" "$(uname -sr)" "$REALTIME_BUSY_SSE" "$REALTIME_BUSY_WH" "$(nproc)"
	printf '| Measure | Result | Command |\n|---|---|---|\n'
	printf '| %s idle streams on one instance: RSS before → after | %s MiB → %s MiB (%s KiB per stream; opened in %s, 64 at a time) | `%s` |\n' \
		"$(realtime_int "$REALTIME_STREAMS")" "$rss0" "$rss1" "$per" "$opened" "$sse_cmd_doc"
	printf '| publish-to-receive at 1,000 streams (%s events) | p50 %s, p90 %s, **p99 %s**, max %s | (the same run) |\n' \
		"$(realtime_int "$events")" "$p50" "$p90" "$p99" "$pmax"
	printf '| webhook deliveries to a local receiver (%s over 64 endpoints) | **%s deliveries/s**, %s µs of the process'"'"'s CPU per delivery | `%s` |\n' \
		"$(realtime_int "$REALTIME_DELIVERIES")" "$(realtime_int "$dps")" "$cpu" "$wh_cmd_doc"
	printf '\n**Publish-to-receive p99 at 1,000 streams: %s** (goal: <= 50 ms: %s). **Webhook deliveries: %s/s** (goal: >= 1,000/s: %s).\n' \
		"$p99" "$verdict_sse" "$(realtime_int "$dps")" "$verdict_wh"
	printf '\nThe CPU per delivery is the benchmark process'"'"'s user+system time (getrusage) over the measured window divided by the deliveries: the queue'"'"'s runner, the delivery job (decrypt the secret, sign, POST, record the attempt, enqueue the endpoint'"'"'s next), the HTTP client and the local receiver; PostgreSQL'"'"'s own CPU is not in it.\n'
}
