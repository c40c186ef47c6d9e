#include <cstdio>
int trace(const char *what, int v) {
  static int order = 0;
  std::printf("init %d: %s = %d\n", ++order, what, v);
  return v;
}
inline int inline_var = trace("inline_var", 10);
int c_one(); int c_two(); int c_three(); int *c_addr();
int main() {
  std::printf("one=%d two=%d three=%d same=%d var=%d\n", c_one(), c_two(), c_three(),
              c_addr() == &inline_var, inline_var);
  return 0;
}
