#!/usr/bin/env bash
# Installs what lapse needs to build, run and test, from Debian packages only. Skips apt
# entirely when everything is already there, so repeated runs are quick and offline.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libsimdjson-dev libjemalloc-dev libspdlog-dev
  liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  redis-server redis-tools python3 python3-redis python3-pytest
  nodejs npm clang libclang-rt-14-dev
)
mode="${1:-all}"
if [ "$mode" = "run" ]; then
  packages=(build-essential cmake ninja-build pkg-config libboost-dev libsimdjson-dev libjemalloc-dev libspdlog-dev
            liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libssl-dev libgtest-dev libgmock-dev redis-tools)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from another Debian-format source that ships npm inside nodejs.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do [ "$p" = nodejs ] || [ "$p" = npm ] || filtered+=("$p"); done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
