#!/bin/sh
# Fetches the zstd workload of bench/compile_bench.py: the Zstandard library from Debian's
# source package libzstd, amalgamated into one C file with upstream's own script
# (build/single_file_libs/combine.py: lib/ with its legacy formats left out, as
# create_single_file_library.sh does; ~45k lines: every compressor level's match finders,
# Huffman and FSE coders, the decompressor and the dictionary builder in one translation
# unit), and the workload's program bench/zstd/roundtrip.c (round trips of the
# amalgamation's own text at several levels).
#
# Usage: bench/get-zstd.sh [WORKDIR]        (default WORKDIR: bench/work)
#
# Result, in WORKDIR/zstd-src/ (what bench/compile_bench.py uses):
#   zstd.c, zstd.h          the library (one translation unit) and its public header
#   roundtrip.c             the program (a copy of bench/zstd/roundtrip.c)
#   LICENSE, VERSION        upstream licence, Debian package version
#
# Steps, each skipped when its result is already there (the script is idempotent):
#   1. a deb-src stanza for Debian's archive (apt-get source needs one), as in
#      bench/get-sqlite.sh, then apt-get update;
#   2. apt-get source libzstd into WORKDIR (needs dpkg-dev: scripts/install-deps.sh);
#   3. combine.py (python3) writes zstd.c; the files above are copied into
#      WORKDIR/zstd-src (moved there last, so a complete folder means success).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$top/bench/work}
mkdir -p "$work"
work=$(cd "$work" && pwd)
out=$work/zstd-src
pkg=libzstd

if [ -f "$out/zstd.c" ] && [ -f "$out/zstd.h" ] && [ -f "$out/roundtrip.c" ] \
   && cmp -s "$out/roundtrip.c" "$top/bench/zstd/roundtrip.c"; then
  echo "get-zstd: $out already complete"
  exit 0
fi

. "$top/bench/debsrc.sh"

# 1. deb-src entry
ensure_deb_src get-zstd $pkg

# 2. the source package
srcdir=$(fetch_source get-zstd $pkg "$work" lib/zstd.h build/single_file_libs/combine.py \
         build/single_file_libs/zstd-in.c LICENSE)

# 3. the amalgamation and the files the benchmark uses
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
(cd "$srcdir/build/single_file_libs" &&
 python3 combine.py -r ../../lib -x legacy/zstd_legacy.h -o "$out.tmp/zstd.c" zstd-in.c)
cp "$srcdir/lib/zstd.h" "$srcdir/LICENSE" "$out.tmp/"
cp "$top/bench/zstd/roundtrip.c" "$out.tmp/"
basename "$srcdir" >"$out.tmp/VERSION"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "get-zstd: $out ready ($(basename "$srcdir"), $(wc -l <"$out/zstd.c") lines in zstd.c)"
