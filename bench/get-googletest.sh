#!/bin/sh
# Fetches the googletest C++ workload (docs/performance-history.md, "C++ parity on three workloads"):
# googletest's own unit test gtest_unittest from Debian's source package googletest. Its
# translation unit test/gtest_unittest.cc (7,752 lines) is hundreds of TEST/TEST_F/TYPED_TEST
# classes, each with a vtable, assertion templates (EXPECT_EQ, EXPECT_PRED*, printers,
# typed tests) in comdats, and EXPECT_THROW / EXPECT_ANY_THROW tests that throw and catch; it is
# linked with the library's amalgamation src/gtest-all.cc and src/gtest_main.cc.
#
# Usage: bench/get-googletest.sh [WORKDIR]        (default WORKDIR: bench/work)
#
# Result, in WORKDIR/googletest-src/ (what bench/cxx_parity.py uses):
#   googletest/include/gtest/...           the public headers
#   googletest/src/*.cc, *.h               gtest-all.cc (includes the other .cc), gtest_main.cc,
#                                          gtest-internal-inl.h (the test includes it)
#   googletest/test/gtest_unittest.cc      the large test
#   LICENSE, VERSION                       upstream licence, Debian package version
#
# Steps, each skipped when its result is already there (the script is idempotent):
#   1. a deb-src stanza for Debian's archive (apt-get source needs one), as in
#      bench/get-cxx.sh, then apt-get update;
#   2. apt-get source googletest into WORKDIR (needs dpkg-dev: scripts/install-deps.sh);
#   3. copy the files above into WORKDIR/googletest-src (copied last, so a complete folder
#      means success). Nothing is generated or configured: no -dev package is needed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$top/bench/work}
mkdir -p "$work"
work=$(cd "$work" && pwd)
out=$work/googletest-src
pkg=googletest

if [ -f "$out/googletest/src/gtest-all.cc" ] && [ -f "$out/googletest/src/gtest_main.cc" ] \
   && [ -f "$out/googletest/test/gtest_unittest.cc" ] \
   && [ -f "$out/googletest/include/gtest/gtest.h" ]; then
  echo "get-googletest: $out already complete"
  exit 0
fi

. "$top/bench/debsrc.sh"

# 1. deb-src entry
ensure_deb_src get-googletest $pkg

# 2. the source package
srcdir=$(fetch_source get-googletest $pkg "$work" googletest/src/gtest-all.cc \
         googletest/test/gtest_unittest.cc)

# 3. the files the benchmark uses
rm -rf "$out.tmp"
mkdir -p "$out.tmp/googletest/test"
cp -R "$srcdir/googletest/include" "$srcdir/googletest/src" "$out.tmp/googletest/"
cp "$srcdir/googletest/test/gtest_unittest.cc" "$out.tmp/googletest/test/"
cp "$srcdir/LICENSE" "$out.tmp/"
basename "$srcdir" >"$out.tmp/VERSION"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "get-googletest: $out ready ($(basename "$srcdir"), $(wc -l <"$out/googletest/test/gtest_unittest.cc") lines in gtest_unittest.cc)"
