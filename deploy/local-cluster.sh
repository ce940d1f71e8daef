#!/usr/bin/env bash
# Two replicas of data-query-service behind haproxy, sharing one redis-server (keys,
# revocations, rate limits) and one DATA_DIR and STATE_DIR, all on 127.0.0.1.
# docs/deploy.md explains each part; test/deploy.test.ts drives this script end to end.
#
#   deploy/local-cluster.sh            # balancer on http://127.0.0.1:8080
#
# Settings (environment): PORT (balancer, 8080), REPLICA_PORTS ("3101 3102"),
# ADMIN_PORTS ("3201 3202"), REDIS_PORT (6390), DATA_DIR (./datasets), STATE_DIR (./var),
# WORK (./tmp/cluster: generated configs and logs). Any other service setting
# (RATE_LIMIT_PER_MINUTE, LOG_LEVEL, …) is passed through to both replicas. Redis keeps
# its append-only file in WORK.
# Ctrl-C or SIGTERM stops everything this script started, and nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${PORT:-8080}
read -r -a REPLICA_PORTS <<<"${REPLICA_PORTS:-3101 3102}"
read -r -a ADMIN_PORTS <<<"${ADMIN_PORTS:-3201 3202}"
REDIS_PORT=${REDIS_PORT:-6390}
DATA_DIR=$(realpath -m "${DATA_DIR:-./datasets}")
STATE_DIR=$(realpath -m "${STATE_DIR:-./var}")
WORK=$(realpath -m "${WORK:-./tmp/cluster}")

for bin in redis-server haproxy curl; do
  command -v "$bin" >/dev/null || { echo "local-cluster: $bin is not installed (apt-get install -y redis-server haproxy curl)" >&2; exit 1; }
done
mkdir -p "$WORK"

pids=()
stop() {
  trap - EXIT INT TERM
  # Replicas first, so they finish in-flight requests while Redis is still there.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "local-cluster: stopped"
}
trap stop EXIT INT TERM

wait_healthy() { # url, seconds, log file
  for ((t = 0; t < $2 * 5; t++)); do
    curl -fsS -o /dev/null "$1/healthz" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "local-cluster: $1 did not become healthy in $2 s; see $3" >&2
  return 1
}

# With AOF (fsync every second), as docs/deploy.md asks: keys and invites survive a
# Redis restart, and a later run of this script with the same WORK finds them again.
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec \
  --dir "$WORK" --logfile "$WORK/redis.log" &
pids+=($!)

# What npm start runs first: the compiled server (npm run build), and the default
# ./datasets, when empty, gets the synthetic sample; a DATA_DIR you chose must already
# hold a release (npm run etl -- load).
npm run --silent build
DATA_DIR="$DATA_DIR" node --import tsx etl/first-run.ts

names=(a b)
for i in 0 1; do
  log="$WORK/replica-${names[i]}.log"
  PORT=${REPLICA_PORTS[i]} ADMIN_PORT=${ADMIN_PORTS[i]} HOST=127.0.0.1 \
    REDIS_URL="redis://127.0.0.1:$REDIS_PORT" TRUST_PROXY=true \
    DATA_DIR="$DATA_DIR" STATE_DIR="$STATE_DIR" \
    node $(node -p "require('./package.json').config.nodeFlags") dist/main.js >"$log" 2>&1 &
  pids+=($!)
  # One at a time, so the two loads do not compete for the 2 cores.
  wait_healthy "http://127.0.0.1:${REPLICA_PORTS[i]}" 120 "$log"
done

cat >"$WORK/haproxy.cfg" <<EOF
global
  maxconn 2048
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  timeout http-request 10s
  # Appends the client's address; the replicas (TRUST_PROXY=true) read this last hop.
  option forwardfor
frontend api
  bind 127.0.0.1:$PORT
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  server a 127.0.0.1:${REPLICA_PORTS[0]} check inter 1s fall 2 rise 1
  server b 127.0.0.1:${REPLICA_PORTS[1]} check inter 1s fall 2 rise 1
EOF
haproxy -db -f "$WORK/haproxy.cfg" >"$WORK/haproxy.log" 2>&1 &
pids+=($!)
wait_healthy "http://127.0.0.1:$PORT" 30 "$WORK/haproxy.log"

echo "local-cluster: ready on http://127.0.0.1:$PORT (replicas ${REPLICA_PORTS[*]}, admin ${ADMIN_PORTS[*]}, redis $REDIS_PORT, logs in $WORK)"
wait
