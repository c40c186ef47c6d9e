/* Shared library: exported API, a hidden helper, TLS, a constructor. */
#include "sample.h"
#include <stdio.h>

static int shlib_ready;
_Thread_local int shlib_tls = 100;
__attribute__((visibility("hidden"))) int shlib_hidden(int x) { return x + shlib_tls; }
static int shlib_static(int x) { return shlib_hidden(x) * 2; }
__attribute__((constructor)) static void shlib_init(void) { shlib_ready = 1; }
int shlib_api(int x) { shlib_tls += 1; return shlib_ready ? shlib_static(x) : -1; }
const char *shlib_name(void) { return "shlib"; }
