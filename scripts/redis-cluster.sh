#!/usr/bin/env bash
# A local Redis Cluster for tests and development: three masters on loopback (by default no
# replicas), nothing kept on disk beyond the cluster's own nodes-<port>.conf in a temporary directory.
#
#   scripts/redis-cluster.sh start [PORT]   start on PORT, PORT+1, … (default 7100, or the first
#                                           free run from there); prints
#                                           TEST_REDIS_CLUSTER_NODES=127.0.0.1:P1,… (the masters)
#   scripts/redis-cluster.sh stop           stop the cluster this script started
#   scripts/redis-cluster.sh nodes          print the masters it was started with (host:port,…)
#
# Environment:
#   REDIS_CLUSTER_REPLICAS=N        N replicas per master (default 0): 3 × (1 + N) servers, the
#                                   first three masters; start waits until every replica is in sync
#   REDIS_CLUSTER_NODE_TIMEOUT_MS   cluster-node-timeout (default Redis's 15000): how long a master
#                                   must be unreachable before its replica is promoted
#   REDIS_CLUSTER_SERVER_ARGS       more redis-server flags for every node, e.g.
#                                   "--cluster-require-full-coverage no --appendonly yes"
#   REDIS_CLUSTER_NAME=x            keep this cluster's state in .data/redis-cluster-x/, so a second
#                                   cluster (e.g. the failover report's) runs beside the tests' one
#
# State (ports, pids, data directory) lives in .data/redis-cluster[-NAME]/ of the repository, so
# stop only ever stops the servers that start started. Use it with:
#   export TEST_REDIS_CLUSTER_NODES=$(scripts/redis-cluster.sh start | sed -n 's/^TEST_REDIS_CLUSTER_NODES=//p')
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
STATE_DIR="$PWD/.data/redis-cluster${REDIS_CLUSTER_NAME:+-$REDIS_CLUSTER_NAME}"
REPLICAS=${REDIS_CLUSTER_REPLICAS:-0}
SERVERS=$((3 * (1 + REPLICAS)))
WAIT_S=$((20 + 10 * REPLICAS))

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
    echo "TEST_REDIS_CLUSTER_NODES=$(nodes_of $(cut -d' ' -f1-3 "$STATE_DIR/ports"))"
    return 0
  fi
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || {
    echo "redis-cluster: redis-server and redis-cli are needed (Debian package redis-server)" >&2
    exit 1
  }
  local base=${1:-7100} ports=()
  # The first run of free ports from base (the cluster bus uses port + 10000 too).
  while ((${#ports[@]} < SERVERS)); do
    if ((base > 65535 - 10000)); then echo "redis-cluster: no free ports" >&2; exit 1; fi
    if port_free "$base" && port_free $((base + 10000)); then ports+=("$base"); else ports=(); fi
    base=$((base + 1))
  done
  mkdir -p "$STATE_DIR"
  local data
  data=$(mktemp -d "${TMPDIR:-/tmp}/postern-redis-cluster.XXXXXX")
  echo "$data" >"$STATE_DIR/dir"
  : >"$STATE_DIR/pids"
  local p timeout=()
  [[ -n "${REDIS_CLUSTER_NODE_TIMEOUT_MS:-}" ]] && timeout=(--cluster-node-timeout "$REDIS_CLUSTER_NODE_TIMEOUT_MS")
  local extra=()
  read -r -a extra <<<"${REDIS_CLUSTER_SERVER_ARGS:-}"
  for p in "${ports[@]}"; do
    redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file "nodes-$p.conf" "${timeout[@]}" \
      --dir "$data" --appenddirname "appendonlydir-$p" --dbfilename "dump-$p.rdb" --save "" --appendonly no --daemonize yes --pidfile "$data/redis-$p.pid" \
      --logfile "$data/redis-$p.log" "${extra[@]}"
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
    --cluster-replicas "$REPLICAS" --cluster-yes >"$data/create.log" 2>&1 || {
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
  # Replicas: in sync with their master (a failover before that would promote an empty one).
  for p in "${ports[@]:3}"; do
    until redis-cli -p "$p" info replication 2>/dev/null | grep -q '^master_link_status:up'; do
      ((SECONDS < deadline)) || { echo "redis-cluster: replica 127.0.0.1:$p not in sync within ${WAIT_S}s" >&2; stop; exit 1; }
      sleep 0.1
    done
  done
  echo "redis-cluster: three masters on $(nodes_of "${ports[@]:0:3}"), $REPLICAS replica(s) each, data in $data" >&2
  echo "TEST_REDIS_CLUSTER_NODES=$(nodes_of "${ports[@]:0:3}")"
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
  nodes) [[ -f "$STATE_DIR/ports" ]] && nodes_of $(cut -d' ' -f1-3 "$STATE_DIR/ports") ;;
  *) echo "usage: $0 start [PORT] | stop | nodes" >&2; exit 2 ;;
esac
