// HAZARD 12 (C++): personality functions and exceptions, RTTI, vtables (constant
// initializers referring to functions and typeinfo), templates and virtual calls. A partition
// that throws or catches needs __gxx_personality_v0 and the typeinfo objects (linkonce_odr
// _ZTI/_ZTS); vtables reference virtual functions owned by other partitions; dynamic_cast
// and typeid must still agree across partitions (typeinfo address identity).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

struct Shape {
  virtual ~Shape() {}
  virtual int area() const = 0;
  virtual const char *name() const { return "shape"; }
};
struct Rect : Shape {
  int w, h;
  Rect(int w, int h) : w(w), h(h) {}
  int area() const override { return w * h; }
  const char *name() const override { return "rect"; }
};
struct Square : Rect {
  explicit Square(int s) : Rect(s, s) {}
  const char *name() const override { return "square"; }
};
struct Tri : Shape {
  int b, h;
  Tri(int b, int h) : b(b), h(h) {}
  int area() const override { return b * h / 2; }
};

struct MyError : std::runtime_error {
  int code;
  MyError(const char *m, int c) : std::runtime_error(m), code(c) {}
};

template <typename T> struct Stack {
  std::vector<T> v;
  void push(T x) { v.push_back(x); }
  T pop() {
    if (v.empty()) throw MyError("empty", 42);
    T x = v.back();
    v.pop_back();
    return x;
  }
};

__attribute__((noinline)) Shape *make(int k) {
  switch (k % 3) {
  case 0: return new Rect(k, k + 1);
  case 1: return new Square(k);
  default: return new Tri(k, 4);
  }
}
__attribute__((noinline)) int checked_div(int a, int b) {
  if (b == 0) throw MyError("div by zero", a);
  return a / b;
}
__attribute__((noinline)) int safe_div(int a, int b) {
  try {
    return checked_div(a, b);
  } catch (const MyError &e) {
    return -e.code;
  }
}
__attribute__((noinline)) std::string describe(const Shape *s) {
  std::string r = s->name();
  if (dynamic_cast<const Rect *>(s)) r += "/is-rect";
  if (typeid(*s) == typeid(Square)) r += "/exact-square";
  return r + ":" + std::to_string(s->area());
}
__attribute__((noinline)) int drain(Stack<int> &st) {
  int sum = 0;
  try {
    for (;;) sum += st.pop();
  } catch (const std::exception &e) {
    std::printf("drained (%s, %s)\n", e.what(), typeid(e).name());
  }
  return sum;
}

int main() {
  for (int k = 0; k < 6; ++k) {
    Shape *s = make(k);
    std::printf("%d %s\n", k, describe(s).c_str());
    delete s;
  }
  std::printf("div %d %d\n", safe_div(10, 3), safe_div(7, 0));
  Stack<int> st;
  for (int i = 1; i <= 5; ++i) st.push(i * i);
  std::printf("sum %d\n", drain(st));
  try {
    Stack<std::string> ss;
    ss.push("x");
    std::printf("pop %s\n", ss.pop().c_str());
    ss.pop();
  } catch (const MyError &e) {
    std::printf("caught %s code=%d\n", e.what(), e.code);
  }
  return 0;
}
