#!/usr/bin/env bash
# A throwaway 3-master Redis Cluster (no replicas) on loopback, for `make test-cluster`.
#
#   scripts/redis-cluster.sh start   start the nodes (if not running), create the cluster (if not
#                                    created), wait until it serves, print the TEST_REDIS_URL
#   scripts/redis-cluster.sh stop    shut the nodes down and delete their data
#   scripts/redis-cluster.sh url     print the TEST_REDIS_URL of the cluster
#
# Settings (environment):
#   REDIS_CLUSTER_PORTS  space-separated ports of the masters (default "7101 7102 7103"); the
#                        cluster bus uses each port + 10000
#   REDIS_CLUSTER_DIR    where the nodes keep their config, log and pid (default
#                        .data/redis-cluster under the project)
#
# The nodes keep nothing on disk but cluster state (--save "" --appendonly no). Both commands are
# idempotent: start on a running cluster only checks it, stop on a stopped one does nothing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
read -r -a ports <<<"${REDIS_CLUSTER_PORTS:-7101 7102 7103}"
dir=${REDIS_CLUSTER_DIR:-$root/.data/redis-cluster}
host=127.0.0.1

die() { echo "redis-cluster: $*" >&2; exit 1; }

if (( ${#ports[@]} < 3 )); then
  die "REDIS_CLUSTER_PORTS needs at least 3 ports (a cluster needs 3 masters), got '${ports[*]}'"
fi

cli() { redis-cli -h "$host" -p "$1" "${@:2}"; }

# alive PORT: the node answers PING.
alive() { [[ $(cli "$1" ping 2>/dev/null) == PONG ]]; }

# field PORT NAME: a field of CLUSTER INFO (empty when the node does not answer).
field() { cli "$1" cluster info 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p"; }

url() {
  local u="redis://$host:${ports[0]}" sep='?' p
  for p in "${ports[@]:1}"; do
    u+="${sep}addr=$host:$p"
    sep='&'
  done
  printf '%s\n' "$u"
}

start() {
  command -v redis-server >/dev/null || die "redis-server is not installed (apt-get install redis-server)"
  command -v redis-cli >/dev/null || die "redis-cli is not installed (apt-get install redis-tools)"
  local p
  for p in "${ports[@]}"; do
    if alive "$p"; then
      [[ $(cli "$p" info cluster 2>/dev/null | tr -d '\r') == *cluster_enabled:1* ]] ||
        die "port $p answers but is not a cluster node (another Redis?); choose REDIS_CLUSTER_PORTS"
      continue
    fi
    mkdir -p "$dir/$p"
    redis-server --port "$p" --bind "$host" --protected-mode yes \
      --cluster-enabled yes --cluster-config-file "$dir/$p/nodes.conf" --cluster-node-timeout 5000 \
      --dir "$dir/$p" --save "" --appendonly no \
      --daemonize yes --pidfile "$dir/$p/redis.pid" --logfile "$dir/$p/redis.log" --loglevel warning
  done
  for p in "${ports[@]}"; do
    local i
    for ((i = 0; i < 100; i++)); do
      alive "$p" && break
      sleep 0.1
    done
    alive "$p" || die "node $p did not start; see $dir/$p/redis.log"
  done

  # Create the cluster unless the nodes already are one (every slot assigned).
  if [[ $(field "${ports[0]}" cluster_slots_assigned) != 16384 ]]; then
    local addrs=()
    for p in "${ports[@]}"; do addrs+=("$host:$p"); done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1 ||
      { cat "$dir/create.log" >&2; die "redis-cli --cluster create failed"; }
  fi

  # Wait (bounded) until every node reports the cluster as serving.
  local ok i
  for ((i = 0; i < 150; i++)); do
    ok=1
    for p in "${ports[@]}"; do
      [[ $(field "$p" cluster_state) == ok ]] || { ok=0; break; }
    done
    ((ok)) && break
    sleep 0.2
  done
  ((ok)) || die "the cluster did not reach cluster_state:ok within 30s; see $dir/*/redis.log"
  echo "redis cluster up on $host:${ports[*]}" >&2
  echo "TEST_REDIS_MODE=cluster TEST_REDIS_URL='$(url)'"
}

# ours PORT: the node on PORT is the one this script started (its pid is in our pid file), so
# stop never shuts down some other Redis that happens to listen there.
ours() {
  local pid
  pid=$(cat "$dir/$1/redis.pid" 2>/dev/null) || return 1
  [[ -n $pid && $(cli "$1" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p') == "$pid" ]]
}

stop() {
  local p
  for p in "${ports[@]}"; do
    if alive "$p"; then
      ours "$p" || die "port $p answers but is not a node this script started (no matching $dir/$p/redis.pid); not stopping it"
      cli "$p" shutdown nosave >/dev/null 2>&1 || true
      local i
      for ((i = 0; i < 100; i++)); do
        alive "$p" || break
        sleep 0.1
      done
      ! alive "$p" || die "node $p did not shut down"
    fi
  done
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) url ;;
  *) die "usage: $0 start|stop|url" ;;
esac
