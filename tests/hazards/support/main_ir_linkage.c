#include <stdio.h>
int lo_interp(int x) { return x * 1000; }   /* strong: overrides the fixture's linkonce */
int ae_fn(int x) { return x * 5; }          /* the real owner of the available_externally fn */
int k_one(int), k_two(int), k_three(int), bcaller(int, int), bdirect(int);
void *addr_a(void), *addr_b(void);
int main(void) {
  printf("one=%d two=%d three=%d\n", k_one(2), k_two(3), k_three(4));
  printf("blk=%d,%d,%d direct=%d same_addr=%d\n", bcaller(0, 5), bcaller(1, 5), bcaller(2, 5),
         bdirect(6), addr_a() == addr_b());
  return 0;
}
