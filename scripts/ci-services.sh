#!/usr/bin/env bash
# Makes sure the services the connector tests talk to answer on their ports: NATS with JetStream
# (4222), PostgreSQL (5432) and Redis (6379). A service that does not answer is started with its
# documented command (the machine's setup, see README "Connectors"); the script waits up to 30 s
# for it and exits non-zero, naming the service, if it still does not answer. It never stops a
# running service.
set -uo pipefail

# port_open PORT: true when something accepts TCP connections on 127.0.0.1:PORT.
port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# ensure NAME PORT START_COMMAND
ensure() {
  local name=$1 port=$2 start=$3
  if port_open "$port"; then
    echo "ci-services: $name answers on 127.0.0.1:$port"
    return 0
  fi
  echo "ci-services: $name does not answer on 127.0.0.1:$port; starting it: $start"
  if ! bash -c "$start"; then
    echo "ci-services: ERROR: the start command of $name failed" >&2
    return 1
  fi
  for _ in $(seq 1 60); do
    if port_open "$port"; then
      echo "ci-services: $name answers on 127.0.0.1:$port"
      return 0
    fi
    sleep 0.5
  done
  echo "ci-services: ERROR: $name did not answer on 127.0.0.1:$port within 30 s of starting" >&2
  return 1
}

failed=0
ensure 'NATS (JetStream)' 4222 \
  'start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log' ||
  failed=1
ensure PostgreSQL 5432 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start' || failed=1
ensure Redis 6379 \
  'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log' ||
  failed=1
# PostgreSQL accepts connections on its port a moment before it accepts queries on database `test`.
if [ "$failed" = 0 ] && command -v psql >/dev/null; then
  for _ in $(seq 1 60); do
    psql -h 127.0.0.1 -U root -d test -tAc 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.5
  done
  if ! psql -h 127.0.0.1 -U root -d test -tAc 'SELECT 1' >/dev/null 2>&1; then
    echo "ci-services: ERROR: PostgreSQL answers on 5432 but database test (user root) does not accept queries" >&2
    failed=1
  fi
fi
exit "$failed"
