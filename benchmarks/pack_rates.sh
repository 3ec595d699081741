#!/usr/bin/env bash
# Pack times for docs/benchmarks.md: `relstore pack` of a sample tree that `relstore bench`
# has added garbage and superseded revisions to, on every backend and mode. Each run
# converts the same Data.fs into an emptied database of its own (<db>_pack_hf / _hp on
# each server), runs a short bench beside it, then times `relstore pack --json`.
#
#   benchmarks/pack_rates.sh [objects]
#
# objects: size of the sample tree (default 100000). Server backends join when
# RELSTORE_TEST_POSTGRESQL_URI / RELSTORE_TEST_MYSQL_URI are set (source var/servers/env
# after scripts/db-servers.sh start).
set -euo pipefail
cd "$(dirname "$0")/.."
relstore=${RELSTORE:-build/tools/relstore}
work=${RELSTORE_BENCH_DIR:-var/pack-bench}
objects=${1:-100000}
mkdir -p "$work"
src=$PWD/$work/sample-$objects.fs
[[ -f "$src" ]] || "$relstore" sample "file://$src" --objects "$objects" >&2

source benchmarks/databases.sh
bench_databases pack "$work"

field() { sed -E "s/.*\"$1\": *([0-9]+).*/\1/;t;d" <<<"$2"; }

echo "| database | mode | objects kept | objects removed | old revisions removed | transactions removed | seconds |"
echo "|---|---|---:|---:|---:|---:|---:|"
for db in "${databases[@]}"; do
  mode=$([[ $db == *history=free* ]] && echo HF || echo HP)
  "$relstore" convert --clear "file://$src" "$db" >/dev/null 2>&1
  # Garbage: bench's objects are referenced by nothing; its updates supersede revisions.
  "$relstore" bench "$db" --objects-per-txn 20 --concurrency 1 --transactions 100 >/dev/null
  start=$(date +%s.%N)
  out=$("$relstore" pack --json "$db")
  end=$(date +%s.%N)
  kept=$("$relstore" info --json "$db" | sed -E 's/.*"objects": *([0-9]+).*/\1/;t;d')
  printf '| %s | %s | %s | %s | %s | %s | %.2f |\n' "${db%%:*}" "$mode" "$kept" \
    "$(field objects_removed "$out")" "$(field revisions_removed "$out")" \
    "$(field transactions_removed "$out")" "$(awk "BEGIN { print $end - $start }")"
done
