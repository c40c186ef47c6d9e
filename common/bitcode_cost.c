/* bitcode_cost.c: see bitcode_cost.h. The bitstream format is LLVM's
 * (docs: "LLVM Bitcode File Format"): abbreviation ids of a width each block
 * sets, blocks that say their length in 32-bit words (so any block but the
 * ones read here is skipped whole), records either unabbreviated (VBR6
 * fields) or laid out by an abbreviation defined in the block or, for its
 * block id, in the BLOCKINFO block. */
#define _POSIX_C_SOURCE 200809L
#include "bitcode_cost.h"
#include "util.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Block ids and record codes read here (llvm/Bitcode/LLVMBitCodes.h). */
enum {
	BLOCKINFO_BLOCK = 0, MODULE_BLOCK = 8, SUMMARY_BLOCK = 20, FULL_LTO_SUMMARY_BLOCK = 24,
	BLOCKINFO_SETBID = 1,
	FS_PERMODULE = 1, FS_PERMODULE_PROFILE = 2, FS_PERMODULE_RELBF = 19,
};

/* One operand of an abbreviation. */
enum op_kind { OP_LITERAL, OP_FIXED, OP_VBR, OP_ARRAY, OP_CHAR6, OP_BLOB };
struct op {
	enum op_kind kind;
	uint64_t value; /* the literal, or the width */
};

struct abbrev {
	struct op *ops;
	size_t n;
};

/* Abbreviations: a block's own, after those BLOCKINFO gives its id. */
struct abbrevs {
	struct abbrev *a;
	size_t n, cap;
};

/* The reader: bit position pos in data[0..len). */
struct bits {
	const unsigned char *data;
	size_t len;   /* bytes */
	uint64_t pos; /* bits */
	int bad;
};

static uint64_t read_fixed(struct bits *b, unsigned width)
{
	if (width > 64 || b->pos + width > (uint64_t)b->len * 8) {
		b->bad = 1;
		b->pos = (uint64_t)b->len * 8;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < width;) {
		uint64_t byte = b->pos >> 3;
		unsigned off = (unsigned)(b->pos & 7), take = 8 - off;
		if (take > width - i)
			take = width - i;
		v |= (uint64_t)((b->data[byte] >> off) & ((1u << take) - 1)) << i;
		i += take;
		b->pos += take;
	}
	return v;
}

static uint64_t read_vbr(struct bits *b, unsigned width)
{
	if (width < 2 || width > 32) {
		b->bad = 1;
		return 0;
	}
	uint64_t v = 0, hi = 1ull << (width - 1);
	for (unsigned shift = 0; !b->bad; shift += width - 1) {
		uint64_t piece = read_fixed(b, width);
		if (shift < 64)
			v |= (piece & (hi - 1)) << shift;
		if (!(piece & hi))
			return v;
		if (shift > 70)
			b->bad = 1;
	}
	return 0;
}

static void align32(struct bits *b)
{
	b->pos = (b->pos + 31) & ~(uint64_t)31;
	if (b->pos > (uint64_t)b->len * 8)
		b->bad = 1;
}

static void abbrevs_add(struct abbrevs *t, struct abbrev a)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->a = xrealloc(t->a, t->cap * sizeof *t->a);
	}
	t->a[t->n++] = a;
}

static void abbrevs_free(struct abbrevs *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->a[i].ops);
	free(t->a);
	memset(t, 0, sizeof *t);
}

static void abbrevs_copy(struct abbrevs *to, const struct abbrevs *from)
{
	for (size_t i = 0; i < from->n; i++) {
		struct abbrev a = {xmalloc((from->a[i].n + 1) * sizeof *a.ops), from->a[i].n};
		memcpy(a.ops, from->a[i].ops, from->a[i].n * sizeof *a.ops);
		abbrevs_add(to, a);
	}
}

/* DEFINE_ABBREV's body into t. */
static void define_abbrev(struct bits *b, struct abbrevs *t)
{
	uint64_t n = read_vbr(b, 5);
	if (n > 4096) {
		b->bad = 1;
		return;
	}
	struct abbrev a = {xmalloc((size_t)(n + 1) * sizeof *a.ops), 0};
	for (uint64_t i = 0; i < n && !b->bad; i++) {
		struct op o = {OP_LITERAL, 0};
		if (read_fixed(b, 1)) {
			o.value = read_vbr(b, 8);
		} else {
			uint64_t e = read_fixed(b, 3);
			if (e == 1 || e == 2) {
				o.kind = e == 1 ? OP_FIXED : OP_VBR;
				o.value = read_vbr(b, 5);
				if (o.value > 64 || (o.kind == OP_VBR && o.value > 32))
					b->bad = 1;
			} else if (e == 3 || e == 4 || e == 5) {
				o.kind = e == 3 ? OP_ARRAY : e == 4 ? OP_CHAR6 : OP_BLOB;
			} else {
				b->bad = 1;
			}
		}
		a.ops[a.n++] = o;
	}
	abbrevs_add(t, a);
}

/* One scalar operand's value. */
static uint64_t read_scalar(struct bits *b, const struct op *o)
{
	switch (o->kind) {
	case OP_LITERAL: return o->value;
	case OP_FIXED: return o->value ? read_fixed(b, (unsigned)o->value) : 0;
	case OP_VBR: return o->value ? read_vbr(b, (unsigned)o->value) : 0;
	case OP_CHAR6: return read_fixed(b, 6);
	default: b->bad = 1; return 0;
	}
}

/* A record (abbreviation id id of table t): its code and its first
 * fields (up to nf of them, into f; *nfields says how many it has). */
static uint64_t read_record(struct bits *b, uint64_t id, const struct abbrevs *t, uint64_t *f, size_t nf,
			    size_t *nfields)
{
	size_t k = 0;
#define PUT(v) do { uint64_t v_ = (v); if (k < nf) f[k] = v_; k++; } while (0)
	uint64_t code = 0;
	if (id == 3) { /* UNABBREV_RECORD */
		code = read_vbr(b, 6);
		uint64_t n = read_vbr(b, 6);
		for (uint64_t i = 0; i < n && !b->bad; i++)
			PUT(read_vbr(b, 6));
		*nfields = k;
		return code;
	}
	if (id < 4 || id - 4 >= t->n) {
		b->bad = 1;
		return 0;
	}
	const struct abbrev *a = &t->a[id - 4];
	int first = 1;
	for (size_t i = 0; i < a->n && !b->bad; i++) {
		const struct op *o = &a->ops[i];
		if (o->kind == OP_ARRAY) {
			if (i + 2 != a->n) { /* the element's operand follows, last */
				b->bad = 1;
				break;
			}
			uint64_t n = read_vbr(b, 6);
			for (uint64_t j = 0; j < n && !b->bad; j++) {
				uint64_t v = read_scalar(b, &a->ops[i + 1]);
				if (first)
					code = v, first = 0;
				else
					PUT(v);
			}
			break;
		}
		if (o->kind == OP_BLOB) {
			uint64_t n = read_vbr(b, 6);
			align32(b);
			if (b->pos + n * 8 > (uint64_t)b->len * 8)
				b->bad = 1;
			b->pos += n * 8;
			align32(b);
			if (first)
				b->bad = 1; /* a blob cannot be the code */
			else
				PUT(0);
			continue;
		}
		uint64_t v = read_scalar(b, o);
		if (first)
			code = v, first = 0;
		else
			PUT(v);
	}
#undef PUT
	*nfields = k;
	return code;
}

/* What the walk carries: BLOCKINFO's abbreviations per block id, and the
 * sums. */
struct walk {
	struct abbrevs info[32];
	long long insts, funcs;
	int modules;
};

/* The block whose ENTER_SUBBLOCK was just read (its id, its abbreviation
 * width), to its end: summaries are counted, modules entered, BLOCKINFO
 * read, everything else skipped by its length. */
static void read_block(struct bits *b, struct walk *w, uint64_t blockid, int depth)
{
	unsigned width = (unsigned)read_vbr(b, 4);
	align32(b);
	uint64_t words = read_fixed(b, 32);
	uint64_t end = b->pos + words * 32;
	if (b->bad || width < 2 || width > 32 || end > (uint64_t)b->len * 8 || depth > 8) {
		b->bad = 1;
		return;
	}
	int wanted = blockid == MODULE_BLOCK || blockid == SUMMARY_BLOCK || blockid == FULL_LTO_SUMMARY_BLOCK ||
		     blockid == BLOCKINFO_BLOCK;
	if (!wanted) {
		b->pos = end;
		return;
	}
	struct abbrevs t = {0};
	if (blockid < 32)
		abbrevs_copy(&t, &w->info[blockid]);
	int summary = blockid == SUMMARY_BLOCK || blockid == FULL_LTO_SUMMARY_BLOCK;
	w->modules += blockid == MODULE_BLOCK;
	long long setbid = -1; /* BLOCKINFO: the block id its abbreviations are for */
	while (!b->bad && b->pos < end) {
		uint64_t id = read_fixed(b, width);
		if (id == 0) { /* END_BLOCK */
			align32(b);
			break;
		}
		if (id == 1) { /* ENTER_SUBBLOCK */
			uint64_t sub = read_vbr(b, 8);
			read_block(b, w, sub, depth + 1);
			continue;
		}
		if (id == 2) { /* DEFINE_ABBREV */
			if (blockid == BLOCKINFO_BLOCK) {
				if (setbid < 0 || setbid >= 32) {
					struct abbrevs skip = {0};
					define_abbrev(b, &skip); /* for a block read nowhere here */
					abbrevs_free(&skip);
				} else {
					define_abbrev(b, &w->info[setbid]);
				}
			} else {
				define_abbrev(b, &t);
			}
			continue;
		}
		uint64_t f[4];
		size_t nf;
		uint64_t code = read_record(b, id, &t, f, 4, &nf);
		if (blockid == BLOCKINFO_BLOCK && code == BLOCKINFO_SETBID && nf >= 1)
			setbid = (long long)f[0];
		else if (summary && (code == FS_PERMODULE || code == FS_PERMODULE_PROFILE || code == FS_PERMODULE_RELBF) &&
			 nf >= 3) {
			w->insts += (long long)f[2];
			w->funcs++;
		}
	}
	abbrevs_free(&t);
	if (b->pos > end)
		b->bad = 1;
	b->pos = end;
}

int mtpc_bitcode_cost(const void *data, size_t len, long long *insts, long long *funcs)
{
	const unsigned char *p = data;
	*insts = *funcs = 0;
	/* The wrapper header: magic, version, offset, size, CPU type. */
	if (len >= 20 && p[0] == 0xDE && p[1] == 0xC0 && p[2] == 0x17 && p[3] == 0x0B) {
		uint32_t off = (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
		uint32_t size = (uint32_t)p[12] | (uint32_t)p[13] << 8 | (uint32_t)p[14] << 16 | (uint32_t)p[15] << 24;
		if (off > len || size > len - off)
			return -1;
		p += off;
		len = size;
	}
	if (len < 4 || p[0] != 'B' || p[1] != 'C' || p[2] != 0xC0 || p[3] != 0xDE)
		return -1;
	struct bits b = {p, len - len % 4, 32, 0};
	struct walk w;
	memset(&w, 0, sizeof w);
	while (!b.bad && b.pos + 32 <= (uint64_t)b.len * 8) {
		uint64_t id = read_fixed(&b, 2); /* top level: abbreviation width 2 */
		if (id != 1) {
			/* only blocks at the top; zeros pad a file to a word */
			if (id == 0 && read_fixed(&b, 30) == 0)
				continue;
			b.bad = 1;
			break;
		}
		read_block(&b, &w, read_vbr(&b, 8), 0);
	}
	for (int i = 0; i < 32; i++)
		abbrevs_free(&w.info[i]);
	if (b.bad)
		return -1;
	*insts = w.insts;
	*funcs = w.funcs;
	return w.modules ? 0 : 1;
}

int mtpc_bitcode_file_cost(const char *path, long long *insts, long long *funcs)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	int r = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			r = mtpc_bitcode_cost(p, (size_t)st.st_size, insts, funcs);
			munmap(p, (size_t)st.st_size);
		}
	}
	close(fd);
	return r;
}
