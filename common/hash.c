/* hash.c: see hash.h. */
#include "hash.h"
#include "util.h"

#include <stdlib.h>

#include <llvm-c/blake3.h>

struct mtpc_hasher {
	llvm_blake3_hasher h;
};

mtpc_hasher *mtpc_hasher_new(void)
{
	mtpc_hasher *h = xmalloc(sizeof *h);
	llvm_blake3_hasher_init(&h->h);
	return h;
}

void mtpc_hasher_update(mtpc_hasher *h, const void *data, size_t len)
{
	llvm_blake3_hasher_update(&h->h, data, len);
}

void mtpc_hasher_finish(mtpc_hasher *h, char hex[MTPC_HASH_HEX_LEN + 1])
{
	unsigned char out[MTPC_HASH_HEX_LEN / 2];
	static const char digits[] = "0123456789abcdef";
	llvm_blake3_hasher_finalize(&h->h, out, sizeof out);
	for (size_t i = 0; i < sizeof out; i++) {
		hex[2 * i] = digits[out[i] >> 4];
		hex[2 * i + 1] = digits[out[i] & 15];
	}
	hex[MTPC_HASH_HEX_LEN] = 0;
	free(h);
}

void mtpc_hash_hex(const void *data, size_t len, char hex[MTPC_HASH_HEX_LEN + 1])
{
	mtpc_hasher *h = mtpc_hasher_new();
	mtpc_hasher_update(h, data, len);
	mtpc_hasher_finish(h, hex);
}
