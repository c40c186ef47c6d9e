#!/bin/sh
# Fetches the {fmt} C++ workload (docs/performance-history.md, "C++ parity on three workloads"):
# fmt's format-test from Debian's source package fmtlib, with the googletest/googlemock it is
# built against. Debian's fmtlib (+ds1) drops upstream's bundled test/gtest and builds the
# tests with the googletest source package (debian/patches/0001-Build-with-system-googletest),
# so this script fetches both. test/format-test.cc (2,311 lines) instantiates fmt's
# formatting templates for every argument type and spec, uses gmock's mocks (MockAllocator,
# classes with vtables) and checks with EXPECT_THROW_MSG that malformed format strings throw
# fmt::format_error; it is linked with fmt's src/format.cc and src/os.cc, fmt's test main
# (test-main.cc, gtest-extra.cc, util.cc) and gtest-all.cc, gmock-all.cc.
#
# Usage: bench/get-fmt.sh [WORKDIR]        (default WORKDIR: bench/work)
#
# Result, in WORKDIR/fmt-src/ (what bench/cxx_parity.py uses):
#   include/fmt/*.h                        the library headers
#   src/format.cc, src/os.cc               the compiled part of the library
#   test/format-test.cc                    the large test
#   test/test-main.cc, gtest-extra.{cc,h}, util.{cc,h}, mock-allocator.h, test-assert.h
#   googletest/googletest/{include,src}    gtest (gtest-all.cc includes the other .cc)
#   googletest/googlemock/{include,src}    gmock (gmock-all.cc)
#   LICENSE.rst, googletest/LICENSE, VERSION (the two Debian package versions)
#
# Steps, each skipped when its result is already there (the script is idempotent):
#   1. a deb-src stanza for Debian's archive (apt-get source needs one), as in
#      bench/get-cxx.sh, then apt-get update;
#   2. apt-get source fmtlib and googletest into WORKDIR (needs dpkg-dev:
#      scripts/install-deps.sh; the googletest tree of bench/get-googletest.sh is reused);
#   3. copy the files above into WORKDIR/fmt-src (copied last, so a complete folder means
#      success). Nothing is generated or configured: no -dev package is needed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$top/bench/work}
mkdir -p "$work"
work=$(cd "$work" && pwd)
out=$work/fmt-src

if [ -f "$out/include/fmt/format.h" ] && [ -f "$out/src/format.cc" ] \
   && [ -f "$out/test/format-test.cc" ] && [ -f "$out/test/test-main.cc" ] \
   && [ -f "$out/googletest/googletest/src/gtest-all.cc" ] \
   && [ -f "$out/googletest/googlemock/src/gmock-all.cc" ]; then
  echo "get-fmt: $out already complete"
  exit 0
fi

. "$top/bench/debsrc.sh"

# 1. deb-src entry
ensure_deb_src get-fmt fmtlib

# 2. the source packages
fmtdir=$(fetch_source get-fmt fmtlib "$work" test/format-test.cc)
gtdir=$(fetch_source get-fmt googletest "$work" googlemock/src/gmock-all.cc)

# 3. the files the benchmark uses
rm -rf "$out.tmp"
mkdir -p "$out.tmp/src" "$out.tmp/test" "$out.tmp/googletest/googletest" \
         "$out.tmp/googletest/googlemock"
cp -R "$fmtdir/include" "$out.tmp/"
cp "$fmtdir/src/format.cc" "$fmtdir/src/os.cc" "$out.tmp/src/"
for f in format-test.cc test-main.cc gtest-extra.cc gtest-extra.h util.cc util.h \
         mock-allocator.h test-assert.h; do
  cp "$fmtdir/test/$f" "$out.tmp/test/"
done
cp -R "$gtdir/googletest/include" "$gtdir/googletest/src" "$out.tmp/googletest/googletest/"
cp -R "$gtdir/googlemock/include" "$gtdir/googlemock/src" "$out.tmp/googletest/googlemock/"
cp "$fmtdir/LICENSE.rst" "$out.tmp/"
cp "$gtdir/LICENSE" "$out.tmp/googletest/"
printf '%s\n%s\n' "$(basename "$fmtdir")" "$(basename "$gtdir")" >"$out.tmp/VERSION"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "get-fmt: $out ready ($(basename "$fmtdir") + $(basename "$gtdir"), $(wc -l <"$out/test/format-test.cc") lines in format-test.cc)"
