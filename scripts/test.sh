#!/bin/sh
# The whole test suite, from a fresh Debian 12 machine: installs the system
# packages, builds MTPC against LLVM 19 (normal and ASan+UBSan builds) and LLVM 22
# (build-llvm22, build-llvm22-asan), runs the whole pytest suite against LLVM 19, then the tests that
# exercise LLVM (LLVM22_TESTS: the folders split, integration, distribute, slurm; not the slow
# ones) against LLVM 22. Fails if either run fails.
# Usage: scripts/test.sh [pytest arguments...]   (they apply to the LLVM 19 run; a marker
#   selection -m EXPR applies to the LLVM 22 run too: scripts/test.sh -m slurm runs the Slurm
#   tests alone; MTPC_TEST_LLVM22=0 skips the LLVM 22 build and run)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# The LLVM 22 run: the folders of the parts that exercise LLVM (tests/<part>/: split, integration,
# distribute, slurm); not cache, bench (tool tests) and units (C unit tests).
LLVM22_TESTS="tests/split tests/integration tests/distribute tests/slurm"
llvm22=${MTPC_TEST_LLVM22:-1}
# The marker expression given with -m, if any (for the LLVM 22 run).
marker=""
prev=""
for a in "$@"; do
  [ "$prev" = "-m" ] && marker=$a
  prev=$a
done

scripts/install-deps.sh
# Workload sources from Debian source packages (SQLite, nlohmann-json3) for the slow
# end-to-end tests; they skip without them.
bench/get-sqlite.sh >/dev/null || echo "test.sh: warning: could not fetch SQLite; its tests will skip" >&2
bench/get-cxx.sh >/dev/null || echo "test.sh: warning: could not fetch the C++ workload; its tests will skip" >&2
MTPC_LLVM_VERSION=19 scripts/build.sh build
MTPC_LLVM_VERSION=19 MTPC_SANITIZE=ON scripts/build.sh build-asan
[ "$llvm22" = 0 ] || MTPC_LLVM_VERSION=22 MTPC_SANITIZE=OFF scripts/build.sh build-llvm22
# mtpc-distribute exists only here: its sanitized tests need an ASan+UBSan build of LLVM 22 too.
[ "$llvm22" = 0 ] || MTPC_LLVM_VERSION=22 MTPC_SANITIZE=ON scripts/build.sh build-llvm22-asan

status=0
MTPC_LLVM_VERSION=19 MTPC_BUILD_DIR="$top/build" MTPC_ASAN_BUILD_DIR="$top/build-asan" \
  /usr/bin/python3 -m pytest -q -ra tests "$@" || status=1
if [ "$llvm22" != 0 ]; then
  echo "test.sh: LLVM 22 (build-llvm22):" $LLVM22_TESTS
  start=$(date +%s)
  # shellcheck disable=SC2086 # the words of LLVM22_TESTS
  MTPC_LLVM_VERSION=22 MTPC_BUILD_DIR="$top/build-llvm22" \
    MTPC_ASAN_BUILD_DIR="$top/build-llvm22-asan" \
    /usr/bin/python3 -m pytest -q -ra -m "${marker:+($marker) and }not slow" $LLVM22_TESTS ||
    { rc=$?; [ $rc -eq 5 ] || status=1; }  # 5: a -m selection left nothing to run here
  # SQLite through mtpc-distribute (slow, about 2 min): DTLTO exists only here.
  MTPC_LLVM_VERSION=22 MTPC_BUILD_DIR="$top/build-llvm22" \
    /usr/bin/python3 -m pytest -q -ra -m "${marker:+($marker) and }slow" \
    tests/distribute/test_distribute_equiv.py || { rc=$?; [ $rc -eq 5 ] || status=1; }
  echo "test.sh: LLVM 22 run: $(( $(date +%s) - start )) s"
fi
exit $status
