#!/bin/sh
# Fetches the duktape workload of bench/compile_bench.py: Duktape's embeddable JavaScript
# engine from Debian's source package duktape, whose upstream distribution ships the whole
# engine as one C file (src/duktape.c, ~100k lines, 3.6 MB: the interpreter's executor,
# compiler, regexp engine and built-ins in one translation unit), and its command-line tool
# `duk` (examples/cmdline/duk_cmdline.c and the extras it enables in Makefile.cmdline).
#
# Usage: bench/get-duktape.sh [WORKDIR]        (default WORKDIR: bench/work)
#
# Result, in WORKDIR/duktape-src/ (what bench/compile_bench.py uses):
#   src/duktape.c, src/duktape.h, src/duk_config.h     the engine (one translation unit)
#   examples/cmdline/duk_cmdline.{c,h}                 the command-line tool's main
#   extras/{print-alert,console,logging,module-duktape}/*.{c,h}   what Makefile.cmdline adds
#   mandel.js                                          upstream's small demo script
#   LICENSE.txt, VERSION                               upstream licence, Debian package version
#
# Steps, each skipped when its result is already there (the script is idempotent):
#   1. a deb-src stanza for Debian's archive (apt-get source needs one), as in
#      bench/get-sqlite.sh, then apt-get update;
#   2. apt-get source duktape into WORKDIR (needs dpkg-dev: scripts/install-deps.sh);
#   3. copy the files above into WORKDIR/duktape-src (copied last, so a complete folder
#      means success). Nothing is configured or generated: the sources compile as they are.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$top/bench/work}
mkdir -p "$work"
work=$(cd "$work" && pwd)
out=$work/duktape-src
pkg=duktape
extras="print-alert console logging module-duktape"

if [ -f "$out/src/duktape.c" ] && [ -f "$out/examples/cmdline/duk_cmdline.c" ] \
   && [ -f "$out/extras/module-duktape/duk_module_duktape.c" ] && [ -f "$out/mandel.js" ]; then
  echo "get-duktape: $out already complete"
  exit 0
fi

. "$top/bench/debsrc.sh"

# 1. deb-src entry
ensure_deb_src get-duktape $pkg

# 2. the source package
srcdir=$(fetch_source get-duktape $pkg "$work" src/duktape.c src/duktape.h src/duk_config.h \
         examples/cmdline/duk_cmdline.c mandel.js)

# 3. the files the benchmark uses
rm -rf "$out.tmp"
mkdir -p "$out.tmp/src" "$out.tmp/examples/cmdline" "$out.tmp/extras"
cp "$srcdir/src/duktape.c" "$srcdir/src/duktape.h" "$srcdir/src/duk_config.h" "$out.tmp/src/"
cp "$srcdir"/examples/cmdline/duk_cmdline.c "$srcdir"/examples/cmdline/duk_cmdline.h \
   "$out.tmp/examples/cmdline/"
for e in $extras; do
  mkdir -p "$out.tmp/extras/$e"
  cp "$srcdir/extras/$e"/*.c "$srcdir/extras/$e"/*.h "$out.tmp/extras/$e/"
done
cp "$srcdir/mandel.js" "$srcdir/LICENSE.txt" "$out.tmp/"
basename "$srcdir" >"$out.tmp/VERSION"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "get-duktape: $out ready ($(basename "$srcdir"), $(wc -l <"$out/src/duktape.c") lines in duktape.c)"
