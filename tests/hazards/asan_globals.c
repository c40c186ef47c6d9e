// HAZARD 9, 12: a module instrumented by AddressSanitizer in the ThinLTO pre-link compile:
// every global gets a redzone-padded copy in its own comdat with !associated metadata
// (SHF_LINK_ORDER), an asan.module_ctor/dtor pair keyed on itself in llvm.global_ctors and
// llvm.used, and instrumented accesses to globals owned by other partitions. Partitions are
// compiled without -fsanitize (instrumenting twice would register every global twice); the
// program is linked with the ASan runtime and must run clean and print the same.
// MTPC-CFLAGS: -fsanitize=address
// MTPC-LDFLAGS: -fsanitize=address
#include <stdio.h>
#include <string.h>
static char buf_a[17] = "hello";
static const char *names[] = {"x", "yy", "zzz"};
char global_b[33];
static int helper(int i) { return (int)strlen(names[i % 3]) + buf_a[i & 7]; }
int f1(int x) { global_b[x & 31] = (char)x; return helper(x); }
int f2(int x) { return helper(x + 1) * 2 + global_b[x & 31]; }
int f3(int x) { char local[8]; memset(local, x, sizeof local); return local[x & 7] + f1(x); }
int main(int argc, char **argv) { (void)argv; int s = 0; for (int i = 0; i < 100; i++) s += f1(i) + f2(i) + f3(i + argc); printf("%d %s\n", s, buf_a); return 0; }
