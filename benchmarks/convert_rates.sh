#!/usr/bin/env bash
# Conversion rates for docs/benchmarks.md: `relstore convert` from a Data.fs into every
# backend, history-free and history-preserving, each into an emptied destination. Prints a
# Markdown table built from relstore's own summary lines; the databases it writes are its
# own (<db>_convert_hf / _hp on each server).
#
#   benchmarks/convert_rates.sh [Data.fs]
#
# Without a file it writes one of about 1,000,000 records with `relstore sample` first.
# Server backends join when RELSTORE_TEST_POSTGRESQL_URI / RELSTORE_TEST_MYSQL_URI are set
# (source var/servers/env after scripts/db-servers.sh start).
set -euo pipefail
cd "$(dirname "$0")/.."
relstore=${RELSTORE:-build/tools/relstore}
work=${RELSTORE_BENCH_DIR:-var/convert-bench}
mkdir -p "$work"
src=${1:-}
if [[ -z "$src" ]]; then
  src=$work/Data.fs
  [[ -f "$src" ]] || "$relstore" sample "file://$PWD/$src" --objects 870000 >&2
fi
src=$(realpath "$src")

source benchmarks/databases.sh
bench_databases convert "$work"
destinations=("${databases[@]}")

echo "| destination | mode | records | MB | seconds | records/s | MB/s |"
echo "|---|---|---:|---:|---:|---:|---:|"
for dst in "${destinations[@]}"; do
  mode=$([[ $dst == *history=free* ]] && echo HF || echo HP)
  # "copied T transactions, R records, M MB, X records/s in S s (Y MB/s), …"
  line=$("$relstore" convert --clear "file://$src" "$dst" 2>&1 | grep '^copied ')
  read -r records mb rate secs mbs < <(echo "$line" | sed -E \
    's/^copied [0-9,]+ transactions, ([0-9,]+) records, ([0-9.]+) MB, ([0-9,]+) records\/s in ([0-9.]+) s \(([0-9.]+) MB\/s\).*/\1 \2 \3 \4 \5/')
  echo "| ${dst%%:*} | $mode | $records | $mb | $secs | $rate | $mbs |"
done
