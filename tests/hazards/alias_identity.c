// HAZARD 15: several names of one object. An alias and its aliasee (also a weak alias, an
// alias chain, a variable alias, a static's alias) are one address; LLVM never decides equality
// of an alias, and sees a non-interposable alias as its aliasee's memory. A partition that only
// declares two of the names sees two distinct objects: `==` folds to false, a store through
// one name is not seen by a load through the other. Each comparison and access sits in its own
// function (cmp_*, mem_*), so a plan may put it away from the names; MTPC-PLACE forces that.
// An ifunc and the function its resolver picks, and a name `.set` gives a function in module asm,
// are compared too: there the unsplit module decides as a partition does.
// MTPC-PLACE: 0=cmp_weak_strong,cmp_weak_static,cmp_chain,cmp_var,cmp_key,cmp_switch,mem_two_names,cmp_promoted,cmp_ifunc,cmp_set 1=add_alias,counter_alias,pick_impl 2=add_weak_alias,filler,set_target
#include <stdint.h>
#include <stdio.h>

static int add(int a, int b) { return a + b; }
int add_alias(int, int) __attribute__((alias("add")));
int add_weak_alias(int, int) __attribute__((weak, alias("add")));
int add_chain(int, int) __attribute__((alias("add_alias")));

int counter = 5;
extern int counter_alias __attribute__((alias("counter")));

// A static used from several functions (promoted when they are apart) and its alias.
static __attribute__((noinline)) int scaled(int x) { return x * 7 + 1; }
int scaled_alias(int) __attribute__((alias("scaled")));
__attribute__((noinline)) int use_scaled(int x) { return scaled(x) + 2; }

typedef int (*binop)(int, int);
__attribute__((noinline)) int cmp_weak_strong(void) { return (void *)add_weak_alias == (void *)add_alias; }
__attribute__((noinline)) int cmp_weak_static(void) { return (void *)add_weak_alias == (void *)add; }
__attribute__((noinline)) int cmp_chain(void) { return (void *)add_chain == (void *)add_alias; }
__attribute__((noinline)) int cmp_var(void) { return &counter_alias == &counter; }
__attribute__((noinline)) int cmp_promoted(void) { return (void *)scaled_alias == (void *)scaled; }

// A small map keyed by address: registered under one name, looked up under another.
static const struct { binop key; int value; } entries[] = {{add_alias, 11}, {add, 12}};
__attribute__((noinline)) int cmp_key(void) {
  for (unsigned i = 0; i < sizeof entries / sizeof entries[0]; i++)
    if (entries[i].key == (binop)add_weak_alias)
      return entries[i].value;
  return -1;
}
__attribute__((noinline)) int cmp_switch(void) {
  switch ((intptr_t)(void *)add_chain - (intptr_t)(void *)add) {
  case 0: return 100;
  default: return 200;
  }
}
// The same variable written under both names: the last store wins.
__attribute__((noinline)) int mem_two_names(void) {
  counter = 1;
  counter_alias = 2;
  return counter;
}
static int pick_impl(int x) { return x * 3; }
static int (*resolve_pick(void))(int) { return pick_impl; }
int picked(int) __attribute__((ifunc("resolve_pick")));
__attribute__((noinline)) int cmp_ifunc(void) { return (void *)picked == (void *)pick_impl; }

int set_target(int x) { return x - 1; }
__asm__(".globl set_name\n.set set_name, set_target");
extern int set_name(int);
__attribute__((noinline)) int cmp_set(void) { return (void *)set_name == (void *)set_target; }

__attribute__((noinline)) int filler(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * i; return s; }

int main(void) {
  printf("weak_strong=%d weak_static=%d chain=%d var=%d promoted=%d\n", cmp_weak_strong(),
         cmp_weak_static(), cmp_chain(), cmp_var(), cmp_promoted());
  printf("key=%d switch=%d mem=%d calls=%d %d %d %d\n", cmp_key(), cmp_switch(), mem_two_names(),
         add_alias(1, 2), add_weak_alias(3, 4), add_chain(5, 6), use_scaled(3) + scaled_alias(1));
  printf("ifunc=%d set=%d calls=%d %d filler=%d\n", cmp_ifunc(), cmp_set(), picked(2), set_name(2),
         filler(10));
  return 0;
}
