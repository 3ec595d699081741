#!/usr/bin/env bash
# README command 1: installs what is needed, builds the `relstore` tool, and runs the main
# job on the embedded default (SQLite) in ./var/quickstart: generates a sample ZODB
# FileStorage, converts it into SQLite (checking the copy), shows `relstore info`, turns on
# the JSON mirror and queries it with SQL (sqlite3), verifies and packs it, and runs a
# short benchmark. Needs nothing beyond this clone.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh build
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target relstore_cli

relstore=build/tools/relstore
dir=var/quickstart
rm -rf "$dir" && mkdir -p "$dir"

echo "== relstore sample file:$dir/Data.fs --objects 20000 =="
$relstore sample "file:$dir/Data.fs" --objects 20000
echo
echo "== relstore convert file:$dir/Data.fs sqlite:$dir/db --verify =="
$relstore convert "file:$dir/Data.fs" "sqlite:$dir/db" --verify
echo
echo "== relstore info sqlite:$dir/db =="
$relstore info "sqlite:$dir/db"
echo
echo "== relstore json-mirror enable sqlite:$dir/db =="
$relstore json-mirror enable "sqlite:$dir/db"
echo
# Two of docs/json-mirror.md's worked examples, on the database just converted.
echo "== SQL: objects by class (sqlite3 $dir/db/main.sqlite3) =="
sqlite3 -header -column "$dir/db/main.sqlite3" \
  "SELECT class_name, COUNT(*) AS objects FROM object_json GROUP BY class_name
   ORDER BY objects DESC;"
echo
echo "== SQL: the five most viewed documents =="
sqlite3 -header -column "$dir/db/main.sqlite3" \
  "SELECT zoid, json_extract(state, '$.title') AS title, json_extract(state, '$.views') AS views
   FROM object_json WHERE class_name = 'myapp.content.Document'
   ORDER BY views DESC LIMIT 5;"
echo
echo "== relstore verify sqlite:$dir/db (references between the objects) =="
$relstore verify "sqlite:$dir/db"
echo
echo "== relstore pack sqlite:$dir/db (old revisions; nothing here is garbage) =="
$relstore pack "sqlite:$dir/db"
echo
echo "== relstore bench sqlite:$dir/bench =="
$relstore bench "sqlite:$dir/bench" --transactions 100
