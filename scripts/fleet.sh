#!/usr/bin/env bash
# Run a local fleet: FLEET_SIZE inkwell instances behind HAProxy, as production runs any number
# of instances behind a load balancer.
#
#   scripts/fleet.sh          start everything and stay in the foreground; Ctrl-C stops it
#   scripts/fleet.sh --help   this text
#
# Settings (environment):
#   FLEET_SIZE          number of instances (default 3)
#   FLEET_PORT          the balancer's port on 127.0.0.1 (default 8080)
#   FLEET_BASE_PORT     the first instance's port (default FLEET_PORT+1); the others follow it
#   FLEET_METRICS_PORT  the first instance's metrics port (GET /metrics; default 9464); the others
#                       follow it
#   DATABASE_URL, REDIS_URL  as for `make run`: one database and one Redis for every instance
#   INKWELL_JWT_SECRET  when set, every instance signs with it; otherwise every instance reads the
#                       dev secret file .data/jwt-secret (INKWELL_DEV_SECRET_FILE; created on
#                       first use), so a token one instance issues works on all of them
#   Other INKWELL_* settings reach every instance unchanged, except INKWELL_ADDR and
#   INKWELL_METRICS_ADDR (one port each), INKWELL_MIGRATE_ON_START (true) and INKWELL_PPROF_ADDR
#   (unset: the instances would fight over its port); INKWELL_TRUSTED_PROXIES defaults to
#   127.0.0.1, the balancer.
#
# Steps: scripts/services.sh makes sure PostgreSQL, Redis and the database are there; the binary
# is built once into .data/fleet/inkwell; the instances start together on 127.0.0.1 ports
# FLEET_BASE_PORT.. (each with INKWELL_MIGRATE_ON_START=true: the migration advisory lock lets one
# apply what is pending while the others wait; logs in .data/fleet/app-N.log); once each answers
# GET /readyz, .data/fleet/haproxy.cfg is written (round robin, GET /readyz health checks every
# second, an X-Served-By response header naming the instance, X-Forwarded-For for the instances,
# which trust 127.0.0.1) and HAProxy from the OS packages serves it on 127.0.0.1:FLEET_PORT (log:
# .data/fleet/haproxy.log). Without HAProxy: as root on Debian/Ubuntu it is installed with
# apt-get; otherwise the script says what to install and exits 1.
#
# An instance that exits is reported and the others go on serving. Ctrl-C (or SIGTERM) stops the
# instances and HAProxy. PostgreSQL and Redis stay up, as after `make run`, unless this script
# found neither running: then it stops the project-local servers that scripts/services.sh
# started under .data/ (scripts/services.sh stop).
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FLEET_DIR="$ROOT_DIR/.data/fleet"
BIN="$FLEET_DIR/inkwell"
HAPROXY_CFG="$FLEET_DIR/haproxy.cfg"
HAPROXY_LOG="$FLEET_DIR/haproxy.log"
WAIT_SECS=60

say() { printf 'fleet: %s\n' "$*"; }
warn() { printf 'fleet: %s\n' "$*" >&2; }
die() {
	printf 'fleet: %s\n' "$*" >&2
	exit 1
}

case "${1:-}" in
"") ;;
-h | --help | help)
	sed -n '2,33p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit 0
	;;
*) die "usage: $0 [--help]" ;;
esac

FLEET_SIZE="${FLEET_SIZE:-3}"
FLEET_PORT="${FLEET_PORT:-8080}"
[[ $FLEET_SIZE =~ ^[1-9][0-9]*$ ]] || die "FLEET_SIZE must be a whole number of at least 1, not '$FLEET_SIZE'"
[[ $FLEET_PORT =~ ^[1-9][0-9]*$ ]] || die "FLEET_PORT must be a port number, not '$FLEET_PORT'"
FLEET_BASE_PORT="${FLEET_BASE_PORT:-$((FLEET_PORT + 1))}"
FLEET_METRICS_PORT="${FLEET_METRICS_PORT:-9464}"
[[ $FLEET_METRICS_PORT =~ ^[1-9][0-9]*$ ]] || die "FLEET_METRICS_PORT must be a port number, not '$FLEET_METRICS_PORT'"
[[ $FLEET_BASE_PORT =~ ^[1-9][0-9]*$ ]] || die "FLEET_BASE_PORT must be a port number, not '$FLEET_BASE_PORT'"
((FLEET_BASE_PORT + FLEET_SIZE - 1 <= 65535)) || die "ports $FLEET_BASE_PORT.. do not fit $FLEET_SIZE instances"
if ((FLEET_PORT >= FLEET_BASE_PORT && FLEET_PORT < FLEET_BASE_PORT + FLEET_SIZE)); then
	die "FLEET_PORT $FLEET_PORT is one of the instances' ports ($FLEET_BASE_PORT..$((FLEET_BASE_PORT + FLEET_SIZE - 1)))"
fi

DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/inkwell?sslmode=disable}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
export DATABASE_URL REDIS_URL

is_root() { [[ $(id -u) -eq 0 ]]; }
can_apt() { is_root && [[ -f /etc/debian_version ]] && command -v apt-get >/dev/null 2>&1; }

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

# http_ok URL: GET URL answers 200.
http_ok() {
	if command -v curl >/dev/null 2>&1; then
		curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null
	else
		local rest=${1#http://} hostport path status
		hostport=${rest%%/*} path=/${rest#*/}
		# shellcheck disable=SC2016 # expanded by the inner bash
		status=$(run_timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/$2" || exit 1
			printf "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" "$3" "$1" >&3
			IFS= read -r line <&3 && printf "%s" "$line"' _ "${hostport%:*}" "${hostport##*:}" "$path" 2>/dev/null) || return 1
		[[ $status == *' 200 '* ]]
	fi
}

# url_host_port URL DEFAULT_PORT: "host port" of a postgres:// or redis:// URL.
url_host_port() {
	local rest=${1#*://}
	rest=${rest%%[/?#]*}
	rest=${rest##*@}
	if [[ $rest == *:* ]]; then
		printf '%s %s\n' "${rest%%:*}" "${rest##*:}"
	else
		printf '%s %s\n' "${rest:-127.0.0.1}" "$2"
	fi
}

show_log_tail() {
	if [[ -f $1 ]]; then
		warn "---- last lines of ${1#"$ROOT_DIR"/} ----"
		tail -n 20 "$1" >&2 || true
	fi
}

# ---------------------------------------------------------------------------------------------
# HAProxy from the OS packages: scripts/services.sh installs it when missing (one place for that).

ensure_haproxy() {
	"$ROOT_DIR/scripts/services.sh" haproxy
	HAPROXY=$(command -v haproxy 2>/dev/null || true)
	if [[ -z $HAPROXY && -x /usr/sbin/haproxy ]]; then HAPROXY=/usr/sbin/haproxy; fi
	[[ -n $HAPROXY ]] || die "haproxy: scripts/services.sh haproxy found no haproxy binary"
}

write_haproxy_cfg() {
	local i
	{
		cat <<EOF
# Written by scripts/fleet.sh at every start; edits are lost. deploy/haproxy.cfg is the Docker
# Compose counterpart.
global
    log stdout format raw local0
    maxconn 4096

defaults
    mode http
    log global
    option httplog
    # The instances trust 127.0.0.1 (INKWELL_TRUSTED_PROXIES): they take the client's address,
    # which keys rate limits, from this header.
    option forwardfor
    # A connection refused by a stopped instance is retried on another one.
    retries 2
    option redispatch 1
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s

frontend inkwell
    bind 127.0.0.1:$FLEET_PORT
    default_backend instances

backend instances
    balance roundrobin
    # An instance takes traffic once /readyz (PostgreSQL, Redis, migrations) answers 200 twice in
    # a row, and none after two failures.
    option httpchk
    http-check send meth GET uri /readyz
    http-check expect status 200
    default-server inter 1s fall 2 rise 2
    # Which instance answered: for seeing the round robin (curl -i).
    http-response set-header X-Served-By %s
EOF
		for ((i = 1; i <= FLEET_SIZE; i++)); do
			printf '    server app%d 127.0.0.1:%d check\n' "$i" "$((FLEET_BASE_PORT + i - 1))"
		done
	} >"$HAPROXY_CFG"
}

# ---------------------------------------------------------------------------------------------
# Processes this script started, stopped on exit.

PIDS=()
NAMES=()
LOGS=()
STOP_SERVICES=0

cleanup() {
	local status=$? i pid deadline
	trap - EXIT INT TERM
	if ((${#PIDS[@]} > 0)); then
		say "stopping ${NAMES[*]}"
		# The balancer first (it is last in PIDS), so no new request reaches a stopping instance.
		for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do kill -TERM "${PIDS[$i]}" 2>/dev/null || true; done
		# The instances finish their requests and jobs first (INKWELL_SHUTDOWN_TIMEOUT, 15 s).
		deadline=$((SECONDS + 30))
		for i in "${!PIDS[@]}"; do
			pid=${PIDS[$i]}
			while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
			if kill -0 "$pid" 2>/dev/null; then
				warn "${NAMES[$i]} (pid $pid) did not stop within 30 s; killing it"
				kill -KILL "$pid" 2>/dev/null || true
			fi
			wait "$pid" 2>/dev/null || true
		done
		say "stopped the instances and haproxy"
	fi
	if ((STOP_SERVICES)); then
		"$ROOT_DIR/scripts/services.sh" stop || true
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------------------------

cd "$ROOT_DIR"
mkdir -p "$FLEET_DIR"

for ((i = 0; i < FLEET_SIZE; i++)); do
	port=$((FLEET_BASE_PORT + i))
	if tcp_open 127.0.0.1 "$port"; then die "port $port (instance $((i + 1))) is in use; choose other ports with FLEET_BASE_PORT"; fi
	port=$((FLEET_METRICS_PORT + i))
	if tcp_open 127.0.0.1 "$port"; then die "metrics port $port (instance $((i + 1))) is in use; choose other ports with FLEET_METRICS_PORT"; fi
done
if tcp_open 127.0.0.1 "$FLEET_PORT"; then die "port $FLEET_PORT (the balancer) is in use; choose another with FLEET_PORT"; fi

ensure_haproxy

read -r pg_host pg_port < <(url_host_port "$DATABASE_URL" 5432)
read -r redis_host redis_port < <(url_host_port "$REDIS_URL" 6379)
if ! tcp_open "$pg_host" "$pg_port" && ! tcp_open "$redis_host" "$redis_port"; then
	STOP_SERVICES=1 # neither was running: whatever services.sh starts is ours to stop
fi
"$ROOT_DIR/scripts/services.sh"

say "building $BIN"
go build -o "$BIN" ./cmd/inkwell

if [[ -n ${INKWELL_JWT_SECRET:-} ]]; then
	say "every instance signs tokens with INKWELL_JWT_SECRET"
else
	say "INKWELL_JWT_SECRET is not set: every instance signs tokens with the dev secret file ${INKWELL_DEV_SECRET_FILE:-.data/jwt-secret}"
fi

rm -f "$FLEET_DIR"/app-*.log # a larger fleet's last run left more
for ((i = 1; i <= FLEET_SIZE; i++)); do
	port=$((FLEET_BASE_PORT + i - 1))
	log="$FLEET_DIR/app-$i.log"
	metrics_port=$((FLEET_METRICS_PORT + i - 1))
	env -u INKWELL_PPROF_ADDR INKWELL_ADDR="127.0.0.1:$port" INKWELL_METRICS_ADDR="127.0.0.1:$metrics_port" INKWELL_MIGRATE_ON_START=true \
		INKWELL_TRUSTED_PROXIES="${INKWELL_TRUSTED_PROXIES:-127.0.0.1}" \
		"$BIN" serve >>"$log" 2>&1 &
	PIDS+=("$!") NAMES+=("app$i") LOGS+=("$log")
	say "app$i: pid $! on 127.0.0.1:$port, metrics on 127.0.0.1:$metrics_port (log .data/fleet/app-$i.log)"
done

for ((i = 1; i <= FLEET_SIZE; i++)); do
	port=$((FLEET_BASE_PORT + i - 1))
	for ((t = 0; ; t++)); do
		if http_ok "http://127.0.0.1:$port/readyz"; then break; fi
		if ! kill -0 "${PIDS[$((i - 1))]}" 2>/dev/null; then
			show_log_tail "${LOGS[$((i - 1))]}"
			die "app$i exited during start"
		fi
		if ((t >= WAIT_SECS * 4)); then
			show_log_tail "${LOGS[$((i - 1))]}"
			die "app$i did not answer GET /readyz on 127.0.0.1:$port within ${WAIT_SECS}s"
		fi
		sleep 0.25
	done
done
say "all $FLEET_SIZE instances are ready"

write_haproxy_cfg
if ! out=$("$HAPROXY" -c -f "$HAPROXY_CFG" 2>&1); then
	printf '%s\n' "$out" >&2
	die "haproxy rejects the generated $HAPROXY_CFG (HAProxy 2.2 or newer is needed)"
fi
: >"$HAPROXY_LOG"
"$HAPROXY" -db -f "$HAPROXY_CFG" >>"$HAPROXY_LOG" 2>&1 &
HAPROXY_PID=$!
PIDS+=("$HAPROXY_PID") NAMES+=("haproxy") LOGS+=("$HAPROXY_LOG")
for ((t = 0; ; t++)); do
	if http_ok "http://127.0.0.1:$FLEET_PORT/readyz"; then break; fi
	if ! kill -0 "$HAPROXY_PID" 2>/dev/null || ((t >= WAIT_SECS * 4)); then
		show_log_tail "$HAPROXY_LOG"
		die "haproxy did not serve GET /readyz on 127.0.0.1:$FLEET_PORT"
	fi
	sleep 0.25
done
say "haproxy: pid $HAPROXY_PID, round robin over $FLEET_SIZE instances on http://127.0.0.1:$FLEET_PORT (config .data/fleet/haproxy.cfg, log .data/fleet/haproxy.log)"
say "ready: http://127.0.0.1:$FLEET_PORT/api  (X-Served-By names the instance; Ctrl-C stops the fleet)"

# Stay in the foreground until a signal. An instance that exits is reported and left out (the
# balancer's health check stops sending it requests); the fleet stops when HAProxy or the last
# instance exits.
declare -A GONE=()
while :; do
	for i in "${!PIDS[@]}"; do
		if [[ -z ${GONE[$i]:-} ]] && ! kill -0 "${PIDS[$i]}" 2>/dev/null; then
			GONE[$i]=1
			show_log_tail "${LOGS[$i]}"
			if [[ ${PIDS[$i]} == "$HAPROXY_PID" ]]; then die "haproxy (pid $HAPROXY_PID) exited; stopping the fleet"; fi
			warn "${NAMES[$i]} (pid ${PIDS[$i]}) exited; the others go on serving"
		fi
	done
	if ((${#GONE[@]} >= FLEET_SIZE)); then die "every instance exited; stopping"; fi
	sleep 1 &
	wait $! || true
done
