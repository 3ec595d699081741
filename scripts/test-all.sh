#!/usr/bin/env bash
# README command 2 and what CI runs (.ci/run): installs everything, starts throwaway
# PostgreSQL and MariaDB servers, builds once, runs every test suite, then the unit tests
# and the SQLite conformance suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
# A backend whose adapter is in the tree is required: its tests fail, not skip, without it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)

step() { printf '\n== %s ==\n' "$*"; }

step "installing dependencies"
scripts/install-deps.sh all

require=sqlite
cmake_backends=()
for b in postgresql mysql; do
  if [ -f "adapters/$b/CMakeLists.txt" ]; then
    require="$require,$b"
    upper=$(echo "$b" | tr a-z A-Z)
    cmake_backends+=("-DRELSTORE_WITH_$upper=ON")
  fi
done

step "checking formatting (.clang-format)"
find src include adapters tools tests benchmarks -name '*.cc' -o -name '*.h' |
  xargs clang-format --dry-run --Werror

step "building (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_backends[@]}"
cmake --build build -j "$jobs"

step "starting database servers"
export RELSTORE_SERVERS_DIR="$root/var/servers"
trap 'scripts/db-servers.sh stop || true' EXIT
scripts/db-servers.sh start
# shellcheck disable=SC1091
source "$RELSTORE_SERVERS_DIR/env"
export RELSTORE_TEST_REQUIRE="$require"
# Tests that read ../shared/fixtures (beside the project in CI, not in a user's clone)
# skip with the reason when it is missing; CI (.ci/run) sets RELSTORE_REQUIRE_FIXTURES=1,
# which makes that a failure.
export RELSTORE_REQUIRE_FIXTURES="${RELSTORE_REQUIRE_FIXTURES:-0}"

step "running every test (required backends: $require)"
ctest --test-dir build -j "$jobs" --output-on-failure --timeout 900 --no-tests=error

step "sanitizer build (address,undefined)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRELSTORE_SANITIZE=address,undefined \
  -DRELSTORE_WITH_POSTGRESQL=OFF -DRELSTORE_WITH_MYSQL=OFF
cmake --build build-asan -j "$jobs"
step "unit tests and SQLite conformance under the sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -j "$jobs" --output-on-failure --timeout 900 --no-tests=error \
  -L 'unit|conformance'

step "thread sanitizer build of the SQLite conformance suite"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRELSTORE_SANITIZE=thread \
  -DRELSTORE_WITH_POSTGRESQL=OFF -DRELSTORE_WITH_MYSQL=OFF
cmake --build build-tsan -j "$jobs" --target conformance_sqlite counter_worker
step "concurrency tests under ThreadSanitizer"
tsan_filter='*Concurrency*:*FinishCallback*:*ReadCurrentKeeps*:*FinishAfterASuccessfulVote*:*NewOid*'
# GoogleTest passes a filter that selects nothing: make sure it selects something.
tsan_tests=$(build-tsan/tests/conformance/conformance_sqlite --gtest_list_tests \
  --gtest_filter="$tsan_filter" | grep -c '^  ' || true)
if [ "$tsan_tests" -lt 10 ]; then
  echo "the ThreadSanitizer filter selects $tsan_tests tests; expected at least 10" >&2
  exit 1
fi
echo "$tsan_tests tests"
# Run directly, so ctest's timeout does not apply: a deadlock must not eat CI's time.
TSAN_OPTIONS=halt_on_error=1 timeout 900 build-tsan/tests/conformance/conformance_sqlite \
  --gtest_filter="$tsan_filter"

step "fuzzing the pickle decoder for 120 s (libFuzzer, ASan, UBSan)"
scripts/fuzz.sh 120

step "all tests passed"
