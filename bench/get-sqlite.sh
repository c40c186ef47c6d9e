#!/bin/sh
# Fetches SQLite from Debian's source package and builds its amalgamation.
#
# Usage: bench/get-sqlite.sh [WORKDIR]        (default WORKDIR: bench/work)
#
# Result, in WORKDIR/sqlite-amalgamation/: sqlite3.c, sqlite3.h, shell.c, speedtest1.c
# (what bench/sqlite/CMakeLists.txt and bench/split_bench.py use).
#
# Steps, each skipped when its result is already there (the script is idempotent):
#   1. a deb-src stanza for Debian's archive (apt-get source needs one): copied from the
#      existing deb822 'Types: deb' stanzas into /etc/apt/sources.list.d/mtpc-deb-src.sources,
#      then apt-get update;
#   2. apt-get source sqlite3 into WORKDIR (the orig tarball is the full upstream tree);
#   3. ./configure && make sqlite3.c shell.c (needs tcl: scripts/install-deps.sh lists it)
#      in WORKDIR/sqlite-build, out of tree;
#   4. copy the amalgamation and test/speedtest1.c into WORKDIR/sqlite-amalgamation.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$top/bench/work}
mkdir -p "$work"
work=$(cd "$work" && pwd)
out=$work/sqlite-amalgamation

if [ -f "$out/sqlite3.c" ] && [ -f "$out/shell.c" ] && [ -f "$out/speedtest1.c" ] \
   && [ -f "$out/sqlite3.h" ]; then
  echo "get-sqlite: $out already complete"
  exit 0
fi

. "$top/bench/debsrc.sh"

# 1. deb-src entry
ensure_deb_src get-sqlite sqlite3

# 2. the source package
srcdir=$(find "$work" -maxdepth 1 -type d -name 'sqlite3-[0-9]*' | sort | tail -n 1)
if [ -z "$srcdir" ] || [ ! -f "$srcdir/configure" ]; then
  echo "get-sqlite: apt-get source sqlite3 (into $work)"
  # as root apt-get prints a harmless warning about the _apt user's sandbox
  (cd "$work" && apt-get source -qq sqlite3)
  srcdir=$(find "$work" -maxdepth 1 -type d -name 'sqlite3-[0-9]*' | sort | tail -n 1)
fi
[ -n "$srcdir" ] && [ -f "$srcdir/configure" ] || {
  echo "get-sqlite: apt-get source sqlite3 gave no source tree with a configure script" >&2
  exit 1
}
[ -f "$srcdir/test/speedtest1.c" ] || {
  echo "get-sqlite: $srcdir/test/speedtest1.c missing" >&2; exit 1; }

# 3. the amalgamation (out of tree)
bld=$work/sqlite-build
if [ ! -f "$bld/sqlite3.c" ] || [ ! -f "$bld/shell.c" ]; then
  command -v tclsh >/dev/null || {
    echo "get-sqlite: tclsh needed: run scripts/install-deps.sh" >&2; exit 1; }
  mkdir -p "$bld"
  echo "get-sqlite: configure + make sqlite3.c shell.c in $bld"
  (cd "$bld" && [ -f Makefile ] || "$srcdir/configure" >configure.log 2>&1) || {
    echo "get-sqlite: configure failed, see $bld/configure.log" >&2; exit 1; }
  (cd "$bld" && make sqlite3.c shell.c >make.log 2>&1) || {
    echo "get-sqlite: make failed, see $bld/make.log" >&2; exit 1; }
fi

# 4. the files the benchmarks use (copied last, so a complete $out means success)
mkdir -p "$out.tmp"
cp "$bld/sqlite3.c" "$bld/sqlite3.h" "$bld/shell.c" "$srcdir/test/speedtest1.c" "$out.tmp/"
[ -f "$bld/sqlite3ext.h" ] && cp "$bld/sqlite3ext.h" "$out.tmp/"
[ -f "$srcdir/src/sqlite3ext.h" ] && [ ! -f "$out.tmp/sqlite3ext.h" ] \
  && cp "$srcdir/src/sqlite3ext.h" "$out.tmp/"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "get-sqlite: $out ready ($(wc -l <"$out/sqlite3.c") lines in sqlite3.c)"
