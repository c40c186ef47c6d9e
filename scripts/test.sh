#!/bin/sh
# The whole test suite, from a fresh Debian 12 machine: installs the system
# packages, builds MTPC against LLVM 19 (normal and ASan+UBSan builds) and LLVM 22
# (build-llvm22, build-llvm22-asan), runs the pytest suite against LLVM 19, then the tests that
# exercise LLVM (LLVM22_TESTS; not the slow ones) against LLVM 22. The big matrices (fixture x
# flag set x mode, fixture x partition count, csmith seeds) are shared between the two runs:
# LLVM 19 runs one half, LLVM 22 the other (MTPC_TEST_THIN, tests/conftest.py), so that every
# case runs once and every fixture with two or more cases in a matrix on both. Each run spreads its tests over two pytest-xdist
# workers (MTPC_TEST_WORKERS; the tests that share a module-scoped fixture stay on one
# worker). Fails if either run fails.
# Usage: scripts/test.sh [pytest arguments...]   (they apply to the LLVM 19 run; a marker
#   selection -m EXPR applies to the LLVM 22 run too: scripts/test.sh -m slurm runs the Slurm
#   tests alone; MTPC_TEST_LLVM22=0 skips the LLVM 22 build and run, and the LLVM 19 run then
#   runs the matrices whole)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# The LLVM 22 run: the tests whose outcome depends on what clang, LLVM and lld do (tests/<part>/:
# split, distribute, slurm, and of integration the builds of programs under flags, debug info
# and edits); not MTPC's own machinery, the same code whichever LLVM (cache, the job budget,
# the work board, faults, traces, CMake compatibility), nor the benchmark scripts and C units.
LLVM22_TESTS="tests/split tests/distribute tests/slurm
  tests/integration/test_build_flags.py tests/integration/test_build_native.py
  tests/integration/test_build_compile.py tests/integration/test_build_debug.py
  tests/integration/test_build_debug_incremental.py tests/integration/test_build_incremental.py
  tests/integration/test_build_integration.py"
llvm22=${MTPC_TEST_LLVM22:-1}
# Which half of the matrices each run takes (tests/conftest.py: thinned).
thin19=2:0
thin22=2:1
[ "$llvm22" != 0 ] || thin19=1
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

# Two workers: most tests run one compiler at a time, so two keep both cores busy; each worker
# has a job pool of its own (tests/conftest.py).
workers=${MTPC_TEST_WORKERS:-2}
xdist="-n $workers --dist loadgroup"
[ "$workers" -gt 1 ] || xdist=""

status=0
start=$(date +%s)
# shellcheck disable=SC2086 # the words of $xdist
MTPC_LLVM_VERSION=19 MTPC_BUILD_DIR="$top/build" MTPC_ASAN_BUILD_DIR="$top/build-asan" \
  MTPC_TEST_THIN=${MTPC_TEST_THIN:-$thin19} /usr/bin/python3 -m pytest -q -ra $xdist tests "$@" || status=1
echo "test.sh: LLVM 19 run: $(( $(date +%s) - start )) s"
if [ "$llvm22" != 0 ]; then
  echo "test.sh: LLVM 22 (build-llvm22):" $LLVM22_TESTS
  start=$(date +%s)
  # shellcheck disable=SC2086 # the words of LLVM22_TESTS
  MTPC_LLVM_VERSION=22 MTPC_BUILD_DIR="$top/build-llvm22" \
    MTPC_ASAN_BUILD_DIR="$top/build-llvm22-asan" MTPC_TEST_THIN=${MTPC_TEST_THIN:-$thin22} \
    /usr/bin/python3 -m pytest -q -ra $xdist -m "${marker:+($marker) and }not slow" $LLVM22_TESTS ||
    { rc=$?; [ $rc -eq 5 ] || status=1; }  # 5: a -m selection left nothing to run here
  # SQLite through mtpc-distribute (slow, about 2 min): DTLTO exists only here.
  MTPC_LLVM_VERSION=22 MTPC_BUILD_DIR="$top/build-llvm22" \
    /usr/bin/python3 -m pytest -q -ra -m "${marker:+($marker) and }slow" \
    tests/distribute/test_distribute_equiv.py || { rc=$?; [ $rc -eq 5 ] || status=1; }
  echo "test.sh: LLVM 22 run: $(( $(date +%s) - start )) s"
fi
exit $status
