#!/usr/bin/env bash
# Installs what relstore needs from Debian 12's packages.
#   scripts/install-deps.sh build     # compiler, CMake and the libraries (SQLite always)
#   scripts/install-deps.sh all       # also the test tools and PostgreSQL/MariaDB servers
set -euo pipefail

build_packages=(
  build-essential cmake ninja-build pkg-config
  libsqlite3-dev sqlite3 libssl-dev zlib1g-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libpqxx-dev libpq-dev libmysqlcppconn-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)
server_packages=(postgresql postgresql-client mariadb-server mariadb-client python3
  clang libclang-rt-14-dev clang-format)

case "${1:-build}" in
  build) packages=("${build_packages[@]}") ;;
  all) packages=("${build_packages[@]}" "${server_packages[@]}") ;;
  *) echo "usage: $0 build|all" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# Debian's server packages try to start their service; in containers that is refused,
# which is fine: relstore's scripts start their own throwaway servers.
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
