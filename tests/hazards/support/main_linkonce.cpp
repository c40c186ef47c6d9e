#include <cstdio>
int lo_one(int); long lo_two(long); double lo_three(double); int lo_four(int);
unsigned lo_five(unsigned); void *lo_addr1(); void *lo_addr2();
inline int inl_counter() { static int n = 0; return ++n; }
template <typename T> T poly(T x);
int main() {
  std::printf("one=%d two=%ld three=%.3f four=%d five=%u\n", lo_one(3), lo_two(4),
              lo_three(1.5), lo_four(2), lo_five(6));
  std::printf("counter=%d same_addr=%d\n", inl_counter(), lo_addr1() == lo_addr2());
  return 0;
}
