// Call-graph shapes: a recursive SCC (mutual recursion through three functions, which must
// stay in one partition or call each other across partitions correctly), direct recursion,
// varargs functions (va_list forwarding), a big switch (jump table in .rodata) and function
// pointers passed around. Output depends on every path.
#include <stdarg.h>
#include <stdio.h>

int scc_a(int n);
__attribute__((noinline)) int scc_c(int n) { return n <= 0 ? 1 : scc_a(n - 1) * 2 + 1; }
__attribute__((noinline)) int scc_b(int n) { return n <= 0 ? 2 : scc_c(n - 1) + scc_a(n - 2); }
__attribute__((noinline)) int scc_a(int n) { return n <= 0 ? 3 : scc_b(n - 1) - n; }

__attribute__((noinline)) unsigned long fact(unsigned n) { return n < 2 ? 1 : n * fact(n - 1); }

__attribute__((noinline)) int vsum(int count, va_list ap) {
  int s = 0;
  for (int i = 0; i < count; i++) s = s * 3 + va_arg(ap, int);
  return s;
}
__attribute__((noinline)) int sum_n(int count, ...) {
  va_list ap;
  va_start(ap, count);
  int s = vsum(count, ap);
  va_end(ap);
  return s;
}
__attribute__((noinline)) double avg_d(int count, ...) {
  va_list ap;
  va_start(ap, count);
  double s = 0;
  for (int i = 0; i < count; i++) s += va_arg(ap, double);
  va_end(ap);
  return count ? s / count : 0;
}

__attribute__((noinline)) int big_switch(int op, int x) {
  switch (op) {
  case 0: return x + 1;     case 1: return x * 3;      case 2: return x - 7;
  case 3: return x ^ 0x5a;  case 4: return x << 2;     case 5: return x >> 1;
  case 6: return -x;        case 7: return x * x;      case 8: return x % 13;
  case 9: return x | 0x100; case 10: return x & 0xff;  case 11: return scc_a(x & 7);
  case 12: return (int)fact(x & 7); case 13: return sum_n(3, x, x + 1, x + 2);
  case 14: return x / 3;    case 15: return ~x;        case 16: return x + 1000;
  case 17: return x * 17;   case 18: return x - 18;    case 19: return x ^ 19;
  case 20: return x + 20;   case 21: return x * 21;    case 22: return x - 22;
  case 23: return x * 23 + 1; case 24: return x * 24 - 1; case 25: return x + 2525;
  default: return 99999;
  }
}

typedef int (*binop)(int, int);
__attribute__((noinline)) int apply_all(binop f, int n) {
  int acc = 0;
  for (int i = 0; i < n; i++) acc = acc * 7 % 1000003 + f(i % 27, i * 5);
  return acc;
}

int main(void) {
  printf("scc %d %d %d fact %lu\n", scc_a(10), scc_b(7), scc_c(5), fact(12));
  printf("va %d %d %.3f\n", sum_n(4, 1, 2, 3, 4), sum_n(0), avg_d(3, 1.5, 2.5, 4.0));
  printf("switch %d\n", apply_all(big_switch, 200));
  return 0;
}
