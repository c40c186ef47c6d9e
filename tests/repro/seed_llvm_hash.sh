#!/bin/sh
# Reproducer: after ANY edit of a ThinLTO module, functions that ThinLTO promoted
# (`name.llvm.<module hash>`) are no longer found in the previous plan, so the seeded split
# places them afresh (and their measured-time scaling is lost too); and every partition that
# mentions such a name changes bytes, since the suffix is the hash of the module's bitcode.
#
# Found by bench/edit_bench.py (issue #4). splitter/plan.c:seed_find() matches names exactly.
# Expected: after a one-function edit that adds/removes nothing, every unit is seeded.
# Actual:   the units holding `.llvm.<hash>` functions are not ("N units seeded" < units).
# Exit status 1 when the problem reproduces, 0 when it is fixed.
#
#   tests/repro/seed_llvm_hash.sh [BUILD_DIR]      (default: build)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
SPLIT=$BUILD/splitter/mtpc-split
L=${MTPC_LLVM_BIN:-/usr/lib/llvm-19/bin}   # the LLVM of the MTPC under test
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"

cat > b.c <<'C'
int a_api(int);
int a_other(int);
int main(int c, char **v) { (void)v; return a_api(c) + a_other(c); }
C
src() {   # $1: the constant in a_other (the edit: same lines, one function)
cat > a.c <<C
__attribute__((noinline)) static int h1(int x) { return x * 3 + 1; }
__attribute__((noinline)) static int h2(int x) { return x ^ 0x55; }
int a_api(int x) { return h1(x) + h2(x); }          /* small: imported into b.c's module, */
int a_other(int x) {                                 /* so h1 and h2 get promoted */
  int s = 0;
  for (int i = 0; i < x; i++) s += h1(i) * $1;
  return s;
}
int a_third(int x) { return h2(x) * 11 + a_other(x - 1); }
C
}
build() {
  $L/clang -O2 -flto=thin -c a.c -o a.o
  $L/clang -O2 -flto=thin -c b.c -o b.o
  $L/clang -flto=thin -fuse-ld=lld -Wl,--thinlto-index-only=idx.txt "$T/a.o" "$T/b.o" -o x
  rm -rf st && mkdir st
  (cd st && $L/clang -O2 -c -x ir "$T/a.o" -fthinlto-index="$T/a.o.thinlto.bc" -o a.native.o \
     -save-temps=obj)
  cp st/*.3.import.bc a.import.bc
}
names() { grep -o '"[a-z_0-9]*\.llvm\.[0-9]*"' out/plan.json | sort -u | tr '\n' ' '; }

src 7; build
"$SPLIT" a.import.bc -o out -n 2 --stats
echo "before the edit: promoted names in plan.json: $(names)"
cp -r out out0
src 8; build                      # edit a_other in place: 7 -> 8
"$SPLIT" a.import.bc -o out -n 2 --stats 2> stats.txt
cat stats.txt
echo "after the edit:  promoted names in plan.json: $(names)"
units=$(sed -n 's/.*"units": *\([0-9]*\).*/\1/p' out/plan.json | head -1)
seeded=$(sed -n 's/.* \([0-9]*\) units seeded.*/\1/p' stats.txt)
changed=0
for f in out/p*.bc; do cmp -s "$f" "out0/${f#out/}" || changed=$((changed + 1)); done
echo "units: $units, seeded from the previous plan: $seeded; partition files changed: $changed"
if [ "$seeded" -lt "$units" ]; then
  echo "REPRODUCED: units holding ThinLTO-promoted (.llvm.<hash>) functions were not seeded"
  exit 1
fi
echo "not reproduced (fixed?)"
