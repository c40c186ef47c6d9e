/* Member of a static library of bitcode: TLS, a static helper, a weak symbol. */
#include "sample.h"

_Thread_local int util_tls = 5;
static int util_scale(int x) { return x * 3 + util_tls; }
int util_compute(int x) { util_tls++; return util_scale(x); }
__attribute__((weak)) int util_weak(void) { return 11; }
