# shellcheck shell=bash
# The "search" section of scripts/bench.sh (issue #17), sourced by it: article search, people and
# tag search and "did you mean" on a database bulk-seeded with `inkwell seed` (Zipf-distributed
# English text, rare words, 5% CJK), and publish latency with and without the search index. It uses
# bench.sh's helpers and settings (step, say, die, psql_admin, wait_http, stop_pid, WORK, ...).
#
# 1. inkwell_bench_search2 (BENCH_SEARCH_DB; dropped first if it exists, dropped again by bench.sh's
#    clean-up): BENCH_SEARCH_ARTICLES articles (default 1,000,000), 1,000 users, seeded twice: once
#    with `inkwell seed --no-search` on a scratch database (no search documents, places or lexicon
#    words: the baseline), then as a user seeds it. The difference of the two wall times is what
#    indexing costs the seed.
# 2. Query files made from the lexicon (search_words) with awk and a fixed seed, each long enough
#    that no query repeats within the 5 s anonymous answer cache: mixed (1–3 words drawn from the
#    seed's English word list, which the seed draws Zipf-distributed), rare (one of the made-up
#    words, each in about 20 articles), common (1–3 of the 30 commonest words that are not
#    stop words) and misspelt (a word of 5+ letters with two neighbouring letters swapped, not a
#    lexicon word: the search finds nothing and asks for a suggestion, `suggest=false` so it is
#    not applied), plus usernames cut to 3+ letters (exact, prefix, similar) and tag prefixes.
# 3. A fresh server on it; the rows one after another, BENCH_SEARCH_CONCURRENCY (16) connections,
#    each after a warm-up of BENCH_SEARCH_WARMUP (15 s): a server's first seconds are not its steady
#    state (its word caches are empty, so every search asks PostgreSQL how common its words are,
#    and each pool connection plans each search statement on first use; with 2 s of warm-up the
#    mixed row measured 149 req/s, with 15 s 237, on the same build). The warm-up's queries are
#    not measured again: each worker walks on through its part of the file. Then the same rows at
#    one connection (BENCH_SEARCH_SERVICE_DURATION, 5 s each, the files read from the end, so none
#    of those queries ran before): the time one search takes with nothing queued in front of it.
#    The hot-list job is put off for the rows (INKWELL_RANK_SCHEDULE=@every 24h): on a million
#    articles its pass over the 7-day window takes both cores of a small machine for a while, and
#    it would land in whichever row runs at that minute.
# 4. Publish latency: POST /api/articles (published at once) by 16 writers, then by one (its
#    latency with nothing queued), on two fresh small databases: this build, and a build of
#    BENCH_SEARCH_BEFORE_REF (default: the commit before the search index was merged), each on its
#    own database migrated by itself.

SEARCH_ARTICLES=${BENCH_SEARCH_ARTICLES:-1000000}
SEARCH_DB=${BENCH_SEARCH_DB:-inkwell_bench_search2}
SEARCH_CONCURRENCY=${BENCH_SEARCH_CONCURRENCY:-16}
SEARCH_DURATION=${BENCH_SEARCH_DURATION:-10s}
SEARCH_WARMUP=${BENCH_SEARCH_WARMUP:-15s}
SEARCH_SERVICE_DURATION=${BENCH_SEARCH_SERVICE_DURATION:-5s}
PUBLISH_WARMUP=2s
SEARCH_BEFORE_REF=${BENCH_SEARCH_BEFORE_REF:-}
SEARCH_ROWS=${BENCH_SEARCH_ROWS:-mixed,rare,common,misspelt,users,tags}
SEARCH_USERS=1000
SEARCH_DBS=() # created by this run: bench.sh's clean-up drops them

search_check_settings() {
	if ! [[ $SEARCH_ARTICLES =~ ^[0-9]+$ ]] || ((SEARCH_ARTICLES < 10000 || SEARCH_ARTICLES > 2000000)); then
		die "BENCH_SEARCH_ARTICLES must be 10000..2000000, not '$SEARCH_ARTICLES'"
	fi
	[[ $SEARCH_DB =~ ^[a-z_][a-z0-9_]{0,50}$ ]] || die "BENCH_SEARCH_DB must be a short lower-case identifier, not '$SEARCH_DB'"
	if ! [[ $SEARCH_CONCURRENCY =~ ^[0-9]+$ ]] || ((SEARCH_CONCURRENCY < 1 || SEARCH_CONCURRENCY > 256)); then
		die "BENCH_SEARCH_CONCURRENCY must be 1..256, not '$SEARCH_CONCURRENCY'"
	fi
	dur_ok "$SEARCH_DURATION" || die "BENCH_SEARCH_DURATION must look like 10s or 500ms, not '$SEARCH_DURATION'"
	dur_ok "$SEARCH_WARMUP" || die "BENCH_SEARCH_WARMUP must look like 15s or 500ms, not '$SEARCH_WARMUP'"
	dur_ok "$SEARCH_SERVICE_DURATION" || die "BENCH_SEARCH_SERVICE_DURATION must look like 5s or 500ms, not '$SEARCH_SERVICE_DURATION'"
	[[ $SEARCH_ROWS =~ ^(mixed|rare|common|misspelt|users|tags)(,(mixed|rare|common|misspelt|users|tags))*$ ]] ||
		die "BENCH_SEARCH_ROWS must be some of mixed,rare,common,misspelt,users,tags, not '$SEARCH_ROWS'"
}

search_env() { # search_env DB: SEARCH_ENV is the environment of inkwell's commands on DB
	SEARCH_ENV=(env DATABASE_URL="postgres://postgres@127.0.0.1:5432/$1?sslmode=disable"
		REDIS_URL="$BENCH_REDIS_URL" INKWELL_REDIS_PREFIX="${REDIS_PREFIX}search-$1:" INKWELL_LOG_LEVEL=warn
		INKWELL_JWT_SECRET="$JWT_SECRET" INKWELL_JWT_LIFETIME=1h INKWELL_RATE_WRITES=0 INKWELL_RATE_AUTH=0 INKWELL_RATE_SEARCH=0
		INKWELL_SHUTDOWN_TIMEOUT=7s)
}

search_newdb() { # search_newdb DB
	psql_admin -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >/dev/null
	psql_admin -c "CREATE DATABASE $1" >/dev/null
	SEARCH_DBS+=("$1")
}

psql_search() { PGCONNECT_TIMEOUT=5 psql -X -q -tA -v ON_ERROR_STOP=1 "postgres://postgres@127.0.0.1:5432/$SEARCH_DB?sslmode=disable" -c "$1"; }

# search_seed DB [FLAGS...]: seeds DB and prints the wall time in seconds.
search_seed() {
	local db=$1 t0
	shift
	search_env "$db"
	step "search-migrate-$db" 120 "${SEARCH_ENV[@]}" bin/inkwell migrate up
	t0=$(date +%s.%N)
	step -v "search-seed-$db" 1800 "${SEARCH_ENV[@]}" bin/inkwell seed --articles "$SEARCH_ARTICLES" --users "$SEARCH_USERS" "$@"
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }'
}

# search_queries: the query URL files, from the lexicon.
search_queries() {
	local base="http://$API_ADDR" d=$WORK/search
	mkdir -p "$d"
	psql_search "SELECT word, ndoc FROM search_words" >"$d/lexicon.txt"
	# The 30 commonest words the search language does not drop as stop words.
	psql_search "SELECT word FROM search_words WHERE to_tsvector('english', word) <> ''::tsvector ORDER BY ndoc DESC LIMIT 30" >"$d/common-words.txt"
	psql_search "SELECT username FROM users ORDER BY id LIMIT 2000" >"$d/user-prefixes.txt"
	psql_search "SELECT tag FROM tag_article_counts WHERE published > 0" >"$d/tag-prefixes.txt"
	awk -v base="$base" -v dir="$d" -F'|' '
		FNR == NR && FILENAME ~ /lexicon/ { known[$1] = 1; if ($2 >= 1000 && $1 ~ /^[a-z]+$/) list[nl++] = $1; else if ($2 <= 60 && $1 ~ /^[a-z]+$/) rare[nr++] = $1; next }
		FILENAME ~ /common-words/ { common[nc++] = $1; next }
		FILENAME ~ /user-prefixes/ { up[nu++] = $1; next }
		FILENAME ~ /tag-prefixes/ { tp[nt++] = $1; next }
		END {
			srand(17)
			for (i = 0; i < 40000; i++) {
				k = 1 + int(rand() * 3); q = ""
				for (j = 0; j < k; j++) q = q (j ? "+" : "") list[int(rand() * nl)]
				print base "/api/search/articles?q=" q > (dir "/mixed.urls")
			}
			for (i = 0; i < 20000 && nr > 0; i++) print base "/api/search/articles?q=" rare[int(rand() * nr)] > (dir "/rare.urls")
			for (i = 0; i < 20000; i++) {
				k = 1 + int(rand() * 3); q = ""
				for (j = 0; j < k; j++) q = q (j ? "+" : "") common[int(rand() * nc)]
				print base "/api/search/articles?q=" q "&limit=" (10 + i % 10) > (dir "/common.urls")
			}
			for (n = 0; n < 40000;) {
				w = list[int(rand() * nl)]
				if (length(w) < 5) continue
				p = 2 + int(rand() * (length(w) - 3))
				m = substr(w, 1, p - 1) substr(w, p + 1, 1) substr(w, p, 1) substr(w, p + 2)
				if (m in known) continue
				print base "/api/search/articles?q=" m "&suggest=false" > (dir "/misspelt.urls")
				n++
			}
			# A username cut to 3 letters or more (a prefix, and similar names), or whole (exact).
			for (i = 0; i < 10000; i++) { u = up[int(rand() * nu)]; print base "/api/search/users?q=" tolower(substr(u, 1, 3 + int(rand() * (length(u) - 2)))) > (dir "/users.urls") }
			for (i = 0; i < 10000; i++) { t = tp[int(rand() * nt)]; print base "/api/search/tags?q=" substr(t, 1, 1 + int(rand() * length(t))) > (dir "/tags.urls") }
		}' "$d/lexicon.txt" "$d/common-words.txt" "$d/user-prefixes.txt" "$d/tag-prefixes.txt"
	[[ -s $d/rare.urls ]] || die "search: the lexicon has no rare word (is the seed's text the Zipf one?)"
}

# search_publish LABEL BINARY: POST /api/articles by $SEARCH_CONCURRENCY writers on a fresh small
# database migrated by BINARY itself; the row goes to $WORK/publish-LABEL.json.
search_publish() {
	local label=$1 bin=$2 db=${SEARCH_DB}_pub_$1 base="http://$API_ADDR" body words
	search_newdb "$db"
	search_env "$db"
	"${SEARCH_ENV[@]}" INKWELL_ADDR="$API_ADDR" INKWELL_METRICS_ADDR= INKWELL_DRAIN_DELAY=0 INKWELL_MIGRATE_ON_START=true "$bin" serve >"$WORK/inkwell-publish-$label.log" 2>&1 &
	API_PID=$!
	wait_http 60 "$base/healthz" "$API_PID" "inkwell (publish $label)"
	step "publish-seed-$label" 120 bin/loadgen seed -base "$base" -users 2 -articles 2 -tags 4 -follows 1 -favorites 1 -pick 0 -workers 2 \
		-writers "$SEARCH_CONCURRENCY" -tokens "$WORK/publish-$label.tokens"
	# A body of about 130 words, as the seed writes them.
	words=$(head -c 20000 "$WORK/search/mixed.urls" | sed -n 's/.*q=//p' | tr '+' ' ' | tr '\n' ' ' | cut -d' ' -f1-130)
	body=$(printf '{"article":{"title":"Benchmark publish","description":"an article published by the benchmark","body":"%s.","tagList":["bench"]}}' "$words")
	step -v "publish-$label" 120 bin/loadgen run -c "$SEARCH_CONCURRENCY" -d "$SEARCH_DURATION" -warmup "$PUBLISH_WARMUP" \
		-ref publish -json "$WORK/publish-$label.json" -tokens "$WORK/publish-$label.tokens" -body "publish=$body" \
		"publish=POST $base/api/articles"
	# One writer: the latency of a publish with nothing queued in front of it.
	step -v "publish-$label-c1" 120 bin/loadgen run -c 1 -d "$SEARCH_SERVICE_DURATION" -warmup 1s \
		-ref publish -json "$WORK/publish-$label-c1.json" -tokens "$WORK/publish-$label.tokens" -body "publish=$body" \
		"publish=POST $base/api/articles"
	stop_pid "$API_PID" "inkwell (publish $label)"
	API_PID=""
}

# json_field FILE NAME FIELD: a number from loadgen run -json output.
json_field() {
	awk -v name="\"$2\"" -v field="\"$3\":" '
		$1 == "\"name\":" { cur = $2; gsub(/,/, "", cur) }
		cur == name && $1 == field { v = $2; gsub(/,/, "", v); printf "%.2f\n", v; exit }' "$1"
}

search_section() {
	local start=$SECONDS total base_secs base="http://$API_ADDR" before_bin before_rev="" limit run label
	SEARCH_BUSY_SEED=$(machine_busy 2)
	say "search: seeding ${SEARCH_DB}_base without search ($SEARCH_ARTICLES articles, $SEARCH_USERS users); machine busy $SEARCH_BUSY_SEED of $(nproc) cores"
	search_newdb "${SEARCH_DB}_base"
	base_secs=$(search_seed "${SEARCH_DB}_base" --no-search) || die "search: the baseline seed failed"
	psql_admin -c "DROP DATABASE IF EXISTS ${SEARCH_DB}_base WITH (FORCE)" >/dev/null
	say "search: seeding $SEARCH_DB"
	search_newdb "$SEARCH_DB"
	total=$(search_seed "$SEARCH_DB") || die "search: the seed failed"
	search_env "$SEARCH_DB"
	SEARCH_SEED_LINE=$(awk -v t="$total" -v b="$base_secs" 'BEGIN {
		printf "`inkwell seed` took %.1f s; `inkwell seed --no-search` (no search documents, places or lexicon words) %.1f s, so indexing adds %.0f%%", t, b, (b > 0 ? 100 * (t - b) / b : 0) }')
	say "search: $SEARCH_SEED_LINE"
	SEARCH_LEXICON=$(psql_search "SELECT count(*) FROM search_words")

	say "search: starting inkwell on $SEARCH_DB"
	"${SEARCH_ENV[@]}" INKWELL_ADDR="$API_ADDR" INKWELL_METRICS_ADDR= INKWELL_DRAIN_DELAY=0 INKWELL_MIGRATE_ON_START=false INKWELL_RANK_SCHEDULE='@every 24h' bin/inkwell serve >"$WORK/inkwell-search.log" 2>&1 &
	API_PID=$!
	wait_http 30 "$base/healthz" "$API_PID" "inkwell (search)"
	search_queries
	local targets=() urls=() row
	for row in ${SEARCH_ROWS//,/ }; do
		targets+=("search-$row=$(head -n 1 "$WORK/search/$row.urls")")
		urls+=(-urls "search-$row=$WORK/search/$row.urls")
	done
	SEARCH_BUSY=$(machine_busy 2)
	say "search: measuring ${#targets[@]} rows, $SEARCH_WARMUP + $SEARCH_DURATION each, $SEARCH_CONCURRENCY connections; machine busy $SEARCH_BUSY of $(nproc) cores"
	limit=$(awk -v n="${#targets[@]}" -v d="$(dur_s "$SEARCH_DURATION")" -v w="$(dur_s "$SEARCH_WARMUP")" 'BEGIN { printf "%d", n * (d + w + 35) + 30 }')
	step -v search-rows "$limit" bin/loadgen run -c "$SEARCH_CONCURRENCY" -d "$SEARCH_DURATION" -warmup "$SEARCH_WARMUP" \
		-timeout 30s -ref "${targets[0]%%=*}" -json "$WORK/search-rows.json" "${urls[@]}" "${targets[@]}"
	local c1_urls=()
	for row in ${SEARCH_ROWS//,/ }; do
		tac "$WORK/search/$row.urls" >"$WORK/search/$row.c1.urls"
		c1_urls+=(-urls "search-$row=$WORK/search/$row.c1.urls")
	done
	say "search: the same rows at one connection, 1s + $SEARCH_SERVICE_DURATION each"
	limit=$(awk -v n="${#targets[@]}" -v d="$(dur_s "$SEARCH_SERVICE_DURATION")" 'BEGIN { printf "%d", n * (d + 1 + 35) + 30 }')
	step -v search-rows-c1 "$limit" bin/loadgen run -c 1 -d "$SEARCH_SERVICE_DURATION" -warmup 1s \
		-timeout 30s -ref "${targets[0]%%=*}" -json "$WORK/search-rows-c1.json" "${c1_urls[@]}" "${targets[@]}"
	stop_pid "$API_PID" "inkwell (search)"
	API_PID=""

	search_publish after bin/inkwell
	if [[ -z $SEARCH_BEFORE_REF ]]; then
		SEARCH_BEFORE_REF=$(git log --merges --format=%H -i --grep='^Merge h-search:' -1 2>/dev/null || true)
		[[ -n $SEARCH_BEFORE_REF ]] && SEARCH_BEFORE_REF="$SEARCH_BEFORE_REF^1"
	fi
	if [[ -n $SEARCH_BEFORE_REF ]]; then
		before_rev=$(git rev-parse --short "$SEARCH_BEFORE_REF") || die "BENCH_SEARCH_BEFORE_REF=$SEARCH_BEFORE_REF is not a commit"
		mkdir -p "$WORK/before"
		git archive "$SEARCH_BEFORE_REF" | tar -x -C "$WORK/before"
		before_bin=$WORK/inkwell-before
		step build-before 300 go -C "$WORK/before" build -o "$before_bin" ./cmd/inkwell
		search_publish before "$before_bin"
	fi
	SEARCH_SECS=$((SECONDS - start))
	# shellcheck disable=SC2016 # the backquotes are markdown, not command substitution
	{
		printf 'Measured %s on commit `%s`, %s cores (`nproc`), %s; %s of %s cores busy in the 2 s before the seed, %s before the rows (all processes; other work on the machine skews the numbers).\n\n' \
			"$(date -u '+%Y-%m-%d %H:%M UTC')" "$BUILT_REV" "$(nproc)" \
			"$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo "?")" "$SEARCH_BUSY_SEED" "$(nproc)" "$SEARCH_BUSY"
		printf -- '- Command: `%s` (BENCH_SEARCH_ARTICLES=%s BENCH_SEARCH_CONCURRENCY=%s BENCH_SEARCH_DURATION=%s BENCH_SEARCH_WARMUP=%s BENCH_SEARCH_SERVICE_DURATION=%s%s)\n' \
			"$COMMAND" "$SEARCH_ARTICLES" "$SEARCH_CONCURRENCY" "$SEARCH_DURATION" "$SEARCH_WARMUP" "$SEARCH_SERVICE_DURATION" "${REF:+ BENCH_REF=$REF}"
		printf -- '- Data: `inkwell seed --articles %s --users %s` (bodies of 60–200 Zipf-drawn words, 5%% CJK); %s. Lexicon: %s words\n' \
			"$SEARCH_ARTICLES" "$SEARCH_USERS" "$SEARCH_SEED_LINE" "$SEARCH_LEXICON"
		printf -- '- Rows: one server (its hot-list job put off, `INKWELL_RANK_SCHEDULE=@every 24h`: its pass over a million articles would take the cores from whichever row it fell in), one row after another, closed loop, anonymous, each after a warm-up (a fresh server'"'"'s word caches are empty and its pool connections plan each statement on first use; the warm-up'"'"'s queries are not measured again), each worker walking its own part of a file of 10,000–40,000 queries (no query repeats inside the 5 s answer cache): `search-mixed` 1–3 words from the seed'"'"'s word list, `search-rare` one made-up word (about 20 articles each), `search-common` 1–3 of the 30 commonest non-stop words, `search-misspelt` a word with two letters swapped that finds nothing and gets a suggestion (`suggest=false`: the failed search plus the lexicon lookup), `search-users` a username cut to 3 letters or more, `search-tags` a tag cut to 1 or more\n'
		local before_text="no earlier build (BENCH_SEARCH_BEFORE_REF unset and no merge of h-search found)"
		if [[ -n $before_rev ]]; then before_text="commit \`$before_rev\` (before the search index)"; fi
		printf -- '- Publish: `POST /api/articles` (published at once, a 130-word body), %s writers, on a fresh database each: this build, and %s\n' \
			"$SEARCH_CONCURRENCY" "$before_text"
		printf -- '- Wall time: %s for the section (seeding included)\n\n' "$(mmss "$SEARCH_SECS")"
		cat "$WORK/search-rows.out"
		echo
		printf 'The same rows at **one connection** (the files read from the end: none of these queries ran before), so nothing is queued in front of a search: its latency is the work one search takes.\n\n'
		sed -n '/^| Case | Request/,/^$/p' "$WORK/search-rows-c1.out"
		printf '| publish | req/s | p50 ms | p99 ms |\n|---|---:|---:|---:|\n'
		for run in before after before-c1 after-c1; do
			[[ -s $WORK/publish-$run.json ]] || continue
			label=${run%-c1}
			if [[ $run == *-c1 ]]; then label="$label, 1 writer"; else label="$label, $SEARCH_CONCURRENCY writers"; fi
			printf '| %s | %s | %s | %s |\n' "$label" "$(json_field "$WORK/publish-$run.json" publish rps)" \
				"$(json_field "$WORK/publish-$run.json" publish p50Ms)" "$(json_field "$WORK/publish-$run.json" publish p99Ms)"
		done
	} >"$WORK/search.md"
}
