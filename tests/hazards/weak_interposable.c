// HAZARD 3: interposable (weak) definitions and address identity. A weak definition may be
// replaced at link time (support/main_weak.c overrides weak_override and weak_data), so a
// splitter must never copy its body into other partitions (as available_externally or as a
// duplicate): inlining the copy would ignore the override. Functions whose address is compared
// across partitions must keep one address; only unnamed_addr constants (string literals) may be
// duplicated.
// MTPC-MAIN: support/main_weak.c
#include <stdio.h>
#include <string.h>

__attribute__((weak)) int weak_override(int x) { return x + 1; }    // overridden by main
__attribute__((weak)) int weak_kept(int x) { return x * 3; }        // not overridden
__attribute__((weak)) int weak_data = 5;                            // overridden by main
__attribute__((weak)) const char weak_name[] = "fixture-weak-name";

__attribute__((noinline)) int identity_fn(int x) { return x ^ 0x55; }
const char *const shared_text = "shared-constant-text";

int w_one(int x) { return weak_override(x) + weak_kept(x) + weak_data; }
int w_two(int x) { return weak_override(x * 2) - weak_data; }
void *w_addr_a(void) { return (void *)identity_fn; }
void *w_addr_b(void) { return (void *)&identity_fn; }
void *w_addr_override(void) { return (void *)weak_override; }
const char *w_str_a(void) { return "unnamed-addr-literal"; }
const char *w_str_b(void) { return "unnamed-addr-literal"; }

void w_report(void) {
  printf("weak: one=%d two=%d kept=%d data=%d name=%s\n", w_one(3), w_two(4), weak_kept(5),
         weak_data, weak_name);
  printf("weak: same_fn=%d override_is_main=%d strs_equal=%d text=%s\n",
         w_addr_a() == w_addr_b(), w_addr_override() == (void *)weak_override,
         strcmp(w_str_a(), w_str_b()) == 0, shared_text);
}
