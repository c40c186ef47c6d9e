#!/bin/sh
# The whole test suite, from a fresh Debian 12 machine: installs the system
# packages, builds MTPC (normal and ASan+UBSan builds) and runs pytest.
# Usage: scripts/test.sh [pytest arguments...]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

scripts/install-deps.sh
# Workload sources from Debian source packages (SQLite, nlohmann-json3) for the slow
# end-to-end tests; they skip without them.
bench/get-sqlite.sh >/dev/null || echo "test.sh: warning: could not fetch SQLite; its tests will skip" >&2
bench/get-cxx.sh >/dev/null || echo "test.sh: warning: could not fetch the C++ workload; its tests will skip" >&2
scripts/build.sh build
MTPC_SANITIZE=ON scripts/build.sh build-asan

export MTPC_BUILD_DIR="$top/build"
export MTPC_ASAN_BUILD_DIR="$top/build-asan"
exec /usr/bin/python3 -m pytest -q -ra tests "$@"
