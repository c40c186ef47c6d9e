// HAZARD 10: llvm.global_ctors / llvm.global_dtors priorities and order, and __start_/__stop_
// arrays of one section that must stay together and in order. Constructors with priorities
// and without, destructors, and a "mysec" section filled by many globals whose order in the
// module is the order the program prints. Each constructor lives in its own function so a
// splitter may put them in different partitions.
#include <stdio.h>

struct rec { int id; const char *name; };
#define REC(v, n) __attribute__((used, section("mysec"))) static const struct rec rec_##v = {v, n};
REC(1, "first") REC(2, "second") REC(3, "third") REC(4, "fourth") REC(5, "fifth")
extern const struct rec __start_mysec[], __stop_mysec[];

static char log_buf[256];
static int log_len;
__attribute__((noinline)) void note(const char *s) {
  while (*s && log_len < 250) log_buf[log_len++] = *s++;
  log_buf[log_len++] = ' ';
}

__attribute__((constructor(200))) static void ctor_200(void) { note("c200"); }
__attribute__((constructor(101))) static void ctor_101(void) { note("c101"); }
__attribute__((constructor)) static void ctor_default_a(void) { note("cA"); }
__attribute__((constructor)) static void ctor_default_b(void) { note("cB"); }
__attribute__((constructor(150))) void ctor_150_ext(void) { note("c150"); }
__attribute__((destructor(101))) static void dtor_101(void) { printf("dtor101\n"); }
__attribute__((destructor(300))) static void dtor_300(void) { printf("dtor300\n"); }
__attribute__((destructor)) static void dtor_default(void) { printf("dtor-default\n"); }

__attribute__((noinline)) int walk(void) {
  int sum = 0;
  for (const struct rec *r = __start_mysec; r < __stop_mysec; r++) {
    printf("rec %d %s\n", r->id, r->name);
    sum = sum * 10 + r->id;
  }
  return sum;
}

int main(void) {
  log_buf[log_len] = 0;
  printf("ctors: %s\n", log_buf);
  printf("walk=%d\n", walk());
  return 0;
}
