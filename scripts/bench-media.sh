# shellcheck shell=bash
# The "media" section of scripts/bench.sh (issue #29), sourced by it: image uploads through the
# whole HTTP path and serving a stored variant, next to the bare-gin ceiling in the same run. It
# uses bench.sh's helpers and settings (step, say, die, psql_admin, wait_http, stop_pid, WORK, ...).
#
# Its own database (inkwell_bench_media, dropped first if it exists, dropped again by bench.sh's
# clean-up), its own media directory under $WORK (the local store, INKWELL_MEDIA_URL's default
# kind) and a fresh server on $API_ADDR, so its memory figures are its own:
#   1. 40 uploads of a ~2 MB photo-like JPEG, one at a time: p50/p90 and the server's CPU per upload
#      (decode, orientation, the original re-encoded and three variants, both written to disk);
#   2. GET /media/<key> of the first upload's thumbnail, 32 connections, next to the ceiling;
#   3. 16 uploads of a ~9.5 MB JPEG (under the 10 MB default limit) all at once: the server's peak
#      RSS while they run (VmHWM, reset just before) against its RSS before.

MEDIA_DBS=() # created by this run: bench.sh's clean-up drops them
MEDIA_DB=inkwell_bench_media
MEDIA_SMALL_N=40
MEDIA_SMALL_BYTES=2000000
MEDIA_LARGE_N=16
MEDIA_LARGE_BYTES=9500000

media_section() {
	local db_url=postgres://postgres@127.0.0.1:5432/$MEDIA_DB?sslmode=disable pid ceiling_pid="" thumb
	psql_admin -c "DROP DATABASE IF EXISTS $MEDIA_DB WITH (FORCE)" >/dev/null
	psql_admin -c "CREATE DATABASE $MEDIA_DB" >/dev/null
	MEDIA_DBS+=("$MEDIA_DB")
	mkdir -p "$WORK/media"
	say "media: starting inkwell on $API_ADDR (database $MEDIA_DB, media in $WORK/media)"
	INKWELL_ADDR=$API_ADDR DATABASE_URL=$db_url REDIS_URL=$BENCH_REDIS_URL \
		INKWELL_REDIS_PREFIX="${REDIS_PREFIX}media:" INKWELL_MIGRATE_ON_START=true INKWELL_LOG_LEVEL=warn \
		INKWELL_JWT_SECRET=$JWT_SECRET INKWELL_JWT_LIFETIME=1h INKWELL_RATE_WRITES=0 INKWELL_RATE_AUTH=0 \
		INKWELL_MEDIA_URL="file://$WORK/media" INKWELL_UPLOAD_QUOTA=0 \
		INKWELL_PPROF_ADDR=$PPROF_ADDR INKWELL_METRICS_ADDR= INKWELL_DRAIN_DELAY=0 \
		bin/inkwell serve >"$WORK/inkwell-media.log" 2>&1 &
	pid=$!
	API_PID=$pid # bench.sh's clean-up stops it if the run fails
	wait_http 30 "http://$API_ADDR/healthz" "$pid" "inkwell (media)"
	if [[ -z $CEILING_PID ]] || ! kill -0 "$CEILING_PID" 2>/dev/null; then
		bin/loadgen ceiling -addr "$CEILING_ADDR" 2>"$WORK/ceiling-media.log" &
		ceiling_pid=$!
		CEILING_PID=$ceiling_pid
		wait_http 10 "http://$CEILING_ADDR/ceiling" "$ceiling_pid" ceiling
	fi
	# One user per upload of the concurrent row (the upload budget is per user: 30 an hour).
	step media-seed 120 bin/loadgen seed -base "http://$API_ADDR" -users 4 -articles 10 -tags 2 -workers 2 -pick 0 -follows 1 -favorites 1 \
		-writers 32 -tokens "$WORK/media-tokens"
	say "media: machine busy before measuring: $(machine_busy 2) of $(nproc) cores"
	step -v media-small 600 bin/loadgen upload -base "http://$API_ADDR" -tokens "$WORK/media-tokens" \
		-n "$MEDIA_SMALL_N" -c 1 -bytes "$MEDIA_SMALL_BYTES" -pid "$pid" \
		-variant-out "$WORK/media-thumb.url" -json "$WORK/media-small.json"
	thumb=$(head -n 1 "$WORK/media-thumb.url")
	[[ $thumb == /media/* || $thumb == http://* ]] || die "the upload's thumbnail URL is unexpected: $thumb"
	if [[ $thumb == /* ]]; then thumb=http://$API_ADDR$thumb; fi
	curl -sf -o /dev/null "$thumb" || die "cannot read $thumb"
	step -v media-serve 120 bin/loadgen run -c "$CONCURRENCY" -d "$DURATION" -warmup "$WARMUP" \
		-cpu "ceiling=$CEILING_PID" -cpu "inkwell=$pid" -goal media-thumb=0.5 -json "$WORK/media-serve.json" \
		"ceiling=http://$CEILING_ADDR/ceiling" "media-thumb=$thumb"
	step -v media-large 600 bin/loadgen upload -base "http://$API_ADDR" -tokens "$WORK/media-tokens" \
		-n "$MEDIA_LARGE_N" -c "$MEDIA_LARGE_N" -bytes "$MEDIA_LARGE_BYTES" -pid "$pid" -json "$WORK/media-large.json"
	stop_pid "$pid" "inkwell (media)"
	API_PID=""
	if [[ -n $ceiling_pid ]]; then
		stop_pid "$ceiling_pid" ceiling
		CEILING_PID=""
	fi
	media_report >"$WORK/media.md"
}

# media_report: the section's markdown, from the three steps' outputs.
media_report() {
	local growth verdict
	growth=$(grep -o '"growthMB": [0-9.]*' "$WORK/media-large.json" | awk '{ printf "%.0f", $2 }')
	verdict=$(awk -v g="$growth" 'BEGIN { print (g <= 400 ? "PASS" : "FAIL") }')
	printf 'Measured by `%s` at %s on this machine (%s cores), %s.\n\n' "$COMMAND" "$BUILT_REV" "$(nproc)" "$(date -u '+%Y-%m-%d %H:%M UTC')"
	printf 'Uploads (`POST /api/uploads`, multipart, the local store; the server CPU is its user+system time from /proc over the whole row, divided by the uploads):\n\n'
	sed -n '1,2p' "$WORK/media-small.out"
	sed -n '3p' "$WORK/media-small.out"
	sed -n '3p' "$WORK/media-large.out"
	printf '\n**16 concurrent ~9.5 MB uploads: the server grew %s MB at its peak** (goal: <= 400 MB: %s).\n\n' "$growth" "$verdict"
	printf 'Serving the first upload'"'"'s thumbnail from the local store (`GET /media/<key>`, %s connections, %s windows), next to the ceiling:\n\n' "$CONCURRENCY" "$DURATION"
	cat "$WORK/media-serve.out"
}
