#!/usr/bin/env bash
# Starts or stops throwaway PostgreSQL 15 and MariaDB servers for the test suites, on
# 127.0.0.1 and free ports, with data in a temporary directory (README.md, "Building and testing by hand").
#
#   scripts/db-servers.sh start [postgresql] [mysql]   # default: both
#   scripts/db-servers.sh stop
#
# `start` writes the connection URIs to $RELSTORE_SERVERS_DIR/env (default
# ./var/servers/env) as `export RELSTORE_TEST_POSTGRESQL_URI=…` lines; source it.
set -euo pipefail

dir="${RELSTORE_SERVERS_DIR:-$PWD/var/servers}"
env_file="$dir/env"
# Where the servers' own files go: $dir, unless we are root and the servers' users cannot
# reach it (a clone under /root, which is mode 700): then a directory under /tmp, named in
# $dir/server-root so that `stop` finds it.
srv="$dir"
[ -f "$dir/server-root" ] && srv=$(cat "$dir/server-root")
pg_bin=/usr/lib/postgresql/15/bin

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Servers refuse to run as root; run them as their own system user when we are root.
as_user() {
  local user=$1
  shift
  if [ "$(id -u)" = 0 ]; then runuser -u "$user" -- "$@"; else "$@"; fi
}

start_postgresql() {
  local d="$srv/postgresql" port
  port=$(free_port)
  rm -rf "$d" && mkdir -p "$d"
  [ "$(id -u)" = 0 ] && chown postgres: "$d"
  # TCP connections must give a password (tests check a wrong one is refused); the
  # superuser sets up through the Unix socket in $d.
  as_user postgres "$pg_bin/initdb" -D "$d/data" -U postgres --auth-local=trust \
    --auth-host=scram-sha-256 --no-sync -E UTF8 --locale=C.UTF-8 >"$d/initdb.log"
  as_user postgres "$pg_bin/pg_ctl" -D "$d/data" -l "$d/log" -w \
    -o "-p $port -k $d -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
  psql -q -h "$d" -p "$port" -U postgres \
    -c "CREATE ROLE relstore LOGIN PASSWORD 'relstore' CREATEDB CREATEROLE" \
    -c "CREATE DATABASE relstore_test OWNER relstore" >/dev/null
  echo "$port" >"$d/port"
  echo "export RELSTORE_TEST_POSTGRESQL_URI=postgresql://relstore:relstore@127.0.0.1:$port/relstore_test" >>"$env_file"
  echo "PostgreSQL 15 on 127.0.0.1:$port"
}

start_mysql() {
  local d="$srv/mysql" port
  port=$(free_port)
  rm -rf "$d" && mkdir -p "$d"
  [ "$(id -u)" = 0 ] && chown mysql: "$d"
  mariadb-install-db --user=mysql --datadir="$d/data" --auth-root-authentication-method=normal \
    --skip-test-db >"$d/install.log" 2>&1
  as_user mysql mariadbd --no-defaults --datadir="$d/data" --socket="$d/sock" --port="$port" \
    --bind-address=127.0.0.1 --pid-file="$d/pid" --log-error="$d/error.log" \
    --max-connections=300 --innodb-buffer-pool-size=256M >/dev/null 2>&1 &
  echo $! >"$d/launcher.pid"  # so that stop_all finds it even if it never answers
  local up=
  for _ in $(seq 1 600); do
    if mysqladmin --socket="$d/sock" -uroot ping >/dev/null 2>&1; then up=1; break; fi
    kill -0 "$(cat "$d/launcher.pid")" 2>/dev/null || break  # it exited
    sleep 0.05
  done
  if [ -z "$up" ]; then
    echo "MariaDB did not start (or did not answer within 30 s); its error log ($d/error.log):" >&2
    cat "$d/error.log" >&2 || true
    exit 1
  fi
  mysql --socket="$d/sock" -uroot -e "CREATE DATABASE relstore_test;
    CREATE USER 'relstore'@'%' IDENTIFIED BY 'relstore';
    GRANT ALL ON *.* TO 'relstore'@'%' WITH GRANT OPTION;"
  echo "$port" >"$d/port"
  echo "export RELSTORE_TEST_MYSQL_URI=mysql://relstore:relstore@127.0.0.1:$port/relstore_test" >>"$env_file"
  echo "MariaDB on 127.0.0.1:$port"
}

# Stops whatever was started, also a server whose setup failed half-way (it has no port
# file yet, but a pid file).
stop_all() {
  if [ -f "$srv/postgresql/data/postmaster.pid" ]; then
    as_user postgres "$pg_bin/pg_ctl" -D "$srv/postgresql/data" -m fast -w stop >/dev/null || true
  fi
  rm -f "$srv/postgresql/port"
  if [ -f "$srv/mysql/launcher.pid" ]; then
    local pid
    pid=$(cat "$srv/mysql/launcher.pid")
    mysqladmin --socket="$srv/mysql/sock" -uroot shutdown >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 200); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    rm -f "$srv/mysql/launcher.pid"
  fi
  rm -f "$srv/mysql/port" "$env_file"
  if [ "$srv" != "$dir" ]; then
    rm -rf "$srv" "$dir/server-root"
    srv="$dir"
  fi
}

# Sets srv for a start: $dir when every server user that will run can reach it.
choose_server_root() {
  [ "$(id -u)" = 0 ] || return 0
  local user
  for user in "$@"; do
    if ! runuser -u "$user" -- test -x "$dir" 2>/dev/null; then
      srv=$(mktemp -d /tmp/relstore-servers.XXXXXX)
      chmod 755 "$srv"
      echo "$srv" >"$dir/server-root"
      echo "note: the $user user cannot reach $dir; the servers' files go in $srv"
      return 0
    fi
  done
}

case "${1:-}" in
  start)
    shift
    mkdir -p "$dir"
    stop_all
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chmod 755 "$dir"
    : >"$env_file"
    backends=("$@")
    [ ${#backends[@]} -eq 0 ] && backends=(postgresql mysql)
    users=()
    for b in "${backends[@]}"; do [ "$b" = mysql ] && users+=(mysql) || users+=(postgres); done
    choose_server_root "${users[@]}"
    for b in "${backends[@]}"; do
      case "$b" in
        postgresql) start_postgresql ;;
        mysql) start_mysql ;;
        *) echo "unknown backend $b" >&2; exit 2 ;;
      esac
    done
    ;;
  stop) stop_all ;;
  *) echo "usage: $0 start [postgresql] [mysql] | stop" >&2; exit 2 ;;
esac
