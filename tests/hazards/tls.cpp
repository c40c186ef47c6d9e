// HAZARD 12 (TLS): __thread and thread_local variables, including thread_local with dynamic
// initialization (TLS wrapper/init functions _ZTW/_ZTH, a guard), static TLS with internal
// linkage used from several functions (promotion must keep it thread-local and hidden so the
// TLS model does not degrade to general-dynamic through the GOT/PLT), accessed from two threads.
// MTPC-LDFLAGS: -pthread
#include <cstdio>
#include <pthread.h>

int make_seed(int x);
__thread int tl_counter = 5;
static __thread int tl_static = 100;
thread_local int tl_dynamic = make_seed(7);          // dynamic init: needs the TLS wrapper
static thread_local int tl_dyn_static = make_seed(3);

__attribute__((noinline)) int make_seed(int x) { return x * 11; }
__attribute__((noinline)) int bump(int by) { tl_counter += by; tl_static -= by; return tl_counter; }
__attribute__((noinline)) int read_all() { return tl_counter * 1000 + tl_static + tl_dynamic + tl_dyn_static; }
__attribute__((noinline)) int *addr_static() { return &tl_static; }
__attribute__((noinline)) int mix(int k) {
  for (int i = 0; i < k; ++i) bump(i);
  tl_dynamic += k;
  tl_dyn_static *= 2;
  return read_all();
}

static void *worker(void *arg) {
  long k = (long)arg;
  static char buf[2][128];
  std::snprintf(buf[k - 1], sizeof buf[0], "thread%ld=%d own_static=%d", k, mix((int)k * 3),
                *addr_static() == tl_static);
  return buf[k - 1];
}

int main() {
  pthread_t t1, t2;
  void *r1, *r2;
  pthread_create(&t1, nullptr, worker, (void *)1L);
  pthread_join(t1, &r1);
  pthread_create(&t2, nullptr, worker, (void *)2L);
  pthread_join(t2, &r2);
  std::printf("%s\n%s\nmain=%d\n", (char *)r1, (char *)r2, mix(2));
  return 0;
}
