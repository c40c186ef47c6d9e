/* roundtrip.c: the program of bench/compile_bench.py's zstd workload. It
 * compresses the first 1 MiB of the file it is given (the amalgamated zstd.c
 * itself: real C text, the same bytes on every machine) at several levels,
 * with the one-shot and the streaming API, decompresses each result and
 * checks it; it prints the compressed sizes and a checksum of what it got
 * back, so that two builds of zstd that behave alike print the same lines.
 * Deterministic: one thread, no time, no randomness. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zstd.h"

#define LIMIT (1u << 20)

static unsigned long fnv(const unsigned char *p, size_t n)
{
	unsigned long h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h & 0xffffffffu;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fputs("roundtrip: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

/* One level through the one-shot API; returns 0 when the round trip holds. */
static int one_shot(const unsigned char *in, size_t n, int level)
{
	size_t cap = ZSTD_compressBound(n);
	unsigned char *c = xmalloc(cap), *d = xmalloc(n);
	size_t cn = ZSTD_compress(c, cap, in, n, level);
	if (ZSTD_isError(cn)) {
		fprintf(stderr, "roundtrip: level %d: %s\n", level, ZSTD_getErrorName(cn));
		return 1;
	}
	size_t dn = ZSTD_decompress(d, n, c, cn);
	int ok = !ZSTD_isError(dn) && dn == n && !memcmp(d, in, n);
	printf("level %d: %zu -> %zu bytes, back %s %08lx\n", level, n, cn, ok ? "ok" : "WRONG",
	       fnv(d, ZSTD_isError(dn) ? 0 : dn));
	free(c);
	free(d);
	return !ok;
}

/* The streaming API, in 4 KiB pieces, with a checksum frame; 0 when it holds. */
static int streamed(const unsigned char *in, size_t n, int level)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	size_t cap = ZSTD_compressBound(n) + 1024, cn = 0, dn = 0;
	unsigned char *c = xmalloc(cap), *d = xmalloc(n);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	for (size_t off = 0; off < n;) {
		size_t piece = n - off < 4096 ? n - off : 4096;
		ZSTD_inBuffer ib = {in + off, piece, 0};
		ZSTD_EndDirective end = off + piece == n ? ZSTD_e_end : ZSTD_e_continue;
		size_t left;
		do {
			ZSTD_outBuffer ob = {c + cn, cap - cn, 0};
			left = ZSTD_compressStream2(cc, &ob, &ib, end);
			cn += ob.pos;
			if (ZSTD_isError(left))
				goto fail;
		} while (end == ZSTD_e_end ? left != 0 : ib.pos < ib.size);
		off += piece;
	}
	ZSTD_inBuffer ib = {c, cn, 0};
	while (ib.pos < ib.size) {
		ZSTD_outBuffer ob = {d + dn, n - dn, 0};
		size_t r = ZSTD_decompressStream(dc, &ob, &ib);
		dn += ob.pos;
		if (ZSTD_isError(r))
			goto fail;
		if (r == 0)
			break;
	}
	int ok = dn == n && !memcmp(d, in, n);
	printf("stream level %d: %zu -> %zu bytes, back %s %08lx\n", level, n, cn, ok ? "ok" : "WRONG",
	       fnv(d, dn));
	free(c);
	free(d);
	ZSTD_freeCCtx(cc);
	ZSTD_freeDCtx(dc);
	return !ok;
fail:
	fprintf(stderr, "roundtrip: stream level %d failed\n", level);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: roundtrip FILE\n", stderr);
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	unsigned char *in = xmalloc(LIMIT);
	size_t n = fread(in, 1, LIMIT, f);
	fclose(f);
	int bad = 0;
	static const int levels[] = {1, 3, 6, 12, -5};
	for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
		bad |= one_shot(in, n, levels[i]);
	bad |= streamed(in, n, 4);
	free(in);
	return bad;
}
