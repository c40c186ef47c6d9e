#include "calc.h"
#include "lib.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	int r = lib_trace(argc); /* MARK:main */
	(void)argv;
	r = calc_all(argc + 41 + r);
	printf("dbg %d\n", r);
	return 0;
}
