# shellcheck shell=bash
# The wrk rows of scripts/bench.sh (issue #35), sourced by it: the hot reads next to the ceiling,
# measured with wrk (C, cheaper per request than loadgen, so more of the 2 cores is left to the
# server). It uses bench.sh's helpers and state (step, say, die, WORK, SLUG, API_ADDR,
# CEILING_ADDR, the writers' tokens in $WORK/tokens) and needs the seeded server and the ceiling
# running.
#
# Rows, each `wrk -t2 -c64` with a warm-up before its measured window, in rounds (the rows one
# after another in every round, so drift on the machine spreads over all of them):
#   ceiling         GET /ceiling (bare gin)
#   article         GET /api/articles/:slug, anonymous, cache warm
#   article-signed  the same, signed in: each wrk thread its own user (a writer's token)
#   list            GET /api/articles?limit=20 (the global first page)
#   tags            GET /api/tags
#   feed            GET /feeds/articles.atom
#   sitemap-index   GET /sitemap.xml
# It reports each row's median req/s over the rounds and their range, the median round's p50 and
# p99, and the ratios the issue sets goals for, each computed per round (median and range).

WRK_ROUNDS=${BENCH_WRK_ROUNDS:-3}
WRK_ROWS=(ceiling article article-signed list tags feed sitemap-index)

# wrk_url ROW: what ROW requests.
wrk_url() {
	case $1 in
	ceiling) echo "http://$CEILING_ADDR/ceiling" ;;
	article | article-signed) echo "http://$API_ADDR/api/articles/$SLUG" ;;
	list) echo "http://$API_ADDR/api/articles?limit=20" ;;
	tags) echo "http://$API_ADDR/api/tags" ;;
	feed) echo "http://$API_ADDR/feeds/articles.atom" ;;
	sitemap-index) echo "http://$API_ADDR/sitemap.xml" ;;
	*) die "wrk: no row $1" ;;
	esac
}

# wrk_signed_script: a wrk script giving each thread its own writer's token. The header is set once
# per thread (init), so wrk builds the request once, as for the anonymous rows: no Lua per request.
wrk_signed_script() {
	[[ -s $WORK/tokens ]] || die "wrk: no writers' tokens in $WORK/tokens for the signed-in row"
	cat >"$WORK/signed.lua" <<EOF
local tokens = {}
for line in io.lines("$WORK/tokens") do tokens[#tokens + 1] = line end
local next_thread = 0
function setup(thread)
  next_thread = next_thread + 1
  thread:set("token", tokens[(next_thread - 1) % #tokens + 1])
end
function init(args)
  wrk.headers["Authorization"] = "Token " .. token
end
EOF
}

# wrk_field FILE WHAT: req/s (rps) or a latency percentile (50%, 99%) from wrk's output.
wrk_field() {
	case $2 in
	rps) awk '/^Requests\/sec:/ { print $2 }' "$1" ;;
	*) awk -v p="$2" '$1 == p { print $2 }' "$1" ;;
	esac
}

# wrk_stats V...: "median min max" of the values.
wrk_stats() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

# wrk_rows: measure every row WRK_ROUNDS times and write the table to $WORK/wrk.md.
wrk_rows() {
	local secs warm round row url args rps median lo hi i ratio goal verdict
	[[ $WRK_ROUNDS =~ ^[1-9]$ ]] || die "BENCH_WRK_ROUNDS must be 1..9, not '$WRK_ROUNDS'"
	secs=$(awk -v d="$(dur_s "$DURATION")" 'BEGIN { s = int(d + 0.999); print (s < 1 ? 1 : s) }')
	warm=$(awk -v d="$(dur_s "$WARMUP")" 'BEGIN { s = int(d + 0.999); print (s < 1 ? 1 : s) }')
	wrk_signed_script
	WRK_CMD="wrk -t2 -c64 -d${secs}s --latency"
	say "wrk rows: $WRK_CMD, ${warm}s warm-up each, $WRK_ROUNDS rounds of ${WRK_ROWS[*]}"
	for ((round = 1; round <= WRK_ROUNDS; round++)); do
		for row in "${WRK_ROWS[@]}"; do
			url=$(wrk_url "$row")
			args=()
			if [[ $row == article-signed ]]; then args=(-s "$WORK/signed.lua"); fi
			step "wrk-warm-$row-$round" 60 wrk -t2 -c64 -d"${warm}s" "${args[@]}" "$url"
			step "wrk-$row-$round" $((secs + 60)) wrk -t2 -c64 -d"${secs}s" --latency "${args[@]}" "$url"
			if grep -Eq 'Non-2xx|Socket errors' "$WORK/wrk-$row-$round.out"; then
				die "wrk row $row: $(grep -E 'Non-2xx|Socket errors' "$WORK/wrk-$row-$round.out")"
			fi
			wrk_field "$WORK/wrk-$row-$round.out" rps >"$WORK/wrk-$row-$round.rps"
			[[ -s $WORK/wrk-$row-$round.rps ]] || die "wrk row $row printed no Requests/sec"
		done
		say "wrk round $round of $WRK_ROUNDS done"
	done
	{
		printf 'Through wrk (`%s`, %s s warm-up before each window), %s rounds of the rows one after another; the signed-in row sends each wrk thread as its own user. req/s is the median round (range over the rounds); p50 and p99 are of that round.\n\n' \
			"$WRK_CMD" "$warm" "$WRK_ROUNDS"
		printf '| Row (wrk) | Request | req/s | range | p50 | p99 | vs ceiling |\n|---|---|--:|--:|--:|--:|--:|\n'
		for row in "${WRK_ROWS[@]}"; do
			rps=()
			for ((i = 1; i <= WRK_ROUNDS; i++)); do rps+=("$(cat "$WORK/wrk-$row-$i.rps")"); done
			read -r median lo hi < <(wrk_stats "${rps[@]}")
			for ((i = 1; i <= WRK_ROUNDS; i++)); do
				if [[ $(cat "$WORK/wrk-$row-$i.rps") == "$median" ]]; then break; fi
			done
			ratio=$(wrk_ratio_stats "$row" ceiling | cut -d' ' -f1)
			printf '| %s | `GET %s` | %s | %s–%s | %s | %s | %s |\n' "$row" "$(wrk_url "$row" | sed 's|^http://[^/]*||')" \
				"$(printf '%.0f' "$median")" "$(printf '%.0f' "$lo")" "$(printf '%.0f' "$hi")" \
				"$(wrk_field "$WORK/wrk-$row-$i.out" 50%)" "$(wrk_field "$WORK/wrk-$row-$i.out" 99%)" "$ratio"
		done
		printf '\nRatios, each computed within a round (median, and the range over the rounds), against the goals of issue #35:\n\n'
		printf '| Ratio | median | range | goal | |\n|---|--:|--:|--:|---|\n'
		for goal in article/ceiling=0.85 article-signed/article=0.8 list/ceiling=0.5 tags/ceiling=0.8; do
			read -r median lo hi < <(wrk_ratio_stats "${goal%%/*}" "$(echo "${goal#*/}" | cut -d= -f1)")
			verdict=$(awk -v m="$median" -v g="${goal#*=}" 'BEGIN { print (m >= g ? "met" : "not met") }')
			printf '| %s | %s | %s–%s | ≥ %s | %s |\n' "${goal%%=*}" "$median" "$lo" "$hi" "${goal#*=}" "$verdict"
		done
	} >"$WORK/wrk.md"
}

# wrk_ratio_stats ROW BASE: "median min max" over the rounds of ROW's req/s / BASE's, same round.
wrk_ratio_stats() {
	local i ratios=()
	for ((i = 1; i <= WRK_ROUNDS; i++)); do
		ratios+=("$(awk -v a="$(cat "$WORK/wrk-$1-$i.rps")" -v b="$(cat "$WORK/wrk-$2-$i.rps")" 'BEGIN { printf "%.2f", a / b }')")
	done
	wrk_stats "${ratios[@]}"
}

# wrk_header: when, on what and how the wrk rows were measured.
# shellcheck disable=SC2016 # the backquotes are markdown, not command substitution
wrk_header() {
	local cpu_model mem_gib
	cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo "?")
	mem_gib=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo 2>/dev/null || echo "?")
	printf 'Measured %s on commit `%s`.\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$BUILT_REV"
	printf -- '- Machine: %s cores (`nproc`), %s, %s GiB RAM, %s; wrk, the server, the ceiling, PostgreSQL and Redis all on it\n' "$(nproc)" "$cpu_model" "$mem_gib" "$(uname -sr)"
	printf -- '- Command: `%s` (BENCH_DURATION=%s BENCH_WARMUP=%s BENCH_WRK_ROUNDS=%s%s)\n' "$COMMAND" "$DURATION" "$WARMUP" "$WRK_ROUNDS" "${REF:+ BENCH_REF=$REF}"
	printf -- '- Data: the seeded database of the rows above (20 users, 200 articles over 8 tags); idle check: %s of %s cores busy in the 2 s before\n\n' "${BUSY_BEFORE:-?}" "$(nproc)"
}
