#!/bin/sh
# Fetches the rocksdb workload of bench/compile_bench.py, a real unity build: RocksDB from
# Debian's source package, configured by its own CMake project with CMAKE_UNITY_BUILD=ON and
# a batch size of 0, so that the library's 322 sources are one translation unit, CMake's
# Unity/unity_0_cxx.cxx (about two minutes of -O3 ThinLTO compile on this machine); and the
# workload's program bench/rocksdb/kvbench.cc. The same project built whole, with its tests,
# plain against MTPC: bench/wrap_sweep.py --projects rocksdb.
#
# Usage: bench/get-rocksdb.sh [WORKDIR]        (default WORKDIR: bench/work)
#
# Result, in WORKDIR/rocksdb-src/ (what bench/compile_bench.py uses):
#   rocksdb_unity.cc    CMake's unity source of the library (it #includes the sources of
#                       WORKDIR/rocksdb-<version>/ by absolute path, and those CMake
#                       generated, build_version.cc, from generated/ here)
#   flags.txt           its compile flags as CMake gives them for Release (one per line;
#                       compiler, -c, -o, dependency and -flto options left out)
#   crc32c.txt          the flags CMake adds for util/crc32c.cc, the one source it keeps
#                       out of the unity source (none: FORCE_SSE42 gives every source
#                       -msse4.2 -mpclmul)
#   tree                a symbolic link to the source tree
#   kvbench.cc          the program (a copy of bench/rocksdb/kvbench.cc)
#   VERSION             Debian package version
#
# Options as bench/wrap/rocksdb/ sets them: no compression libraries, liburing, gflags,
# tools or tests (the library only); and PORTABLE=ON with FORCE_SSE42=ON (SSE 4.2 CRCs
# as on any x86-64 of the last decade, no -march=native: this machine's
# AVX-512 instructions stop valgrind 3.19, which counts the program's instructions).
# Steps, each skipped when done: the deb-src entry and apt-get source rocksdb
# (bench/debsrc.sh); cmake -G Ninja (configure only: it writes the unity source and
# compile_commands.json) with ${CXX:-clang++-19}; the files above, moved into place last,
# so a complete folder means success. Needs cmake, ninja, python3.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$top/bench/work}
mkdir -p "$work"
work=$(cd "$work" && pwd)
out=$work/rocksdb-src
pkg=rocksdb

if [ -f "$out/rocksdb_unity.cc" ] && [ -f "$out/flags.txt" ] && [ -f "$out/crc32c.txt" ] \
   && [ -e "$out/tree/util/crc32c.cc" ] && cmp -s "$out/kvbench.cc" "$top/bench/rocksdb/kvbench.cc"; then
  echo "get-rocksdb: $out already complete"
  exit 0
fi

. "$top/bench/debsrc.sh"
ensure_deb_src get-rocksdb $pkg
srcdir=$(fetch_source get-rocksdb $pkg "$work" CMakeLists.txt include/rocksdb/db.h util/crc32c.cc)

rm -rf "$out.tmp"
mkdir -p "$out.tmp"
cxx=${CXX:-clang++-19}
cc=${CC:-$(echo "$cxx" | sed 's/clang++/clang/')}
if ! cmake -G Ninja -S "$srcdir" -B "$out.tmp/cmake" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
     -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=0 -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
     -DWITH_LIBURING=OFF -DWITH_GFLAGS=OFF -DFAIL_ON_WARNINGS=OFF -DWITH_TESTS=OFF \
     -DWITH_BENCHMARK_TOOLS=OFF -DWITH_TOOLS=OFF -DWITH_CORE_TOOLS=OFF -DWITH_TRACE_TOOLS=OFF \
     -DROCKSDB_BUILD_SHARED=OFF -DPORTABLE=ON -DFORCE_SSE42=ON >"$out.tmp/configure.log" 2>&1; then
  tail -n 20 "$out.tmp/configure.log" >&2
  echo "get-rocksdb: cmake could not configure $srcdir (log above)" >&2
  exit 1
fi
python3 - "$out.tmp" "$out" <<'PY'
import json, pathlib, shlex, shutil, sys
out = pathlib.Path(sys.argv[1])
cmds = json.loads((out / "cmake" / "compile_commands.json").read_text())

def flags(entry):
    words = shlex.split(entry["command"])[1:]
    keep, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif w in ("-o", "-c", "-MT", "-MF"):
            skip = True
        elif w == "-MD" or w.startswith("-flto") or w == entry["file"]:
            pass
        else:
            keep.append(w)
    return keep

unity = [e for e in cmds if e["file"].endswith("CMakeFiles/rocksdb.dir/Unity/unity_0_cxx.cxx")]
crc = [e for e in cmds if e["file"].endswith("/util/crc32c.cc")]
if len(unity) != 1 or len(crc) != 1:
    sys.exit("get-rocksdb: compile_commands.json has no one unity source and one crc32c.cc "
             "for the rocksdb library (is CMAKE_UNITY_BUILD honoured?)")
base = flags(unity[0])
extra = [w for w in flags(crc[0]) if w not in base]
(out / "flags.txt").write_text("".join(w + "\n" for w in base))
(out / "crc32c.txt").write_text("".join(w + "\n" for w in extra))
# sources CMake generated (build_version.cc) live in the build folder, which goes: they
# are kept in generated/ and the unity source names them there (its final place)
build, final = str(out / "cmake"), sys.argv[2]
lines = []
for line in pathlib.Path(unity[0]["file"]).read_text().splitlines(keepends=True):
    if line.startswith("#include \"" + build + "/"):
        gen = pathlib.Path(line.split("\"")[1])
        (out / "generated").mkdir(exist_ok=True)
        shutil.copy(gen, out / "generated" / gen.name)
        line = f'#include "{final}/generated/{gen.name}"\n'
    lines.append(line)
(out / "rocksdb_unity.cc").write_text("".join(lines))
PY
ln -s "$srcdir" "$out.tmp/tree"
cp "$top/bench/rocksdb/kvbench.cc" "$out.tmp/"
basename "$srcdir" >"$out.tmp/VERSION"
rm -rf "$out.tmp/cmake"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "get-rocksdb: $out ready ($(basename "$srcdir"), $(grep -c '#include' "$out/rocksdb_unity.cc") sources in one unity TU)"
