// HAZARD 2: preemptible symbols in a -shared -fPIC library. Default-visibility functions and
// variables of a shared library may be interposed by the executable, so a partition that gets
// a dso_local DECLARATION of one of them emits a PC-relative reference and the shared link
// fails (R_X86_64_PC32 against a preemptible symbol), or silently binds locally and ignores the
// interposer (the program output then differs). The main (support/main_shared.c) interposes
// lib_hook and lib_value. Hidden and protected symbols are also present: they must stay
// non-exported / non-preemptible. The final .so's dynamic symbol table is compared too.
// MTPC-SHARED
// MTPC-MAIN: support/main_shared.c
#include <stdio.h>

int lib_value = 7;                                   // interposed by main
int lib_other = 11;                                  // not interposed
__attribute__((visibility("hidden"))) int lib_hidden_var = 5;
__attribute__((visibility("protected"))) int lib_protected_var = 13;

__attribute__((noinline)) int lib_hook(int x) { return x * 2; }   // interposed by main
__attribute__((noinline)) int lib_square(int x) { return x * x; }
__attribute__((noinline, visibility("hidden"))) int lib_hidden_fn(int x) { return x + lib_hidden_var; }
__attribute__((noinline, visibility("protected"))) int lib_protected_fn(int x) {
  return x - lib_protected_var;
}

int lib_a(int x) { return lib_hook(x) + lib_value; }
int lib_b(int x) { return lib_square(x) + lib_other + lib_hidden_fn(x); }
int lib_c(int x) { return lib_protected_fn(lib_hook(x)) + lib_protected_var; }
int (*lib_fnptr(void))(int) { return lib_hook; }     // address of a preemptible function
int *lib_value_addr(void) { return &lib_value; }

void lib_report(void) {
  printf("lib: a=%d b=%d c=%d hook(3)=%d same_value=%d same_hook=%d\n", lib_a(1), lib_b(2),
         lib_c(3), lib_fnptr()(3), lib_value_addr() == &lib_value, lib_fnptr() == lib_hook);
}
