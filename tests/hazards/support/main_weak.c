#include <stdio.h>
int weak_override(int x) { return x * 100; }   /* strong: wins over the fixture's weak one */
int weak_data = 42;
int w_one(int), w_two(int);
void *w_addr_a(void), *w_addr_b(void);
void w_report(void);
int identity_fn(int);
int main(void) {
  w_report();
  printf("main: one=%d two=%d addr_ok=%d\n", w_one(7), w_two(8),
         w_addr_a() == (void *)identity_fn && w_addr_b() == (void *)identity_fn);
  return 0;
}
