#ifndef DBG_LIB_H
#define DBG_LIB_H
int lib_mix(int a, int b);
int lib_scale(int x);
int lib_trace(int x);
#endif
