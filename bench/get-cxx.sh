#!/bin/sh
# Fetches the large C++ workload (docs/performance.md, workload 3): nlohmann/json's unit tests from Debian's
# source package nlohmann-json3 (header-only library: the tests are template-heavy
# translation units full of comdats, with vtables from json's exception classes and
# doctest's reporters).
#
# Usage: bench/get-cxx.sh [WORKDIR]        (default WORKDIR: bench/work)
#
# Result, in WORKDIR/cxx-src/ (what bench/cxx/CMakeLists.txt uses):
#   single_include/nlohmann/json.hpp     the library (amalgamated header)
#   doctest/doctest.h, doctest/doctest_compatibility.h
#   src/unit.cpp                         doctest's main (DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN)
#   src/unit-*.cpp, src/*.hpp            the unit tests (one translation unit each)
#   LICENSE.MIT, VERSION                 upstream licence, Debian package version
#
# Steps, each skipped when its result is already there (the script is idempotent):
#   1. a deb-src stanza for Debian's archive (apt-get source needs one), as in
#      bench/get-sqlite.sh, then apt-get update;
#   2. apt-get source nlohmann-json3 into WORKDIR (needs dpkg-dev: scripts/install-deps.sh);
#   3. copy the files above into WORKDIR/cxx-src (copied last, so a complete folder means
#      success). Nothing is generated or configured: the sources compile as they are.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$top/bench/work}
mkdir -p "$work"
work=$(cd "$work" && pwd)
out=$work/cxx-src
pkg=nlohmann-json3

if [ -f "$out/single_include/nlohmann/json.hpp" ] && [ -f "$out/doctest/doctest.h" ] \
   && [ -f "$out/src/unit.cpp" ] && [ -f "$out/src/unit-element_access2.cpp" ]; then
  echo "get-cxx: $out already complete"
  exit 0
fi

. "$top/bench/debsrc.sh"

# 1. deb-src entry
ensure_deb_src get-cxx $pkg

# 2. the source package
srcdir=$(fetch_source get-cxx $pkg "$work" single_include/nlohmann/json.hpp tests/src/unit.cpp \
         tests/thirdparty/doctest/doctest.h)

# 3. the files the benchmark uses
rm -rf "$out.tmp"
mkdir -p "$out.tmp/single_include" "$out.tmp/doctest" "$out.tmp/src"
cp -R "$srcdir/single_include/nlohmann" "$out.tmp/single_include/"
cp "$srcdir/tests/thirdparty/doctest/doctest.h" \
   "$srcdir/tests/thirdparty/doctest/doctest_compatibility.h" "$out.tmp/doctest/"
cp "$srcdir"/tests/src/unit.cpp "$srcdir"/tests/src/unit-*.cpp "$srcdir"/tests/src/*.hpp \
   "$out.tmp/src/"
cp "$srcdir/LICENSE.MIT" "$out.tmp/"
basename "$srcdir" >"$out.tmp/VERSION"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "get-cxx: $out ready ($(basename "$srcdir"), $(wc -l <"$out/single_include/nlohmann/json.hpp") lines in json.hpp)"
