/* hash.c: see hash.h. BLAKE3 (hash mode, 32-byte digest) after the
 * specification's reference implementation: portable and small rather than
 * fast (no SIMD, one chunk at a time). The tools hash paths, index shards
 * and modules of a few megabytes at most, where this costs milliseconds;
 * what it saves is loading libLLVM (about 17 ms per process) in the tools
 * that only hash, which Ninja starts once per inner step. */
#include "hash.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_LEN 64
#define CHUNK_LEN 1024
#define CHUNK_START 1u
#define CHUNK_END 2u
#define PARENT 4u
#define ROOT 8u
#define MAX_DEPTH 54 /* 2^54 chunks: more than any file */

static const uint32_t IV[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
			       0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};
static const unsigned char PERMUTATION[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};

static uint32_t rotr(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void g(uint32_t *s, int a, int b, int c, int d, uint32_t mx, uint32_t my)
{
	s[a] += s[b] + mx;
	s[d] = rotr(s[d] ^ s[a], 16);
	s[c] += s[d];
	s[b] = rotr(s[b] ^ s[c], 12);
	s[a] += s[b] + my;
	s[d] = rotr(s[d] ^ s[a], 8);
	s[c] += s[d];
	s[b] = rotr(s[b] ^ s[c], 7);
}

/* The compression function: the first 8 words of out are the chaining value. */
static void compress(const uint32_t cv[8], const uint32_t block[16], uint64_t counter, uint32_t block_len,
		     uint32_t flags, uint32_t out[16])
{
	uint32_t s[16] = {cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6], cv[7],
			  IV[0], IV[1], IV[2], IV[3], (uint32_t)counter, (uint32_t)(counter >> 32), block_len, flags};
	uint32_t m[16], t[16];
	memcpy(m, block, sizeof m);
	for (int round = 0; round < 7; round++) {
		g(s, 0, 4, 8, 12, m[0], m[1]);
		g(s, 1, 5, 9, 13, m[2], m[3]);
		g(s, 2, 6, 10, 14, m[4], m[5]);
		g(s, 3, 7, 11, 15, m[6], m[7]);
		g(s, 0, 5, 10, 15, m[8], m[9]);
		g(s, 1, 6, 11, 12, m[10], m[11]);
		g(s, 2, 7, 8, 13, m[12], m[13]);
		g(s, 3, 4, 9, 14, m[14], m[15]);
		for (int i = 0; i < 16; i++)
			t[i] = m[PERMUTATION[i]];
		memcpy(m, t, sizeof m);
	}
	for (int i = 0; i < 8; i++) {
		out[i] = s[i] ^ s[i + 8];
		out[i + 8] = s[i + 8] ^ cv[i];
	}
}

static void words_of(const unsigned char *bytes, uint32_t w[16])
{
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)bytes[4 * i] | (uint32_t)bytes[4 * i + 1] << 8 | (uint32_t)bytes[4 * i + 2] << 16 |
		       (uint32_t)bytes[4 * i + 3] << 24;
}

/* A compression not yet done: a chunk's last block or a parent node, which
 * becomes a chaining value, or the root (ROOT flag) at the end. */
struct output {
	uint32_t cv[8], block[16];
	uint64_t counter;
	uint32_t block_len, flags;
};

static void output_cv(const struct output *o, uint32_t cv[8])
{
	uint32_t out[16];
	compress(o->cv, o->block, o->counter, o->block_len, o->flags, out);
	memcpy(cv, out, 8 * sizeof *cv);
}

static struct output parent_output(const uint32_t left[8], const uint32_t right[8])
{
	struct output o = {.counter = 0, .block_len = BLOCK_LEN, .flags = PARENT};
	memcpy(o.cv, IV, sizeof o.cv);
	memcpy(o.block, left, 8 * sizeof *left);
	memcpy(o.block + 8, right, 8 * sizeof *right);
	return o;
}

struct mtpc_hasher {
	/* the current chunk */
	uint32_t cv[8];
	uint64_t chunk_counter;
	unsigned char buf[BLOCK_LEN];
	size_t buf_len;
	int blocks_compressed;
	/* the chaining values of complete subtrees, one per set bit of the
	 * number of chunks done */
	uint32_t stack[MAX_DEPTH][8];
	int depth;
};

static size_t chunk_len(const mtpc_hasher *h)
{
	return (size_t)h->blocks_compressed * BLOCK_LEN + h->buf_len;
}

static uint32_t chunk_start(const mtpc_hasher *h)
{
	return h->blocks_compressed == 0 ? CHUNK_START : 0;
}

static struct output chunk_output(const mtpc_hasher *h)
{
	unsigned char block[BLOCK_LEN] = {0};
	memcpy(block, h->buf, h->buf_len);
	struct output o = {.counter = h->chunk_counter, .block_len = (uint32_t)h->buf_len,
			   .flags = chunk_start(h) | CHUNK_END};
	memcpy(o.cv, h->cv, sizeof o.cv);
	words_of(block, o.block);
	return o;
}

static void chunk_reset(mtpc_hasher *h, uint64_t counter)
{
	memcpy(h->cv, IV, sizeof h->cv);
	h->chunk_counter = counter;
	h->buf_len = 0;
	h->blocks_compressed = 0;
}

mtpc_hasher *mtpc_hasher_new(void)
{
	mtpc_hasher *h = xcalloc(1, sizeof *h);
	chunk_reset(h, 0);
	return h;
}

/* A finished chunk's chaining value: merge it with the subtrees it
 * completes (one per trailing zero bit of the chunk count) and push. */
static void add_chunk_cv(mtpc_hasher *h, uint32_t cv[8], uint64_t total_chunks)
{
	while ((total_chunks & 1) == 0) {
		struct output o = parent_output(h->stack[--h->depth], cv);
		output_cv(&o, cv);
		total_chunks >>= 1;
	}
	memcpy(h->stack[h->depth++], cv, 8 * sizeof *cv);
}

void mtpc_hasher_update(mtpc_hasher *h, const void *data, size_t len)
{
	const unsigned char *p = data;
	while (len) {
		/* A full chunk is finished only once more input comes: the last
		 * chunk is the root's (or its parents') input. */
		if (chunk_len(h) == CHUNK_LEN) {
			struct output o = chunk_output(h);
			uint32_t cv[8];
			output_cv(&o, cv);
			uint64_t total = h->chunk_counter + 1;
			add_chunk_cv(h, cv, total);
			chunk_reset(h, total);
		}
		/* Likewise a full block is compressed only when more comes. */
		if (h->buf_len == BLOCK_LEN) {
			uint32_t w[16], out[16];
			words_of(h->buf, w);
			compress(h->cv, w, h->chunk_counter, BLOCK_LEN, chunk_start(h), out);
			memcpy(h->cv, out, sizeof h->cv);
			h->blocks_compressed++;
			h->buf_len = 0;
		}
		size_t want = CHUNK_LEN - chunk_len(h), room = BLOCK_LEN - h->buf_len;
		size_t take = len < room ? len : room;
		if (take > want)
			take = want;
		memcpy(h->buf + h->buf_len, p, take);
		h->buf_len += take;
		p += take;
		len -= take;
	}
}

void mtpc_hasher_finish(mtpc_hasher *h, char hex[MTPC_HASH_HEX_LEN + 1])
{
	struct output o = chunk_output(h);
	for (int i = h->depth; i > 0; i--) {
		uint32_t cv[8];
		output_cv(&o, cv);
		o = parent_output(h->stack[i - 1], cv);
	}
	uint32_t out[16];
	compress(o.cv, o.block, 0, o.block_len, o.flags | ROOT, out);
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < MTPC_HASH_HEX_LEN / 2; i++) {
		unsigned byte = (out[i / 4] >> (8 * (i % 4))) & 0xff;
		hex[2 * i] = digits[byte >> 4];
		hex[2 * i + 1] = digits[byte & 15];
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
