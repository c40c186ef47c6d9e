// HAZARD 9: llvm.used / llvm.compiler.used must follow their members (else a used static is
// dropped or SHF_GNU_RETAIN is lost, and --gc-sections removes it). Static functions and data
// reachable only through __attribute__((used)) or a retained custom section, read back at run
// time through __start_/__stop_ symbols. The test also checks the retained sections keep the
// R flag and that the named locals survive.
// MTPC-KEEP: used_only_fn used_only_var retained_a retained_b
// MTPC-LDFLAGS: -Wl,--gc-sections
#include <stdio.h>

struct entry { const char *name; int (*fn)(int); };

__attribute__((used, noinline)) static int used_only_fn(int x) { return x * 7 + 1; }
__attribute__((used)) static int used_only_var = 31;

static int hook_a(int x) { return x + 1; }
static int hook_b(int x) { return x * 3; }
__attribute__((used, retain, section("keep_tab"))) static const struct entry retained_a = {"a", hook_a};
__attribute__((used, retain, section("keep_tab"))) static const struct entry retained_b = {"b", hook_b};

extern const struct entry __start_keep_tab[], __stop_keep_tab[];

__attribute__((noinline)) int u_sum(int x) {
  int s = 0;
  for (const struct entry *e = __start_keep_tab; e < __stop_keep_tab; e++) s += e->fn(x);
  return s;
}
__attribute__((noinline)) int u_count(void) { return (int)(__stop_keep_tab - __start_keep_tab); }

int main(void) {
  printf("count=%d sum=%d\n", u_count(), u_sum(5));
  return 0;
}
