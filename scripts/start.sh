#!/usr/bin/env bash
# Quick start: installs what is missing, builds, and runs lapse-server on 127.0.0.1:6379.
# Extra arguments go to the server, e.g. `scripts/start.sh --port 7000 --threads 2`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh run
scripts/build.sh release
exec build/lapse-server "$@"
