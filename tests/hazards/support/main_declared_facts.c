#include <stdio.h>
/* Both weak hooks of declared_facts.c replaced by two names of one function. */
int hook_impl(int x) { return x * 10; }
int hook_a(int) __attribute__((alias("hook_impl")));
int hook_b(int) __attribute__((alias("hook_impl")));
void facts_report(void);
int main(void) {
  facts_report();
  printf("main: same=%d\n", (void *)hook_a == (void *)hook_b);
  return 0;
}
