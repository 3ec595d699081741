#!/usr/bin/env bash
# README command 1: installs what is needed, builds the `relstore` tool, and runs it on the
# embedded default (SQLite) in ./var/: a small benchmark that fills a database, then
# `relstore info` on it. Needs nothing beyond this clone.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh build
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRELSTORE_BUILD_TESTS=OFF >/dev/null
cmake --build build -j "$(nproc)" --target relstore_cli

db="sqlite:var/quickstart"
echo
echo "== relstore bench $db =="
build/tools/relstore bench "$db" --transactions 100
echo
echo "== relstore info $db =="
build/tools/relstore info "$db"
