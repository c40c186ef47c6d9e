// HAZARD 5: comdats stay whole, comdat-keyed llvm.global_ctors entries follow their comdat.
// C++17 inline variables with dynamic initialization and template static data members get a
// comdat (variable + guard + init function) and a global_ctors entry keyed on that comdat. If
// the splitter separates the variable from its guard/initializer, or puts the ctor entry in a
// partition without the comdat, the initializer runs twice, never, or the link fails.
// support/main_comdats.cpp uses the same inline variables (same comdats, linker keeps one).
// MTPC-MAIN: support/main_comdats.cpp
#include <cstdio>

int trace(const char *what, int v);   // defined in main: prints initialization order

inline int inline_var = trace("inline_var", 10);
inline int inline_var2 = trace("inline_var2", inline_var + 1);

template <typename T> struct Holder {
  static int value;
  static int get() { return value; }
};
template <typename T> int Holder<T>::value = trace("Holder::value", sizeof(T) * 3);

struct Obj {
  int v;
  Obj(int x) : v(trace("Obj", x)) {}
  virtual ~Obj() {}
  virtual int get() const { return v; }
};
inline Obj inline_obj{77};

static int plain_static = trace("plain_static", 5);   // ordinary (non-comdat) ctor

int c_one() { return inline_var + Holder<int>::get(); }
int c_two() { return inline_var2 + Holder<double>::get() + plain_static; }
int c_three() { return inline_obj.get() + Holder<char>::value; }
int *c_addr() { return &inline_var; }
