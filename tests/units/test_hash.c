/* Unit test for common/hash.c: MTPC's own BLAKE3 gives LLVM's digests
 * (llvm-c/blake3.h, the implementation MTPC used before) for every length
 * around the block (64), chunk (1024) and tree boundaries, fed whole and in
 * uneven pieces. Prints "N passed, N failed". */
#include "hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/blake3.h>

static int passed, failed;

static void llvm_hex(const unsigned char *data, size_t len, char hex[MTPC_HASH_HEX_LEN + 1])
{
	llvm_blake3_hasher h;
	unsigned char out[32];
	llvm_blake3_hasher_init(&h);
	llvm_blake3_hasher_update(&h, data, len);
	llvm_blake3_hasher_finalize(&h, out, sizeof out);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", out[i]);
}

static void check_len(const unsigned char *data, size_t len)
{
	char ours[MTPC_HASH_HEX_LEN + 1], pieces[MTPC_HASH_HEX_LEN + 1], theirs[MTPC_HASH_HEX_LEN + 1];
	mtpc_hash_hex(data, len, ours);
	mtpc_hasher *h = mtpc_hasher_new();
	for (size_t off = 0, step = 1; off < len; off += step, step = step * 3 % 1031 + 1)
		mtpc_hasher_update(h, data + off, step < len - off ? step : len - off);
	mtpc_hasher_finish(h, pieces);
	llvm_hex(data, len, theirs);
	if (!strcmp(ours, theirs) && !strcmp(pieces, theirs)) {
		passed++;
	} else {
		failed++;
		fprintf(stderr, "length %zu: ours %s, in pieces %s, LLVM's %s\n", len, ours, pieces, theirs);
	}
}

int main(void)
{
	size_t max = (1u << 20) + 4096;
	unsigned char *data = malloc(max);
	for (size_t i = 0; i < max; i++)
		data[i] = (unsigned char)(i % 251); /* the official test vectors' input */
	for (size_t len = 0; len <= 3 * 1024 + 130; len++)
		check_len(data, len);
	static const size_t big[] = {4095, 4096, 4097, 5120, 8191, 8192, 8193, 31744, 102400,
				     (1u << 20) - 1, 1u << 20, (1u << 20) + 4096};
	for (size_t i = 0; i < sizeof big / sizeof *big; i++)
		check_len(data, big[i]);
	free(data);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
