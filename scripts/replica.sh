#!/usr/bin/env bash
# A real PostgreSQL streaming replica and a real PgBouncer, for the read-replica work (#34) and
# its tests. Run through scripts/services.sh:
#
#   scripts/services.sh replica [start]   a primary cluster and its streaming replica under .data/
#   scripts/services.sh replica delay D   set the replica's recovery_min_apply_delay (e.g. 500ms, 0)
#   scripts/services.sh replica status    both URLs, and how far the replica has replayed
#   scripts/services.sh replica stop      stop both (the data directories stay)
#   scripts/services.sh pgbouncer [start] a PgBouncer in transaction pooling mode before the primary
#   scripts/services.sh pgbouncer stop
#
# Settings (environment):
#   REPLICA_PRIMARY_PORT  default 5433   the primary of the pair
#   REPLICA_PORT          default 5434   its replica
#   REPLICA_DELAY         default 0      recovery_min_apply_delay at start (deterministic lag)
#   PGBOUNCER_PORT        default 6432
#
# Why a pair of its own rather than a replica of the PostgreSQL at DATABASE_URL: streaming needs a
# `replication` line in the primary's pg_hba.conf and WAL settings a developer's (or CI's) server
# may not have, and this script does not edit a server it did not make. The pair is a real primary
# and a real standby (pg_basebackup -R, physical streaming), on ports of their own, under
# .data/replica-primary and .data/replica; tests create their databases on the primary, and the
# standby replays them like everything else. PgBouncer comes from the OS packages (Debian's 1.18
# has no protocol-level prepared statements: the reason for DATABASE_POOLER=pgbouncer).
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA_DIR="$ROOT_DIR/.data"
PRIMARY_DATA="$DATA_DIR/replica-primary"
REPLICA_DATA="$DATA_DIR/replica"
BOUNCER_DIR="$DATA_DIR/pgbouncer"
REPLICA_PRIMARY_PORT="${REPLICA_PRIMARY_PORT:-5433}"
REPLICA_PORT="${REPLICA_PORT:-5434}"
REPLICA_DELAY="${REPLICA_DELAY:-0}"
PGBOUNCER_PORT="${PGBOUNCER_PORT:-6432}"
WAIT_SECS=30

say() { printf '%s\n' "$*"; }
die() {
	printf 'replica: %s\n' "$*" >&2
	exit 1
}
is_root() { [[ $(id -u) -eq 0 ]]; }
can_apt() { is_root && [[ -f /etc/debian_version ]] && command -v apt-get >/dev/null 2>&1; }

find_pg_bins() {
	local d
	PG_BIN=$(for d in /usr/lib/postgresql/*/bin /usr/pgsql-*/bin /opt/homebrew/opt/postgresql@*/bin /usr/local/opt/postgresql@*/bin; do
		if [[ -x $d/initdb && -x $d/pg_ctl && -x $d/pg_basebackup ]]; then printf '%s\n' "$d"; fi
	done | sort -V | tail -n 1)
	[[ -n $PG_BIN ]] || die "cannot find initdb, pg_ctl and pg_basebackup (install PostgreSQL's server package)"
}

# The OS user the servers run as: PostgreSQL and PgBouncer refuse to run as root.
OS_USER=""
pick_os_user() {
	if ! is_root; then
		OS_USER=""
	elif id -u postgres >/dev/null 2>&1; then
		OS_USER=postgres
	else
		id -u inkwell-pg >/dev/null 2>&1 || useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin inkwell-pg
		OS_USER=inkwell-pg
	fi
}

as_user() {
	if [[ -n $OS_USER ]]; then
		(cd / && runuser -u "$OS_USER" -- "$@")
	else
		"$@"
	fi
}

own() { if [[ -n $OS_USER ]]; then chown -R "$OS_USER:" "$@"; fi; }

running() { [[ -f $1/PG_VERSION ]] && as_user "$PG_BIN/pg_ctl" status -D "$1" >/dev/null 2>&1; }

start_cluster() { # DIR PORT
	running "$1" && return 0
	if ! as_user "$PG_BIN/pg_ctl" -D "$1" -l "$1.log" -o "-h 127.0.0.1 -p $2 -k ''" -w -t "$WAIT_SECS" start >/dev/null 2>&1; then
		tail -n 20 "$1.log" >&2 || true
		die "the cluster in ${1#"$ROOT_DIR"/} did not start on port $2 (log: ${1#"$ROOT_DIR"/}.log)"
	fi
}

psql_at() { # PORT SQL
	psql -X -q -A -t -h 127.0.0.1 -p "$1" -U postgres -d postgres -c "$2"
}

# pair_running: a primary answers on REPLICA_PRIMARY_PORT and a standby on REPLICA_PORT streams
# from it (another checkout's pair, say: its .data is not this one's, its servers are as good).
pair_running() {
	[[ $(psql_at "$REPLICA_PRIMARY_PORT" "SELECT pg_is_in_recovery()" 2>/dev/null) == f ]] &&
		[[ $(psql_at "$REPLICA_PORT" "SELECT pg_is_in_recovery() AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE sender_port = $REPLICA_PRIMARY_PORT AND status = 'streaming')" 2>/dev/null) == t ]]
}

replica_start() {
	if pair_running; then
		replica_delay "$REPLICA_DELAY" >/dev/null
		say "replica: using the running primary on port $REPLICA_PRIMARY_PORT and its streaming replica on port $REPLICA_PORT (recovery_min_apply_delay $REPLICA_DELAY)"
		return 0
	fi
	find_pg_bins
	pick_os_user
	mkdir -p "$DATA_DIR"
	# The servers' user must reach its directories inside .data (search, not read).
	if [[ -n $OS_USER ]]; then chmod a+x "$DATA_DIR"; fi
	if [[ ! -f $PRIMARY_DATA/PG_VERSION ]]; then
		mkdir -p "$PRIMARY_DATA"
		own "$PRIMARY_DATA"
		chmod 700 "$PRIMARY_DATA"
		as_user "$PG_BIN/initdb" -D "$PRIMARY_DATA" -U postgres --auth=trust --encoding=UTF8 --no-locale >"$DATA_DIR/replica-initdb.log" 2>&1 ||
			die "initdb failed (log: .data/replica-initdb.log)"
		cat >>"$PRIMARY_DATA/postgresql.conf" <<-EOF
			# scripts/replica.sh: a primary with a streaming standby
			wal_level = replica
			max_wal_senders = 5
			wal_keep_size = 256MB
			max_connections = 100
			fsync = off
			synchronous_commit = off
		EOF
		echo "host replication postgres 127.0.0.1/32 trust" >>"$PRIMARY_DATA/pg_hba.conf"
	fi
	touch "$PRIMARY_DATA.log" "$REPLICA_DATA.log"
	own "$PRIMARY_DATA.log" "$REPLICA_DATA.log"
	start_cluster "$PRIMARY_DATA" "$REPLICA_PRIMARY_PORT"
	if [[ ! -f $REPLICA_DATA/PG_VERSION ]]; then
		mkdir -p "$REPLICA_DATA"
		own "$REPLICA_DATA"
		chmod 700 "$REPLICA_DATA"
		as_user "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$REPLICA_PRIMARY_PORT" -U postgres -D "$REPLICA_DATA" -R -X stream \
			>"$DATA_DIR/replica-basebackup.log" 2>&1 || die "pg_basebackup failed (log: .data/replica-basebackup.log)"
		cat >>"$REPLICA_DATA/postgresql.auto.conf" <<-EOF
			hot_standby = on
			hot_standby_feedback = on
			recovery_min_apply_delay = '$REPLICA_DELAY'
		EOF
	fi
	start_cluster "$REPLICA_DATA" "$REPLICA_PORT"
	replica_delay "$REPLICA_DELAY" >/dev/null
	say "replica: primary postgres://postgres@127.0.0.1:$REPLICA_PRIMARY_PORT/postgres?sslmode=disable"
	say "replica: replica postgres://postgres@127.0.0.1:$REPLICA_PORT/postgres?sslmode=disable (recovery_min_apply_delay $REPLICA_DELAY)"
}

# recovery_min_apply_delay is reloadable: the standby replays each commit that much later than the
# primary made it, which is the lag the tests ask for.
replica_delay() {
	local d=${1:?usage: replica delay DURATION, e.g. 500ms or 0}
	[[ $d =~ ^[0-9]+(ms|s|min)?$ ]] || die "delay $d: want a number with ms, s or min"
	psql_at "$REPLICA_PORT" "ALTER SYSTEM SET recovery_min_apply_delay = '$d'" >/dev/null
	psql_at "$REPLICA_PORT" "SELECT pg_reload_conf()" >/dev/null
	say "replica: recovery_min_apply_delay = $d"
}

replica_status() {
	say "primary: $(psql_at "$REPLICA_PRIMARY_PORT" "SELECT pg_current_wal_lsn()" 2>/dev/null || echo down) (port $REPLICA_PRIMARY_PORT)"
	say "replica: $(psql_at "$REPLICA_PORT" "SELECT pg_last_wal_replay_lsn() || ' replayed, delay ' || current_setting('recovery_min_apply_delay')" 2>/dev/null || echo down) (port $REPLICA_PORT)"
}

replica_stop() {
	find_pg_bins
	pick_os_user
	local d
	for d in "$REPLICA_DATA" "$PRIMARY_DATA"; do
		if running "$d"; then as_user "$PG_BIN/pg_ctl" -D "$d" -m fast -w stop >/dev/null && say "replica: stopped ${d#"$ROOT_DIR"/}"; fi
	done
}

find_pgbouncer() {
	PGBOUNCER=$(command -v pgbouncer 2>/dev/null || true)
	if [[ -z $PGBOUNCER && -x /usr/sbin/pgbouncer ]]; then PGBOUNCER=/usr/sbin/pgbouncer; fi
	[[ -n $PGBOUNCER ]]
}

# A PgBouncer in transaction pooling mode in front of the pair's primary: every database name goes
# to the same name on the primary, trust auth (local tests only).
pgbouncer_start() {
	find_pg_bins
	if ! find_pgbouncer; then
		can_apt || die "PgBouncer is not installed: sudo apt-get install pgbouncer (macOS: brew install pgbouncer)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q pgbouncer >"$DATA_DIR/pgbouncer-install.log" 2>&1 || die "apt-get install pgbouncer failed (log: .data/pgbouncer-install.log)"
		find_pgbouncer || die "installed the pgbouncer package but cannot find the binary"
	fi
	pick_os_user
	mkdir -p "$BOUNCER_DIR"
	if [[ -n $OS_USER ]]; then chmod a+x "$DATA_DIR"; fi
	cat >"$BOUNCER_DIR/pgbouncer.ini" <<-EOF
		[databases]
		* = host=127.0.0.1 port=$REPLICA_PRIMARY_PORT
		[pgbouncer]
		listen_addr = 127.0.0.1
		listen_port = $PGBOUNCER_PORT
		unix_socket_dir =
		auth_type = trust
		auth_file = $BOUNCER_DIR/users.txt
		pool_mode = transaction
		admin_users = postgres
		max_client_conn = 500
		default_pool_size = 20
		ignore_startup_parameters = extra_float_digits
		pidfile = $BOUNCER_DIR/pgbouncer.pid
		logfile = $BOUNCER_DIR/pgbouncer.log
	EOF
	echo '"postgres" ""' >"$BOUNCER_DIR/users.txt"
	own "$BOUNCER_DIR"
	if [[ -f $BOUNCER_DIR/pgbouncer.pid ]] && kill -0 "$(cat "$BOUNCER_DIR/pgbouncer.pid")" 2>/dev/null; then
		kill -HUP "$(cat "$BOUNCER_DIR/pgbouncer.pid")" # reread the configuration written above
		say "pgbouncer: running at 127.0.0.1:$PGBOUNCER_PORT"
		return
	fi
	# Another checkout's PgBouncer on the port (as with the pair, see pair_running): use it.
	if "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PGBOUNCER_PORT" -d pgbouncer 2>/dev/null; then
		say "pgbouncer: one already answers at 127.0.0.1:$PGBOUNCER_PORT; using it"
		return
	fi
	as_user "$PGBOUNCER" -d "$BOUNCER_DIR/pgbouncer.ini" || die "pgbouncer did not start (log: .data/pgbouncer/pgbouncer.log)"
	say "pgbouncer: $("$PGBOUNCER" --version | head -n 1) at 127.0.0.1:$PGBOUNCER_PORT, transaction pooling, in front of port $REPLICA_PRIMARY_PORT"
}

pgbouncer_stop() {
	if [[ -f $BOUNCER_DIR/pgbouncer.pid ]] && kill "$(cat "$BOUNCER_DIR/pgbouncer.pid")" 2>/dev/null; then say "pgbouncer: stopped"; fi
}

case "${1:-}/${2:-start}" in
replica/start | replica/up) replica_start ;;
replica/delay) replica_delay "${3:-}" ;;
replica/status) replica_status ;;
replica/stop | replica/down) replica_stop ;;
pgbouncer/start | pgbouncer/up) pgbouncer_start ;;
pgbouncer/stop | pgbouncer/down) pgbouncer_stop ;;
*) die "usage: scripts/services.sh replica [start|delay D|status|stop] | pgbouncer [start|stop]" ;;
esac
