# Sourced by the benchmark scripts: the databases a run writes into, one per backend and
# mode. bench_databases STEM WORK fills the array `databases` with URIs (history= given):
# SQLite directories WORK/sqlite_<mode> (emptied first), and, when
# RELSTORE_TEST_POSTGRESQL_URI / RELSTORE_TEST_MYSQL_URI are set, databases
# <db>_<STEM>_<mode> on those servers (created when missing).

# A server URI with its database replaced by <db>_<stem>_<mode>, created when missing.
server_db() {
  local base=$1 stem=$2 mode=$3 scheme=${1%%://*}
  local db=${base##*/}; db=${db%%\?*}
  local name=${db}_${stem}_$mode
  local rest=${base#*://}; local cred=${rest%%@*} hostport=${rest#*@}; hostport=${hostport%%/*}
  if [[ $scheme == postgresql ]]; then
    psql -q "${base%%\?*}" -c "CREATE DATABASE \"$name\"" >/dev/null 2>&1 || true
  else
    mysql -h "${hostport%%:*}" -P "${hostport##*:}" -u "${cred%%:*}" -p"${cred#*:}" \
      -e "CREATE DATABASE IF NOT EXISTS \`$name\`"
  fi
  echo "${base%/*}/$name"
}

bench_databases() {
  local stem=$1 work=$2 mode h
  databases=()
  for mode in hf hp; do
    h=$([[ $mode == hf ]] && echo free || echo preserving)
    rm -rf "$work/sqlite_$mode"
    databases+=("sqlite://$PWD/$work/sqlite_$mode?history=$h")
    if [[ -n "${RELSTORE_TEST_POSTGRESQL_URI:-}" ]]; then
      databases+=("$(server_db "$RELSTORE_TEST_POSTGRESQL_URI" "$stem" $mode)?history=$h")
    fi
    if [[ -n "${RELSTORE_TEST_MYSQL_URI:-}" ]]; then
      databases+=("$(server_db "$RELSTORE_TEST_MYSQL_URI" "$stem" $mode)?history=$h")
    fi
  done
}
