#!/usr/bin/env bash
# A local Redis Cluster for tests and development: three masters on loopback, no replicas, nothing
# kept on disk beyond the cluster's own nodes-<port>.conf in a temporary directory.
#
#   scripts/redis-cluster.sh start [PORT]   start on PORT, PORT+1, PORT+2 (default 7100, or the
#                                           first free run of three from there); prints
#                                           TEST_REDIS_CLUSTER_NODES=127.0.0.1:P1,… on stdout
#   scripts/redis-cluster.sh stop           stop the cluster this script started
#   scripts/redis-cluster.sh nodes          print the nodes of the running one (host:port,…)
#
# State (ports, pids, data directory) lives in .data/redis-cluster/ of the repository, so stop
# only ever stops the servers that start started. Use it with:
#   export TEST_REDIS_CLUSTER_NODES=$(scripts/redis-cluster.sh start | sed -n 's/^TEST_REDIS_CLUSTER_NODES=//p')
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
STATE_DIR="$PWD/.data/redis-cluster"
WAIT_S=20

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

nodes_of() {
  local out=() p
  for p in "$@"; do out+=("127.0.0.1:$p"); done
  (IFS=,; echo "${out[*]}")
}

start() {
  if [[ -f "$STATE_DIR/ports" ]]; then
    echo "redis-cluster: already started (ports $(cat "$STATE_DIR/ports")); stop it first" >&2
    echo "TEST_REDIS_CLUSTER_NODES=$(nodes_of $(cat "$STATE_DIR/ports"))"
    return 0
  fi
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || {
    echo "redis-cluster: redis-server and redis-cli are needed (Debian package redis-server)" >&2
    exit 1
  }
  local base=${1:-7100} ports=()
  # The first run of three free ports from base (the cluster bus uses port + 10000 too).
  while ((${#ports[@]} < 3)); do
    if ((base > 65535 - 10000)); then echo "redis-cluster: no free ports" >&2; exit 1; fi
    if port_free "$base" && port_free $((base + 10000)); then ports+=("$base"); else ports=(); fi
    base=$((base + 1))
  done
  mkdir -p "$STATE_DIR"
  local data
  data=$(mktemp -d "${TMPDIR:-/tmp}/postern-redis-cluster.XXXXXX")
  echo "$data" >"$STATE_DIR/dir"
  : >"$STATE_DIR/pids"
  local p
  for p in "${ports[@]}"; do
    redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file "nodes-$p.conf" \
      --dir "$data" --save "" --appendonly no --daemonize yes --pidfile "$data/redis-$p.pid" \
      --logfile "$data/redis-$p.log"
  done
  echo "${ports[*]}" >"$STATE_DIR/ports"
  local deadline=$((SECONDS + WAIT_S))
  for p in "${ports[@]}"; do
    until [[ "$(redis-cli -p "$p" ping 2>/dev/null || true)" == PONG ]]; do
      ((SECONDS < deadline)) || { echo "redis-cluster: 127.0.0.1:$p did not answer" >&2; stop; exit 1; }
      sleep 0.1
    done
    cat "$data/redis-$p.pid" >>"$STATE_DIR/pids"
  done
  redis-cli --cluster create $(for p in "${ports[@]}"; do printf '127.0.0.1:%s ' "$p"; done) \
    --cluster-replicas 0 --cluster-yes >"$data/create.log" 2>&1 || {
    cat "$data/create.log" >&2
    stop
    exit 1
  }
  for p in "${ports[@]}"; do
    until redis-cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; do
      ((SECONDS < deadline)) || { echo "redis-cluster: 127.0.0.1:$p not cluster_state:ok within ${WAIT_S}s" >&2; stop; exit 1; }
      sleep 0.1
    done
  done
  echo "redis-cluster: three masters on $(nodes_of "${ports[@]}"), data in $data" >&2
  echo "TEST_REDIS_CLUSTER_NODES=$(nodes_of "${ports[@]}")"
}

stop() {
  [[ -f "$STATE_DIR/pids" ]] || { echo "redis-cluster: not started by this script" >&2; return 0; }
  local pid
  for pid in $(cat "$STATE_DIR/pids"); do kill "$pid" 2>/dev/null || true; done
  for pid in $(cat "$STATE_DIR/pids"); do
    local deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  done
  [[ -f "$STATE_DIR/dir" ]] && rm -rf "$(cat "$STATE_DIR/dir")"
  rm -rf "$STATE_DIR"
  echo "redis-cluster: stopped" >&2
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) stop ;;
  nodes) [[ -f "$STATE_DIR/ports" ]] && nodes_of $(cat "$STATE_DIR/ports") ;;
  *) echo "usage: $0 start [PORT] | stop | nodes" >&2; exit 2 ;;
esac
