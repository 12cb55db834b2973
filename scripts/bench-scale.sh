# shellcheck shell=bash
# The "scale" section of scripts/bench.sh (issue #14), sourced by it: the same list rows on a small
# and a large database, each bulk-seeded with `inkwell seed` (COPY), measured in one run next to
# the bare-gin ceiling, then compared by `loadgen scale` (ratios, PASS/FAIL goals). It uses
# bench.sh's helpers and settings (step, say, die, psql_admin, wait_http, stop_pid, WORK, ...).
#
# Each size gets a database of its own, inkwell_bench_<size> (dropped first if it exists, dropped
# again by bench.sh's clean-up), 1,000 users, and one reader, benchreader, who follows 500 of them
# and favorites 200 articles. One server at a time (127.0.0.1:18080, its own Redis key prefix per
# size), fresh for each size, so its memory after the loads can be compared (item 7).

SCALE_SMALL=${BENCH_SCALE_SMALL:-1000}
SCALE_LARGE=${BENCH_SCALE_ARTICLES:-1000000}
SCALE_DURATION=${BENCH_SCALE_DURATION:-10s}
SCALE_WARMUP=${BENCH_SCALE_WARMUP:-2s}
SCALE_USERS=1000
SCALE_FOLLOWS=500
SCALE_FAVORITES=200
SCALE_READER=benchreader
SCALE_PAGE=50
SCALE_TAG=tag12 # inkwell seed gives each article one of tag0..tag19
SCALE_DBS=()    # created by this run: bench.sh's clean-up drops them

scale_check_settings() {
	if ! [[ $SCALE_SMALL =~ ^[0-9]+$ ]] || ((SCALE_SMALL < 1000 || SCALE_SMALL > 100000)); then
		die "BENCH_SCALE_SMALL must be 1000..100000 (page $SCALE_PAGE must exist), not '$SCALE_SMALL'"
	fi
	if ! [[ $SCALE_LARGE =~ ^[0-9]+$ ]] || ((SCALE_LARGE <= SCALE_SMALL || SCALE_LARGE > 2000000)); then
		die "BENCH_SCALE_ARTICLES must be more than BENCH_SCALE_SMALL ($SCALE_SMALL) and at most 2000000, not '$SCALE_LARGE'"
	fi
	dur_ok "$SCALE_DURATION" || die "BENCH_SCALE_DURATION must look like 5s or 500ms, not '$SCALE_DURATION'"
	dur_ok "$SCALE_WARMUP" || die "BENCH_SCALE_WARMUP must look like 1s or 500ms, not '$SCALE_WARMUP'"
}

# size_label N: 1000 -> 1k, 1000000 -> 1M, 20000 -> 20k, 1500 -> 1500.
size_label() {
	if (($1 % 1000000 == 0)); then
		echo "$(($1 / 1000000))M"
	elif (($1 % 1000 == 0)); then
		echo "$(($1 / 1000))k"
	else
		echo "$1"
	fi
}

# scale_env LABEL: SCALE_ENV becomes the environment of inkwell's commands on the size's database.
scale_env() {
	SCALE_ENV=(env DATABASE_URL="postgres://postgres@127.0.0.1:5432/inkwell_bench_${1,,}?sslmode=disable"
		REDIS_URL="$BENCH_REDIS_URL" INKWELL_REDIS_PREFIX="${REDIS_PREFIX}scale-$1:" INKWELL_LOG_LEVEL=warn
		INKWELL_JWT_SECRET="$JWT_SECRET")
}

# scale_seed N: create, migrate and bulk-seed inkwell_bench_<label of N>; the seconds it took go to
# $WORK/seed-<label>.secs.
scale_seed() {
	local n=$1 label db t0
	label=$(size_label "$n")
	db=inkwell_bench_${label,,}
	psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
	psql_admin -c "CREATE DATABASE $db" >/dev/null
	SCALE_DBS+=("$db")
	scale_env "$label"
	step "migrate-$label" 120 "${SCALE_ENV[@]}" bin/inkwell migrate up
	say "scale: seeding $db ($n articles, $SCALE_USERS users, reader $SCALE_READER following $SCALE_FOLLOWS, $SCALE_FAVORITES favorites)"
	t0=$(date +%s.%N)
	step "seed-$label" 600 "${SCALE_ENV[@]}" bin/inkwell seed --articles "$n" --users "$SCALE_USERS" \
		--reader "$SCALE_READER" --reader-follows "$SCALE_FOLLOWS" --reader-favorites "$SCALE_FAVORITES"
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }' >"$WORK/seed-$label.secs"
}

# scale_measure N WITH_CEILING: start a fresh server on the size's database, sign the reader in,
# walk to page $SCALE_PAGE, and measure the rows into $WORK/scale-<label>.json (the ceiling row
# first when WITH_CEILING is 1; a 32-connection feed row into scale-<label>-c32.json when the
# section's concurrency is not 32).
scale_measure() {
	local n=$1 with_ceiling=$2 label base token_file page sitemap_pages targets limit
	label=$(size_label "$n")
	base="http://$API_ADDR"
	say "scale: starting inkwell on inkwell_bench_${label,,}"
	scale_env "$label"
	# A shutdown timeout under stop_pid's 10 s, and no drain delay before it: at 1M articles a background job (the ranking pass)
	# may still be running when the rows end, and the server should stop, not be killed.
	"${SCALE_ENV[@]}" INKWELL_ADDR="$API_ADDR" INKWELL_MIGRATE_ON_START=false INKWELL_JWT_LIFETIME=1h \
		INKWELL_RATE_WRITES=0 INKWELL_RATE_AUTH=0 INKWELL_RATE_SEARCH=0 INKWELL_SHUTDOWN_TIMEOUT=7s INKWELL_DRAIN_DELAY=0 INKWELL_METRICS_ADDR= bin/inkwell serve >"$WORK/inkwell-scale-$label.log" 2>&1 &
	API_PID=$!
	wait_http 30 "$base/healthz" "$API_PID" "inkwell (scale $label)"

	token_file=$WORK/reader-$label.token
	curl -sf -m 10 -H 'Content-Type: application/json' -d "{\"user\":{\"email\":\"$SCALE_READER@example.com\",\"password\":\"password123\"}}" \
		"$base/api/users/login" | grep -o '"token":"[^"]*"' | cut -d'"' -f4 >"$token_file" || true
	[[ -s $token_file ]] || die "scale $label: the reader $SCALE_READER could not sign in"
	step "pages-$label" 120 bin/loadgen pages -url "$base/api/articles?limit=20" -n "$SCALE_PAGE"
	page=$(cat "$WORK/pages-$label.out")
	# The sitemap page in the middle of the index: at N articles it covers the same number of
	# publications as the first, so its cost must not grow with N (docs/API.md, "Sitemaps").
	sitemap_pages=$(curl -sf -m 30 "$base/sitemap.xml" | grep -o '<loc>' | wc -l) || sitemap_pages=0
	((sitemap_pages > 0)) || die "scale $label: the sitemap index lists no page"

	targets=()
	if ((with_ceiling)); then targets+=("ceiling=http://$CEILING_ADDR/ceiling"); fi
	targets+=(
		"list=$base/api/articles?limit=20"
		"list-page$SCALE_PAGE=$page"
		"tag=$base/api/articles?tag=$SCALE_TAG&limit=20"
		"feed=$base/api/articles/feed?limit=20"
		"favorited=$base/api/articles?favorited=$SCALE_READER&limit=20"
		"sitemap-page=$base/sitemaps/articles-$(((sitemap_pages + 1) / 2)).xml"
		"feed-tag=$base/feeds/tags/$SCALE_TAG.atom"
	)
	limit=$(awk -v n="${#targets[@]}" -v d="$(dur_s "$SCALE_DURATION")" -v w="$(dur_s "$SCALE_WARMUP")" 'BEGIN { printf "%d", n * (d + w + 35) + 30 }')
	say "scale $label: measuring ${#targets[@]} rows, $SCALE_WARMUP + $SCALE_DURATION each, $CONCURRENCY connections"
	# A 30 s request timeout and -slow-ok: at the large size today a list request can take seconds,
	# longer than the window even, and a slow answer must count as slow, not as an error that voids
	# the run (loadgen scale reports such a row as slower than the window).
	step -v "scale-$label" "$limit" bin/loadgen run -c "$CONCURRENCY" -d "$SCALE_DURATION" -warmup "$SCALE_WARMUP" \
		-timeout 30s -slow-ok -ref ceiling -json "$WORK/scale-$label.json" -rss "$API_PID" -auth "feed=$token_file" "${targets[@]}"
	if ((with_ceiling && CONCURRENCY != 32)); then
		step -v "scale-$label-c32" 120 bin/loadgen run -c 32 -d "$SCALE_DURATION" -warmup "$SCALE_WARMUP" \
			-timeout 30s -slow-ok -json "$WORK/scale-$label-c32.json" -rss "$API_PID" -auth "feed-c32=$token_file" \
			"feed-c32=$base/api/articles/feed?limit=20"
	fi
	stop_pid "$API_PID" "inkwell (scale $label)"
	API_PID=""
}

# scale_section: seed both sizes, measure both, and write the section's markdown to $WORK/scale.md.
scale_section() {
	local start=$SECONDS small large own_ceiling=0 feed32=feed large_files
	small=$(size_label "$SCALE_SMALL")
	large=$(size_label "$SCALE_LARGE")
	scale_seed "$SCALE_SMALL"
	scale_seed "$SCALE_LARGE"
	if [[ -z $CEILING_PID ]]; then
		bin/loadgen ceiling -addr "$CEILING_ADDR" 2>"$WORK/ceiling-scale.log" &
		CEILING_PID=$!
		own_ceiling=1
		wait_http 10 "http://$CEILING_ADDR/ceiling" "$CEILING_PID" ceiling
	fi
	SCALE_BUSY=$(machine_busy 2)
	say "scale: machine busy before measuring: $SCALE_BUSY of $(nproc) cores"
	scale_measure "$SCALE_SMALL" 0
	scale_measure "$SCALE_LARGE" 1
	if ((own_ceiling)); then
		stop_pid "$CEILING_PID" ceiling
		CEILING_PID=""
	fi
	large_files=(-large "$WORK/scale-$large.json")
	if ((CONCURRENCY != 32)); then
		feed32=feed-c32
		large_files+=(-large "$WORK/scale-$large-c32.json")
	fi
	step scale-report 30 bin/loadgen scale -small "$WORK/scale-$small.json" "${large_files[@]}" \
		-small-label "$small" -large-label "$large" -feed32 "$feed32"
	SCALE_SECS=$((SECONDS - start))
	# shellcheck disable=SC2016 # the backquotes are markdown, not command substitution
	{
		printf 'Measured %s on commit `%s`, %s cores (`nproc`), %s; %s of %s cores busy in the 2 s before the rows (all processes).\n\n' \
			"$(date -u '+%Y-%m-%d %H:%M UTC')" "$BUILT_REV" "$(nproc)" \
			"$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo "?")" "$SCALE_BUSY" "$(nproc)"
		printf -- '- Command: `%s` (BENCH_CONCURRENCY=%s BENCH_SCALE_SMALL=%s BENCH_SCALE_ARTICLES=%s BENCH_SCALE_DURATION=%s BENCH_SCALE_WARMUP=%s%s)\n' \
			"$COMMAND" "$CONCURRENCY" "$SCALE_SMALL" "$SCALE_LARGE" "$SCALE_DURATION" "$SCALE_WARMUP" "${REF:+ BENCH_REF=$REF}"
		printf -- '- Data: two databases, each `inkwell seed --articles N --users %s --reader %s --reader-follows %s --reader-favorites %s` (COPY; one of 20 tags per article, published over 14 days): N = %s took %s s, N = %s took %s s\n' \
			"$SCALE_USERS" "$SCALE_READER" "$SCALE_FOLLOWS" "$SCALE_FAVORITES" "$SCALE_SMALL" "$(cat "$WORK/seed-$small.secs")" "$SCALE_LARGE" "$(cat "$WORK/seed-$large.secs")"
		printf -- '- Rows: a fresh server per database, rows one after another, closed loop, %s connections, %s warm-up then %s measured each; `feed` signed in as the reader (following %s authors), `favorited` lists its %s favorites, `list-page%s` is the URL reached by following `nextCursor` %s times from the first page; `sitemap-page` is the middle page of `/sitemap.xml` (1,000 publications a page); `feed-tag` is the Atom feed of that tag (`/feeds/tags/TAG.atom`); RSS is the server'"'"'s VmRSS right after each row\n' \
			"$CONCURRENCY" "$SCALE_WARMUP" "$SCALE_DURATION" "$SCALE_FOLLOWS" "$SCALE_FAVORITES" "$SCALE_PAGE" "$((SCALE_PAGE - 1))"
		printf -- '- Wall time: %s for the section (seeding both databases included)\n\n' "$(mmss "$SCALE_SECS")"
		cat "$WORK/scale-report.out"
	} >"$WORK/scale.md"
}
