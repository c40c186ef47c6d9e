#include <stdio.h>
static unsigned hot(unsigned x) { for (int i = 0; i < 3; i++) x = x * 2654435761u + 7; return x; }
static unsigned cold(unsigned x) { return x ^ 0x5555u; }
unsigned (*volatile table[2])(unsigned) = {hot, cold};
__attribute__((noinline)) unsigned dispatch(unsigned i, unsigned x) { return table[i & 1](x); }
int main(void) { unsigned s = 0; for (unsigned i = 0; i < 100000; i++) s += dispatch(i % 97 == 0, i); printf("%u\n", s); return 0; }
