#include <stdio.h>
const int *lua_first(void), *lua_second(void);
int lua_sum(int);
int main(void) {
  printf("local_unnamed_addr: same=%d values=%d %d %d\n", lua_first() == lua_second(),
         lua_first()[1], lua_second()[2], lua_sum(3));
  return 0;
}
