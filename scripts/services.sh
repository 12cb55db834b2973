#!/usr/bin/env bash
# Make sure the PostgreSQL and Redis that inkwell needs are reachable.
#
#   scripts/services.sh          ensure both services (idempotent; fast when they already answer)
#   scripts/services.sh haproxy  ensure the haproxy binary (the fleet tests' balancer) is installed
#   scripts/services.sh wrk      ensure the wrk binary (make bench's HTTP load generator row) is installed
#   scripts/services.sh promtool ensure promtool (make check-alerts: Prometheus rule checks and tests) is installed
#   scripts/services.sh chromium ensure a headless Chromium (the API explorer's browser test) is installed
#   scripts/services.sh stop     stop the project-local servers under .data/ (and nothing else)
#   scripts/services.sh replica [start|delay D|status|stop]   a primary and its streaming replica (scripts/replica.sh)
#   scripts/services.sh pgbouncer [start|stop]                a PgBouncer before that primary (scripts/replica.sh)
#
# Settings (environment):
#   DATABASE_URL  default postgres://postgres@127.0.0.1:5432/inkwell?sslmode=disable
#   REDIS_URL     default redis://127.0.0.1:6379/0
#
# For each service: use a server that already answers at the configured address; else start a
# project-local one under .data/ with the installed server binaries; else (root on Debian/Ubuntu)
# install the package and start it; else print what to install and exit 1. Then the database named
# in DATABASE_URL is created if missing. HAProxy is only a binary the fleet tests start themselves
# (no server to run here): `haproxy` finds it on PATH or in /usr/sbin, else installs the haproxy
# package the same way (root on Debian/Ubuntu), else prints what to install and exits 1. wrk (the
# C load generator make bench compares the ceiling and the cached read with) is found or installed
# the same way. promtool (make check-alerts runs `promtool check rules` and `promtool test rules`
# on deploy/alerts.yml) comes with Debian's prometheus package and is found or installed the same
# way; the package's server is not started or used here. Chromium is found or installed the same
# way too (e2e's browser test of /api/docs drives it headless; Debian's package is about 100 MB
# with its libraries, so only `make test` and that test ask for it).
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA_DIR="$ROOT_DIR/.data"
PG_DATA="$DATA_DIR/postgres"
PG_SOCK="$DATA_DIR/pg-socket"
PG_LOG="$DATA_DIR/postgres.log"
REDIS_DATA="$DATA_DIR/redis"
REDIS_LOG="$REDIS_DATA/redis.log"
REDIS_PIDFILE="$REDIS_DATA/redis.pid"
WAIT_SECS=30

DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/inkwell?sslmode=disable}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"

say() { printf '%s\n' "$*"; }
warn() { printf '%s\n' "$*" >&2; }
die() {
	printf '%s\n' "$*" >&2
	exit 1
}

# ---------------------------------------------------------------------------------------------
# URL parsing: scheme://[user[:password]@]host[:port][/path][?query]  (no percent-decoding)
# Sets URL_USER URL_PASS URL_HOST URL_PORT URL_PATH.
parse_url() {
	local url=$1 default_port=$2 rest hostport userinfo
	rest=${url#*://}
	rest=${rest%%\?*}
	rest=${rest%%#*}
	URL_PATH=""
	if [[ $rest == */* ]]; then
		URL_PATH=${rest#*/}
		rest=${rest%%/*}
	fi
	URL_USER="" URL_PASS=""
	hostport=$rest
	if [[ $rest == *@* ]]; then
		userinfo=${rest%@*}
		hostport=${rest##*@}
		URL_USER=${userinfo%%:*}
		if [[ $userinfo == *:* ]]; then
			URL_PASS=${userinfo#*:}
		fi
	fi
	if [[ $hostport == \[*\]* ]]; then # [ipv6]:port
		URL_HOST=${hostport%%]*}
		URL_HOST=${URL_HOST#[}
		hostport=${hostport#*]}
		URL_PORT=${hostport#:}
	elif [[ $hostport == *:* ]]; then
		URL_HOST=${hostport%%:*}
		URL_PORT=${hostport##*:}
	else
		URL_HOST=$hostport
		URL_PORT=""
	fi
	URL_HOST=${URL_HOST:-127.0.0.1}
	URL_PORT=${URL_PORT:-$default_port}
	[[ $URL_PORT =~ ^[0-9]+$ ]] || die "bad port '$URL_PORT' in $url"
}

parse_url "$DATABASE_URL" 5432
PG_HOST=$URL_HOST PG_PORT=$URL_PORT PG_USER=${URL_USER:-postgres} PG_PASS=$URL_PASS
PG_DB=${URL_PATH:-$PG_USER}
parse_url "$REDIS_URL" 6379
REDIS_HOST=$URL_HOST REDIS_PORT=$URL_PORT REDIS_PASS=$URL_PASS

is_local_host() { [[ $1 == 127.0.0.1 || $1 == localhost ]]; }

# run_timeout SECS CMD...: timeout(1) where it exists (macOS lacks it by default).
run_timeout() {
	if command -v timeout >/dev/null 2>&1; then
		timeout "$@"
	else
		shift
		"$@"
	fi
}

# tcp_open HOST PORT: something accepts TCP connections there.
tcp_open() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	run_timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# wait_until SECONDS CMD...: run CMD every 0.25 s until it succeeds or the time is up.
wait_until() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 4; i++)); do
		if "$@"; then return 0; fi
		sleep 0.25
	done
	return 1
}

is_root() { [[ $(id -u) -eq 0 ]]; }
can_apt() { is_root && [[ -f /etc/debian_version ]] && command -v apt-get >/dev/null 2>&1; }

APT_UPDATED=0
apt_install() {
	if [[ $APT_UPDATED -eq 0 ]]; then
		say "apt: apt-get update"
		apt-get update -qq
		APT_UPDATED=1
	fi
	say "apt: installing $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

install_hint() {
	local what=$1 deb=$2 brew=$3
	warn "$what is not reachable and its server is not installed. Install it, then re-run this script:"
	warn "  Debian/Ubuntu: sudo apt-get install $deb"
	warn "  macOS:         brew install $brew"
	warn "  (or point the URL at a server you already have)"
	exit 1
}

show_log_tail() {
	if [[ -f $1 ]]; then
		warn "---- last lines of $1 ----"
		tail -n 20 "$1" >&2 || true
	fi
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL

pg_answers() {
	if command -v pg_isready >/dev/null 2>&1; then
		pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2 >/dev/null 2>&1
	else
		tcp_open "$PG_HOST" "$PG_PORT"
	fi
}

# Sets PG_BIN to a directory holding initdb and pg_ctl (highest version found), or returns 1.
find_pg_bins() {
	local d dir
	PG_BIN=$(for d in /usr/lib/postgresql/*/bin /usr/pgsql-*/bin /opt/homebrew/opt/postgresql@*/bin \
		/usr/local/opt/postgresql@*/bin; do
		if [[ -x $d/initdb && -x $d/pg_ctl ]]; then printf '%s\n' "$d"; fi
	done | sort -V | tail -n 1)
	if [[ -z $PG_BIN ]] && command -v pg_ctl >/dev/null 2>&1; then
		dir=$(dirname "$(command -v pg_ctl)")
		if [[ -x $dir/initdb ]]; then PG_BIN=$dir; fi
	fi
	[[ -n $PG_BIN ]]
}

# The OS user that runs initdb/pg_ctl/postgres (they refuse to run as root).
PG_OS_USER=""
pick_pg_os_user() {
	if ! is_root; then
		PG_OS_USER=""
	elif [[ -d $PG_DATA ]] && [[ $(stat -c %U "$PG_DATA" 2>/dev/null || echo root) != root ]]; then
		PG_OS_USER=$(stat -c %U "$PG_DATA")
	elif id -u postgres >/dev/null 2>&1; then
		PG_OS_USER=postgres
	else
		if ! id -u inkwell-pg >/dev/null 2>&1; then
			useradd --system --user-group --no-create-home --home-dir /nonexistent \
				--shell /usr/sbin/nologin inkwell-pg
		fi
		PG_OS_USER=inkwell-pg
	fi
}

# run_pg CMD...: run a PostgreSQL server tool, as PG_OS_USER when we are root.
run_pg() {
	if [[ -n $PG_OS_USER ]]; then
		(cd / && runuser -u "$PG_OS_USER" -- "$@")
	else
		"$@"
	fi
}

pg_local_running() {
	[[ -f $PG_DATA/PG_VERSION ]] && run_pg "$PG_BIN/pg_ctl" status -D "$PG_DATA" >/dev/null 2>&1
}

# The port the project-local cluster is running on (from postmaster.pid), or empty.
pg_local_port() {
	local pid
	[[ -f $PG_DATA/postmaster.pid ]] || return 0
	pid=$(sed -n 1p "$PG_DATA/postmaster.pid" 2>/dev/null) || return 0
	if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
		sed -n 4p "$PG_DATA/postmaster.pid" 2>/dev/null || true
	fi
}

start_local_pg() {
	find_pg_bins || die "postgres: cannot find initdb and pg_ctl"
	pick_pg_os_user
	if pg_local_running; then
		die "postgres: the local server in .data/postgres is running but not answering at $PG_HOST:$PG_PORT (port $(pg_local_port)); run 'scripts/services.sh stop' first"
	fi
	mkdir -p "$DATA_DIR" "$PG_DATA" "$PG_SOCK"
	touch "$PG_LOG"
	if [[ -n $PG_OS_USER ]]; then
		chown -R "$PG_OS_USER:" "$PG_DATA" "$PG_SOCK" "$PG_LOG"
		chmod 700 "$PG_DATA"
		if ! run_pg test -w "$PG_DATA"; then
			die "postgres: user $PG_OS_USER cannot write $PG_DATA (a parent directory is not searchable by it); chmod o+x the parent directories, or run this script as a non-root user"
		fi
	fi
	local initialised=""
	if [[ ! -f $PG_DATA/PG_VERSION ]]; then
		if [[ -n $(ls -A "$PG_DATA") ]]; then
			die "postgres: $PG_DATA is not empty and not a PostgreSQL data directory; remove it"
		fi
		if ! run_pg "$PG_BIN/initdb" -D "$PG_DATA" -U "$PG_USER" --auth=trust --encoding=UTF8 \
			--no-locale >"$DATA_DIR/initdb.log" 2>&1; then
			show_log_tail "$DATA_DIR/initdb.log"
			die "postgres: initdb failed"
		fi
		initialised=" (new cluster)"
	fi
	# A Unix socket path is limited to ~107 bytes; without one the server is TCP-only, which is enough.
	# pg_ctl runs "postgres $opts" through /bin/sh, so the path goes in single quotes.
	local sock=$PG_SOCK
	if ((${#sock} + 20 > 100)) || [[ $sock == *"'"* ]]; then sock=""; fi
	if ! run_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -o "-h 127.0.0.1 -p $PG_PORT -k '$sock'" \
		-w -t "$WAIT_SECS" start >/dev/null 2>&1; then
		show_log_tail "$PG_LOG"
		die "postgres: the local server in .data/postgres failed to start (log: .data/postgres.log)"
	fi
	if ! wait_until "$WAIT_SECS" pg_answers; then
		show_log_tail "$PG_LOG"
		die "postgres: the local server did not answer at $PG_HOST:$PG_PORT within ${WAIT_SECS}s"
	fi
	say "postgres: started local server in .data/postgres at $PG_HOST:$PG_PORT$initialised"
}

psql_ok() {
	PGPASSWORD=$PG_PASS PGCONNECT_TIMEOUT=5 psql -X -q -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" \
		-d postgres -tAc 'SELECT 1' >/dev/null 2>&1
}

# After apt-get install postgresql: use Debian's "main" cluster if it serves the configured port
# and lets the URL's user in over TCP. Returns 1 to fall back to a project-local cluster.
try_debian_cluster() {
	command -v pg_lsclusters >/dev/null 2>&1 || return 1
	local ver line port status
	ver=$(basename "$(dirname "$PG_BIN")")
	line=$(pg_lsclusters -h 2>/dev/null | awk -v v="$ver" '$1 == v && $2 == "main"') || true
	if [[ -z $line ]]; then
		say "postgres: no Debian cluster $ver/main; using a project-local cluster instead"
		return 1
	fi
	read -r _ _ port status _ <<<"$line"
	if [[ $port != "$PG_PORT" ]]; then
		say "postgres: Debian cluster $ver/main listens on port $port, not $PG_PORT; using a project-local cluster instead"
		return 1
	fi
	if [[ $status != online* ]]; then
		pg_ctlcluster --skip-systemctl-redirect "$ver" main start
	fi
	if ! wait_until "$WAIT_SECS" pg_answers; then
		show_log_tail "/var/log/postgresql/postgresql-$ver-main.log"
		die "postgres: Debian cluster $ver/main did not answer at $PG_HOST:$PG_PORT within ${WAIT_SECS}s"
	fi
	if psql_ok; then
		say "postgres: installed postgresql; using Debian cluster $ver/main at $PG_HOST:$PG_PORT"
		return 0
	fi
	say "postgres: Debian cluster $ver/main refuses TCP login as $PG_USER (peer/password auth); stopping it and using a project-local trust cluster on port $PG_PORT instead"
	pg_ctlcluster --skip-systemctl-redirect "$ver" main stop
	return 1
}

ensure_postgres() {
	if pg_answers; then
		if [[ $(pg_local_port) == "$PG_PORT" ]] && is_local_host "$PG_HOST"; then
			say "postgres: using local server in .data/postgres at $PG_HOST:$PG_PORT"
		else
			say "postgres: using running server at $PG_HOST:$PG_PORT"
		fi
		return
	fi
	if tcp_open "$PG_HOST" "$PG_PORT"; then
		# Something listens but does not accept connections yet (starting up?): give it time.
		if wait_until "$WAIT_SECS" pg_answers; then
			say "postgres: using running server at $PG_HOST:$PG_PORT"
			return
		fi
		die "postgres: something listens at $PG_HOST:$PG_PORT but does not accept PostgreSQL connections"
	fi
	if ! is_local_host "$PG_HOST"; then
		die "postgres: no server answers at $PG_HOST:$PG_PORT; this script only starts servers on 127.0.0.1/localhost"
	fi
	if find_pg_bins; then
		start_local_pg
		return
	fi
	if can_apt; then
		apt_install postgresql
		find_pg_bins || die "postgres: installed postgresql but cannot find initdb/pg_ctl under /usr/lib/postgresql"
		if pg_answers && psql_ok; then
			say "postgres: installed postgresql; using the server it started at $PG_HOST:$PG_PORT"
			return
		fi
		try_debian_cluster && return
		start_local_pg
		return
	fi
	install_hint PostgreSQL postgresql postgresql@16
}

ensure_database() {
	if ! command -v psql >/dev/null 2>&1; then
		warn "postgres: psql not found; not checking that database '$PG_DB' exists"
		return
	fi
	local out lit ident
	lit=${PG_DB//\'/\'\'}
	if ! out=$(PGPASSWORD=$PG_PASS PGCONNECT_TIMEOUT=5 psql -X -q -v ON_ERROR_STOP=1 \
		-h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres \
		-tAc "SELECT 1 FROM pg_database WHERE datname = '$lit'" 2>&1); then
		die "postgres: cannot log in at $PG_HOST:$PG_PORT as $PG_USER: $out"
	fi
	if [[ $out == 1 ]]; then return; fi
	ident=${PG_DB//\"/\"\"}
	if ! out=$(PGPASSWORD=$PG_PASS PGCONNECT_TIMEOUT=5 psql -X -q -v ON_ERROR_STOP=1 \
		-h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres \
		-c "CREATE DATABASE \"$ident\"" 2>&1); then
		die "postgres: cannot create database '$PG_DB': $out"
	fi
	say "postgres: created database $PG_DB"
}

stop_postgres() {
	if [[ ! -f $PG_DATA/PG_VERSION ]]; then
		say "postgres: no local server in .data/postgres"
		return
	fi
	if ! find_pg_bins; then
		warn "postgres: cannot find pg_ctl; not stopping .data/postgres"
		return
	fi
	pick_pg_os_user
	if ! pg_local_running; then
		say "postgres: local server in .data/postgres is not running"
		return
	fi
	run_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t "$WAIT_SECS" stop >/dev/null
	say "postgres: stopped local server in .data/postgres"
}

# ---------------------------------------------------------------------------------------------
# Redis

redis_answers() {
	local reply
	if command -v redis-cli >/dev/null 2>&1; then
		if [[ -n $REDIS_PASS ]]; then export REDISCLI_AUTH=$REDIS_PASS; fi
		reply=$(run_timeout 3 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null) || return 1
		[[ $reply == PONG ]]
	else
		# shellcheck disable=SC2016 # expanded by the inner bash
		run_timeout 3 bash -c '
			exec 3<>"/dev/tcp/$1/$2" || exit 1
			if [[ -n $3 ]]; then printf "AUTH %s\r\n" "$3" >&3; IFS= read -r _ <&3; fi
			printf "PING\r\n" >&3
			IFS= read -r line <&3
			[[ $line == +PONG* ]]' _ "$REDIS_HOST" "$REDIS_PORT" "$REDIS_PASS" 2>/dev/null
	fi
}

# The pid of the project-local redis-server, if it is running.
redis_local_pid() {
	local pid
	[[ -f $REDIS_PIDFILE ]] || return 1
	pid=$(cat "$REDIS_PIDFILE" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	[[ $(ps -p "$pid" -o comm= 2>/dev/null) == redis-server* ]] || return 1
	printf '%s\n' "$pid"
}

start_local_redis() {
	if redis_local_pid >/dev/null; then
		die "redis: the local server in .data/redis is running but not answering at $REDIS_HOST:$REDIS_PORT; run 'scripts/services.sh stop' first"
	fi
	mkdir -p "$REDIS_DATA"
	rm -f "$REDIS_PIDFILE"
	local args=(--daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$REDIS_DATA"
		--save "" --appendonly yes --appendfsync everysec --maxmemory-policy noeviction
		--logfile "$REDIS_LOG" --pidfile "$REDIS_PIDFILE")
	if [[ -n $REDIS_PASS ]]; then args+=(--requirepass "$REDIS_PASS"); fi
	if ! redis-server "${args[@]}" >/dev/null 2>&1; then
		show_log_tail "$REDIS_LOG"
		die "redis: redis-server failed to start"
	fi
	local i
	for ((i = 0; ; i++)); do
		if redis_answers; then break; fi
		# Give up early if the daemon already exited (port taken, bad option, ...).
		if ((i >= WAIT_SECS * 4)) || { ((i >= 8)) && ! redis_local_pid >/dev/null; }; then
			show_log_tail "$REDIS_LOG"
			die "redis: the local server did not answer at $REDIS_HOST:$REDIS_PORT (log: .data/redis/redis.log)"
		fi
		sleep 0.25
	done
	say "redis: started local server in .data/redis at $REDIS_HOST:$REDIS_PORT"
}

ensure_redis() {
	if redis_answers; then
		if redis_local_pid >/dev/null && is_local_host "$REDIS_HOST"; then
			say "redis: using local server in .data/redis at $REDIS_HOST:$REDIS_PORT"
		else
			say "redis: using running server at $REDIS_HOST:$REDIS_PORT"
		fi
		return
	fi
	if tcp_open "$REDIS_HOST" "$REDIS_PORT"; then
		if wait_until 5 redis_answers; then
			say "redis: using running server at $REDIS_HOST:$REDIS_PORT"
			return
		fi
		die "redis: something listens at $REDIS_HOST:$REDIS_PORT but does not answer PING (wrong password in REDIS_URL?)"
	fi
	if ! is_local_host "$REDIS_HOST"; then
		die "redis: no server answers at $REDIS_HOST:$REDIS_PORT; this script only starts servers on 127.0.0.1/localhost"
	fi
	if command -v redis-server >/dev/null 2>&1; then
		start_local_redis
		return
	fi
	if can_apt; then
		apt_install redis-server
		command -v redis-server >/dev/null 2>&1 || die "redis: installed redis-server but it is not on PATH"
		# The package may have started its own server on the default port.
		if redis_answers; then
			say "redis: installed redis-server; using the server it started at $REDIS_HOST:$REDIS_PORT"
			return
		fi
		start_local_redis
		return
	fi
	install_hint Redis redis-server redis
}

stop_redis() {
	local pid i
	if ! pid=$(redis_local_pid); then
		rm -f "$REDIS_PIDFILE"
		say "redis: no local server running in .data/redis"
		return
	fi
	# SIGTERM makes redis-server shut down cleanly (same as SHUTDOWN: it flushes its append-only
	# file; no snapshot, --save "").
	kill -TERM "$pid"
	for ((i = 0; i < WAIT_SECS * 4; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	if kill -0 "$pid" 2>/dev/null; then die "redis: local server (pid $pid) did not stop"; fi
	rm -f "$REDIS_PIDFILE"
	say "redis: stopped local server in .data/redis"
}

# ---------------------------------------------------------------------------------------------
# HAProxy: a binary for the fleet tests (`make test-fleet`), which start and stop it themselves.

find_haproxy() {
	HAPROXY=$(command -v haproxy 2>/dev/null || true)
	if [[ -z $HAPROXY && -x /usr/sbin/haproxy ]]; then HAPROXY=/usr/sbin/haproxy; fi
	[[ -n $HAPROXY ]]
}

ensure_haproxy() {
	if find_haproxy; then
		say "haproxy: using $HAPROXY ($("$HAPROXY" -v 2>/dev/null | head -n 1))"
		return
	fi
	if can_apt; then
		apt_install haproxy
		find_haproxy || die "haproxy: installed the haproxy package but cannot find the haproxy binary"
		say "haproxy: installed $HAPROXY ($("$HAPROXY" -v 2>/dev/null | head -n 1))"
		return
	fi
	warn "haproxy: HAProxy is not installed. Install it, then re-run this script:"
	warn "  Debian/Ubuntu: sudo apt-get install haproxy"
	warn "  macOS:         brew install haproxy"
	exit 1
}

find_wrk() {
	WRK=$(command -v wrk 2>/dev/null || true)
	[[ -n $WRK ]]
}

ensure_wrk() {
	if find_wrk; then
		say "wrk: using $WRK"
		return
	fi
	if can_apt; then
		apt_install wrk
		find_wrk || die "wrk: installed the wrk package but cannot find the wrk binary"
		say "wrk: installed $WRK"
		return
	fi
	warn "wrk: wrk is not installed. Install it, then re-run this script:"
	warn "  Debian/Ubuntu: sudo apt-get install wrk"
	warn "  macOS:         brew install wrk"
	exit 1
}

find_promtool() {
	PROMTOOL=$(command -v promtool 2>/dev/null || true)
	if [[ -z $PROMTOOL && -x /usr/bin/promtool ]]; then PROMTOOL=/usr/bin/promtool; fi
	[[ -n $PROMTOOL ]]
}

ensure_promtool() {
	if find_promtool; then
		say "promtool: using $PROMTOOL ($("$PROMTOOL" --version 2>&1 | head -n 1))"
		return
	fi
	if can_apt; then
		# Debian's prometheus package is the one that ships promtool; its server is not needed.
		apt_install prometheus
		find_promtool || die "promtool: installed the prometheus package but cannot find the promtool binary"
		say "promtool: installed $PROMTOOL ($("$PROMTOOL" --version 2>&1 | head -n 1))"
		return
	fi
	warn "promtool: promtool is not installed. Install it, then re-run this script:"
	warn "  Debian/Ubuntu: sudo apt-get install prometheus"
	warn "  macOS:         brew install prometheus"
	exit 1
}

# ---------------------------------------------------------------------------------------------
# Chromium: the browser e2e's API explorer test drives headless (chromedp). The names match what
# the test looks for (e2e/explorer_test.go): Debian's chromium, Ubuntu's chromium-browser, Chrome.

find_chromium() {
	local c
	CHROMIUM=""
	for c in chromium chromium-browser google-chrome google-chrome-stable; do
		if command -v "$c" >/dev/null 2>&1; then
			CHROMIUM=$(command -v "$c")
			return 0
		fi
	done
	return 1
}

ensure_chromium() {
	if find_chromium; then
		say "chromium: using $CHROMIUM"
		return
	fi
	if can_apt; then
		apt_install chromium
		find_chromium || die "chromium: installed the chromium package but cannot find the chromium binary"
		say "chromium: installed $CHROMIUM"
		return
	fi
	warn "chromium: Chromium is not installed. Install it, then re-run this script:"
	warn "  Debian:        sudo apt-get install chromium"
	warn "  Ubuntu:        sudo apt-get install chromium-browser"
	warn "  macOS:         brew install --cask chromium"
	exit 1
}

# ---------------------------------------------------------------------------------------------

case "${1:-start}" in
start | up | "")
	ensure_postgres
	ensure_database
	ensure_redis
	;;
haproxy)
	ensure_haproxy
	;;
wrk)
	ensure_wrk
	;;
promtool)
	ensure_promtool
	;;
chromium)
	ensure_chromium
	;;
replica | pgbouncer)
	exec "$ROOT_DIR/scripts/replica.sh" "$@"
	;;
stop | down)
	stop_postgres
	stop_redis
	;;
-h | --help | help)
	sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	;;
*)
	die "usage: $0 [start|haproxy|wrk|promtool|chromium|replica|pgbouncer|stop]"
	;;
esac
