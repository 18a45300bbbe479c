#!/usr/bin/env bash
# Makes sure a Redis answers on 127.0.0.1:6379 and that redis-server is installed (some tests start
# their own throwaway Redis on a spare port). Installs Debian's redis-server with apt-get if needed.
set -euo pipefail

redis_answers() {
  (exec 3<>/dev/tcp/127.0.0.1/6379 && printf 'PING\r\n' >&3 && timeout 2 head -c 5 <&3 | grep -q PONG) 2>/dev/null
}

if ! command -v redis-server >/dev/null 2>&1; then
  echo "ensure-redis: installing redis-server with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq redis-server >/dev/null
fi

if ! redis_answers; then
  echo "ensure-redis: starting redis-server on 127.0.0.1:6379"
  mkdir -p /tmp/scim-bridge-redis
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir /tmp/scim-bridge-redis --logfile /tmp/scim-bridge-redis/redis.log
  for _ in $(seq 1 50); do redis_answers && break; sleep 0.1; done
fi
redis_answers || { echo "ensure-redis: no Redis answers on 127.0.0.1:6379" >&2; exit 1; }
echo "ensure-redis: Redis answers on 127.0.0.1:6379"
