// HAZARD 4: linkonce_odr owners inlined away. Inline functions and templates are used from
// many external functions: a splitter that gives other partitions available_externally copies
// must keep a definition somewhere, because the owning partition may inline every call and
// drop its linkonce_odr body, leaving the copies' out-of-line calls undefined after the merge
// (undefined symbol in the merged object, link failure). Also a function whose address is
// taken (must keep one address), a static-local in an inline function (one instance program-
// wide) and a big template used with several types.
// MTPC-MAIN: support/main_linkonce.cpp
#include <cstdio>

template <typename T> struct Acc {
  T total{};
  __attribute__((noinline)) void add(T v) { total += v * 2 + 1; }
  T get() const { return total; }
};

inline int inl_counter() { static int n = 0; return ++n; }   // one `n` for the whole program

template <typename T> T tmax(T a, T b) { return a > b ? a : b; }

template <typename T> T poly(T x) {       // large enough not to be inlined everywhere
  T r = 0;
  for (int i = 0; i < 12; ++i) {
    r = r * x + T(i);
    if (r > T(100000)) r = r / T(7);
  }
  return r;
}

inline int (*inl_addr())(int) { return &poly<int>; }

int lo_one(int x) { Acc<int> a; a.add(x); a.add(poly(x)); return a.get() + inl_counter(); }
long lo_two(long x) { Acc<long> a; a.add(poly(x)); return tmax(a.get(), 5L) + inl_counter(); }
double lo_three(double x) { return poly(x) + tmax(x, 2.5) + inl_counter(); }
int lo_four(int x) { return poly(x + 1) + inl_counter(); }
unsigned lo_five(unsigned x) { Acc<unsigned> a; a.add(poly(x)); return a.get(); }
void *lo_addr1() { return (void *)&poly<int>; }
void *lo_addr2() { return (void *)inl_addr(); }
