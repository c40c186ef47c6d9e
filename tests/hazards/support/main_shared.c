#include <stdio.h>
int lib_value = 70;                    /* interposes the library's lib_value */
int lib_hook(int x) { return x * 1000; } /* interposes the library's lib_hook */
int lib_a(int), lib_b(int), lib_c(int), *lib_value_addr(void);
int (*lib_fnptr(void))(int);
void lib_report(void);
int main(void) {
  lib_report();
  printf("main: a=%d b=%d c=%d ptr_is_main=%d value_is_main=%d\n", lib_a(4), lib_b(5),
         lib_c(6), lib_fnptr() == lib_hook, lib_value_addr() == &lib_value);
  return 0;
}
