#!/usr/bin/env bash
# Fuzzes the pickle decoder (tests/fuzz/pickle_fuzz.cc) for a bounded time.
#   scripts/fuzz.sh SECONDS
# Builds with clang in build-fuzz/ (AddressSanitizer, UBSan, libFuzzer), starts from the
# committed seeds in tests/fuzz/corpus/ and keeps what it learns in build-fuzz/fuzz-corpus/.
# Exits non-zero when libFuzzer finds a crash, a leak, a timeout or runs out of memory; the
# input is then in build-fuzz/fuzz-artifacts/.
set -euo pipefail

seconds=${1:?usage: scripts/fuzz.sh SECONDS}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RELSTORE_FUZZ_BUILD_DIR:-$root/build-fuzz}
cxx=${RELSTORE_FUZZ_CXX:-clang++-14}
cc=${RELSTORE_FUZZ_CC:-clang-14}

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DRELSTORE_FUZZ=ON -DRELSTORE_BUILD_TESTS=OFF >/dev/null
nice ninja -C "$build" pickle_fuzz

mkdir -p "$build/fuzz-corpus" "$build/fuzz-artifacts"
# -timeout: seconds per input; -rss_limit_mb: memory; -max_len: bytes per input.
"$build/tests/fuzz/pickle_fuzz" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/" \
  "$build/fuzz-corpus" "$root/tests/fuzz/corpus"
