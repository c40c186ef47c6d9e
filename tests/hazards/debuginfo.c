// HAZARD 11: debug info. Compiled with -g: every partition carries the compile unit and
// named metadata (llvm.dbg.cu, llvm.module.flags, llvm.ident); subprograms of functions
// moved to another partition, inlined-at locations across partitions and global variable
// debug info must still verify, and the merged object's DWARF must pass
// `llvm-dwarfdump --verify` (checked for every fixture built with -g).
// MTPC-CFLAGS: -g
#include <stdio.h>

struct point { int x, y; };
static struct point origin = {1, 2};
int dbg_global = 3;

static inline int sq(int v) { return v * v; }
__attribute__((noinline)) static int dist2(struct point a, struct point b) {
  return sq(a.x - b.x) + sq(a.y - b.y);
}
__attribute__((noinline)) int d_one(int x) {
  struct point p = {x, x + 1};
  return dist2(p, origin);
}
__attribute__((noinline)) int d_two(int x) {
  int acc = 0;
  for (int i = 0; i < x; i++) acc += d_one(i) * dbg_global;
  return acc;
}
__attribute__((noinline)) int d_three(int x) { return sq(x) + dist2(origin, origin); }

int main(void) {
  printf("one=%d two=%d three=%d\n", d_one(4), d_two(5), d_three(6));
  return 0;
}
