/* Executable: constructor order, top-level asm, aliases and ifuncs from big.c. */
#include "sample.h"
#include <stdio.h>

__asm__(".text\n.globl asm_answer\n.type asm_answer,@function\nasm_answer:\n"
	"  movl $42, %eax\n  ret\n.size asm_answer, .-asm_answer\n");
int asm_answer(void);

static int order[4], norder;
__attribute__((constructor(200))) static void ctor_late(void) { order[norder++] = 2; }
__attribute__((constructor(101))) static void ctor_early(void) { order[norder++] = 1; }

static int local_twice(int x) { return 2 * x; }

int main(void)
{
	printf("ctors %d %d (%d)\n", order[0], order[1], norder);
	printf("asm %d\n", asm_answer());
	printf("util %d %d weak %d\n", util_compute(1), util_compute(2), util_weak());
	printf("%s %d %d\n", shlib_name(), shlib_api(1), shlib_api(2));
	printf("big %d alias %d ifunc %d\n", big_entry(40), big_alias(7), big_dispatch(5));
	big_tls += local_twice(3);
	printf("tls %d\n", big_tls);
	return 0;
}
