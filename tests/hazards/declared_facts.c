// HAZARD 16: facts a declaration carries into a partition. A weak definition may be replaced at
// link time, so LLVM never decides that its address differs from another global's; declared as
// a plain external in a partition that does not own it, it would be a distinct object, and two
// weak hooks that the program overrides with two names of one function
// (support/main_declared_facts.c) would compare different. The comparisons sit in their own
// functions (cmp_*), forced by MTPC-PLACE away from the definitions.
// MTPC-MAIN: support/main_declared_facts.c
// MTPC-PLACE: 0=cmp_hooks,cmp_hook_kept,cmp_hook_null 1=hook_a,hook_kept 2=hook_b,hook_c
#include <stdio.h>

__attribute__((weak)) int hook_a(int x) { return x + 1; }  // main: an alias of its hook_impl
__attribute__((weak)) int hook_b(int x) { return x + 2; }  // main: another alias of hook_impl
__attribute__((weak)) int hook_kept(int x) { return x + 3; }  // not overridden
__attribute__((weak)) int hook_c(int x) { return x + 4; }  // not overridden

__attribute__((noinline)) int cmp_hooks(void) { return (void *)hook_a == (void *)hook_b; }
__attribute__((noinline)) int cmp_hook_kept(void) { return (void *)hook_kept == (void *)hook_c; }
__attribute__((noinline)) int cmp_hook_null(void) { return hook_c != 0; }

void facts_report(void) {
  printf("hooks: same=%d kept_vs_c=%d c_nonnull=%d calls=%d %d %d %d\n", cmp_hooks(),
         cmp_hook_kept(), cmp_hook_null(), hook_a(1), hook_b(1), hook_kept(1), hook_c(1));
}
