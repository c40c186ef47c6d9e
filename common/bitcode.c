/* bitcode.c: see bitcode.h. */
#include "bitcode.h"

#include <string.h>

int mtpc_is_bitcode(const void *data, size_t len)
{
	return len >= 4 && (!memcmp(data, "BC\xC0\xDE", 4) || !memcmp(data, "\xDE\xC0\x17\x0B", 4));
}
