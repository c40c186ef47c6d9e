void a_report(void);
void b_report(void);
int a_one(int), b_one(int), a_counter(void), b_counter(void);
#include <stdio.h>
int main(void) {
  a_report();
  b_report();
  printf("mix %d %d %d %d\n", a_one(2), b_one(2), a_counter(), b_counter());
  return 0;
}
