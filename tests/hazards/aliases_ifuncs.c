// HAZARD 6: aliases need their aliasee in the same partition; ifuncs need their resolver.
// Function and variable aliases (also a weak alias and an alias of an alias), an ifunc whose
// resolver picks an implementation from a global, and callers of all of them in separate
// functions so a call-graph splitter spreads them. (llvm-split 19 produces partitions that
// fail the verifier on ifuncs.)
#include <stdio.h>

int impl_value = 40;
__attribute__((noinline)) int real_add(int a, int b) { return a + b + impl_value; }
int alias_add(int, int) __attribute__((alias("real_add")));
int alias_of_alias(int, int) __attribute__((alias("alias_add")));
__attribute__((weak)) int weak_alias_add(int, int) __attribute__((alias("real_add")));

int data_target[4] = {1, 2, 3, 4};
extern int data_alias[4] __attribute__((alias("data_target")));

static int impl_fast(int x) { return x * 10; }
static int impl_slow(int x) { return x + 10; }
int use_fast = 1;
static int (*resolve_pick(void))(int) { return use_fast ? impl_fast : impl_slow; }
int picked(int) __attribute__((ifunc("resolve_pick")));

static int impl2_a(int x) { return x - 3; }
static void *resolve_second(void) { return (void *)impl2_a; }
int second_ifunc(int) __attribute__((ifunc("resolve_second")));

__attribute__((noinline)) int user_one(int x) { return alias_add(x, 1) + picked(x); }
__attribute__((noinline)) int user_two(int x) { return alias_of_alias(x, 2) * 2 + data_alias[x & 3]; }
__attribute__((noinline)) int user_three(int x) { return weak_alias_add(x, 3) + second_ifunc(x); }
__attribute__((noinline)) int user_four(int x) { return picked(x) + second_ifunc(x + 1); }
int (*get_picked(void))(int) { return picked; }

int main(void) {
  printf("one=%d two=%d three=%d four=%d\n", user_one(1), user_two(2), user_three(3),
         user_four(4));
  printf("ptr=%d same_alias=%d data=%d\n", get_picked()(5),
         (void *)alias_add == (void *)real_add, data_alias[2] + data_target[3]);
  return 0;
}
