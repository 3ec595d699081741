#!/usr/bin/env bash
# README command 1: installs what is needed, builds the `relstore` tool, and runs the main
# job on the embedded default (SQLite) in ./var/quickstart: generates a sample ZODB
# FileStorage, converts it into SQLite (checking the copy), shows `relstore info`, and
# runs a short benchmark. Needs nothing beyond this clone.
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
echo "== relstore bench sqlite:$dir/bench =="
$relstore bench "sqlite:$dir/bench" --transactions 100
