/* dwo_merge.c: the .dwo files of a plain compile's partitions merged into
 * the one .dwo that the merged object's skeleton units all name.
 *
 * Why one file, and why this layout: the build (and ccache) know one .dwo
 * per object, so the partitions' split units must end up in it, one unit
 * per partition. A DWARF 5 split unit has no base attributes: a reader
 * takes its string offsets, location lists and range lists from the start
 * of the file's sections (gdb 13 reads even a package's unit so). So the
 * merged file has ONE string offsets table, ONE location list table and
 * ONE range list table, shared by every unit, and each unit's indexes into
 * them are renumbered: its strings become indexes of the shared table
 * (written as DW_FORM_strx, a LEB128, since an index may outgrow the
 * fixed-size form the compiler chose), and its location and range list
 * indexes move by the entries of the files before it. The DIEs then change
 * size, so each unit is laid out anew: references inside it (the ref forms,
 * and the DIE offsets DWARF expressions carry, in the DIEs and in the
 * location lists) are mapped to the new offsets. The units share ONE
 * abbreviation table too (each distinct abbreviation once, strx1..strx4
 * made strx, the DIEs' codes renumbered): a package made of the file
 * (llvm-dwp) gives every unit the file's whole tables as its contributions,
 * where a unit's abbreviations must start at offset 0. The line tables of
 * type units are concatenated (DW_AT_stmt_list moves with them). A type unit
 * whose signature an earlier file has is dropped, as llvm-dwp does.
 *
 * Anything else (DWARF before 5, 64-bit DWARF, compressed sections, a
 * macro section, a reference across units, an expression operation this
 * file does not know) is refused with the reason: the caller then compiles
 * the module unsplit. Same inputs, same output bytes. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "debugfix_int.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sections of a .dwo this file merges, in the output's order. */
enum { S_ABBREV, S_INFO, S_LINE, S_LOC, S_RNG, S_STROFF, S_STR, S_N };
static const char *const sec_names[S_N] = {
	".debug_abbrev.dwo", ".debug_info.dwo", ".debug_line.dwo", ".debug_loclists.dwo",
	".debug_rnglists.dwo", ".debug_str_offsets.dwo", ".debug_str.dwo",
};

/* The DWARF constants only this file uses (DWARF 5, section 7). */
enum {
	DW_AT_stmt_list = 0x10, DW_AT_macro_info = 0x43, DW_AT_macros = 0x79, DW_AT_GNU_macros = 0x2119,
	DW_AT_addr_base = 0x73, DW_AT_rnglists_base = 0x74, DW_AT_loclists_base = 0x8c,
};

/* Where each DIE of one unit went: old[i] (unit-relative, increasing) is
 * now at new[i]. */
struct die_map {
	uint64_t *old, *new;
	size_t n, cap;
};

static void map_add(struct die_map *m, uint64_t old, uint64_t new)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->old = xrealloc(m->old, m->cap * sizeof *m->old);
		m->new = xrealloc(m->new, m->cap * sizeof *m->new);
	}
	m->old[m->n] = old;
	m->new[m->n++] = new;
}

/* The new offset of the DIE at old, or -1 if no DIE starts there. */
static long long map_to(const struct die_map *m, uint64_t old)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->old[mid] < old)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->old[lo] == old ? (long long)m->new[lo] : -1;
}

static void map_free(struct die_map *m)
{
	free(m->old);
	free(m->new);
	memset(m, 0, sizeof *m);
}

static uint64_t bytes_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* Distinct byte strings, each once, numbered from 1 in the order first met
 * (so the output is deterministic): the shared string table (each string
 * with its NUL: data is .debug_str.dwo) and the shared abbreviation table
 * (each abbreviation's bytes after its code: tag, children, specifications). */
struct blobs {
	struct buf data;
	size_t *off, *len;
	size_t n, cap;
	uint32_t *slot;     /* open addressing: index + 1, 0 empty */
	size_t nslot;
};

static void blobs_grow(struct blobs *b)
{
	free(b->slot);
	b->nslot = b->nslot ? 2 * b->nslot : 256;
	b->slot = xcalloc(b->nslot, sizeof *b->slot);
	for (size_t i = 0; i < b->n; i++) {
		size_t k = bytes_hash(b->data.s + b->off[i], b->len[i]) & (b->nslot - 1);
		while (b->slot[k])
			k = (k + 1) & (b->nslot - 1);
		b->slot[k] = (uint32_t)i + 1;
	}
}

/* The code (index + 1) of blob s[0..len), added if new. */
static uint32_t blobs_code(struct blobs *b, const char *s, size_t len)
{
	if (2 * (b->n + 1) > b->nslot)
		blobs_grow(b);
	size_t k = bytes_hash(s, len) & (b->nslot - 1);
	for (; b->slot[k]; k = (k + 1) & (b->nslot - 1)) {
		size_t i = b->slot[k] - 1;
		if (b->len[i] == len && !memcmp(b->data.s + b->off[i], s, len))
			return (uint32_t)i + 1;
	}
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 256;
		b->off = xrealloc(b->off, b->cap * sizeof *b->off);
		b->len = xrealloc(b->len, b->cap * sizeof *b->len);
	}
	b->off[b->n] = b->data.len;
	b->len[b->n] = len;
	buf_addn(&b->data, s, len);
	b->slot[k] = (uint32_t)b->n + 1;
	return (uint32_t)++b->n;
}

static void blobs_free(struct blobs *b)
{
	buf_free(&b->data);
	free(b->off);
	free(b->len);
	free(b->slot);
}

/* An abbreviation of an input file (the table at table, its code) and its
 * code in the shared table. */
struct code_map {
	uint64_t table, code;
	uint32_t to;
};

static int cmp_code_map(const void *a, const void *b)
{
	const struct code_map *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code;
}

/* One input file. */
struct dwo_in {
	const char *path;
	char *data;
	size_t len;
	struct elf e;
	size_t sec[S_N];          /* section indexes, 0: absent */
	uint32_t *str_to;         /* shared index of each entry of its table */
	uint64_t nstr;
	uint64_t nloc, nrng;      /* offset entries of its list tables */
	uint64_t loc_first, rng_first; /* shared index of its first entry */
	uint64_t loc_from, rng_from;   /* where its lists start in the shared table (after the offsets) */
	uint64_t line_at;         /* where its line tables start in the output */
	struct code_map *codes;   /* its abbreviations' shared codes, sorted */
	size_t ncodes;
	struct die_map cu;        /* its compile unit's DIEs (location lists refer to them) */
	int has_cu;
};

/* The merge's state: the inputs and the output sections. */
struct merge {
	struct dwo_in *in;
	size_t n;
	struct blobs strings;     /* with their NULs */
	struct blobs abbrevs;
	struct buf out[S_N];
	uint64_t *sigs;           /* type unit signatures kept (sig_kept) */
	unsigned char *sig_used;
	size_t nsigs, capsigs;
	uint64_t nloc, nrng;      /* entries of the shared list tables */
	const char *why;          /* why not (a static string) */
	const char *why_file;
};

static int fail(struct merge *m, const struct dwo_in *f, const char *why)
{
	if (!m->why) {
		m->why = why;
		m->why_file = f ? f->path : NULL;
	}
	return -1;
}

static const unsigned char *sec_data(const struct dwo_in *f, int s)
{
	return f->sec[s] ? f->e.data + f->e.sh[f->sec[s]].sh_offset : NULL;
}

static uint64_t sec_size(const struct dwo_in *f, int s)
{
	return f->sec[s] ? f->e.sh[f->sec[s]].sh_size : 0;
}

static void put_le(struct buf *b, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		buf_addc(b, (char)(v >> (8 * i)));
}

static void put_uleb(struct buf *b, uint64_t v)
{
	do {
		unsigned char byte = v & 0x7f;
		v >>= 7;
		buf_addc(b, (char)(v ? byte | 0x80 : byte));
	} while (v);
}

static int uleb_size(uint64_t v)
{
	int n = 1;
	while (v >>= 7)
		n++;
	return n;
}

/* ---- reading one input ------------------------------------------------------ */

/* The sections of f, checked: only those this file merges (and the ELF
 * file's own), none compressed, no relocations. */
static int open_input(struct merge *m, struct dwo_in *f)
{
	if (elf_open(&f->e, (unsigned char *)f->data, f->len) < 0)
		return fail(m, f, "it is not a 64-bit little-endian ELF file");
	for (size_t i = 1; i < f->e.nsh; i++) {
		const Elf64_Shdr *sh = &f->e.sh[i];
		const char *name = elf_section_name(&f->e, i);
		int s = 0;
		while (s < S_N && strcmp(name, sec_names[s]))
			s++;
		if (s == S_N) {
			if (sh->sh_type == SHT_RELA || sh->sh_type == SHT_REL)
				return fail(m, f, "it has relocations");
			if (!strncmp(name, ".debug", 6) || !strncmp(name, ".zdebug", 7))
				return fail(m, f, "it has a debug section the merge does not combine (macros?)");
			continue;
		}
		if (f->sec[s])
			return fail(m, f, "it has a section twice");
		if (sh->sh_flags & SHF_COMPRESSED)
			return fail(m, f, "its sections are compressed");
		if (sh->sh_type != SHT_PROGBITS || sh->sh_offset > f->len || sh->sh_size > f->len - sh->sh_offset)
			return fail(m, f, "a section lies outside the file");
		f->sec[s] = i;
	}
	if (!f->sec[S_INFO] || !f->sec[S_ABBREV])
		return fail(m, f, "it has no split units");
	/* the version of its first unit, before its tables are read */
	const unsigned char *p = sec_data(f, S_INFO);
	struct cur c = {p, p + sec_size(f, S_INFO), 0};
	int offsz;
	if (dw_enter_unit(&c, &offsz) < 0 || offsz != 4 || rd(&c, 2) != 5)
		return fail(m, f, offsz == 8 ? "it is 64-bit DWARF" : "it is not DWARF 5");
	return 0;
}

/* Its string offsets table, each entry's string into the shared table. */
static int read_strings(struct merge *m, struct dwo_in *f)
{
	uint64_t size = sec_size(f, S_STROFF);
	if (!size)
		return 0;
	const unsigned char *p = sec_data(f, S_STROFF), *str = sec_data(f, S_STR);
	uint64_t strsize = sec_size(f, S_STR);
	struct cur c = {p, p + size, 0};
	int offsz;
	if (dw_enter_unit(&c, &offsz) < 0 || offsz != 4 || c.end != p + size || rd(&c, 2) != 5 ||
	    (size - 8) % 4)
		return fail(m, f, "its string offsets table is not one DWARF 5 table");
	rd(&c, 2); /* padding */
	f->nstr = (size - 8) / 4;
	f->str_to = xmalloc((f->nstr + 1) * sizeof *f->str_to);
	for (uint64_t i = 0; i < f->nstr; i++) {
		uint64_t off = rd(&c, 4);
		if (off >= strsize)
			return fail(m, f, "a string offset lies outside its string section");
		const char *s = (const char *)str + off;
		size_t len = strnlen(s, strsize - off);
		if (off + len >= strsize)
			return fail(m, f, "a string offset lies outside its string section");
		f->str_to[i] = blobs_code(&m->strings, s, len + 1) - 1;
	}
	return 0;
}

/* The header of its location or range list table (s): *count offset
 * entries; lists follow at 12 + 4 * count. */
static int list_header(struct merge *m, struct dwo_in *f, int s, uint64_t *count)
{
	*count = 0;
	uint64_t size = sec_size(f, s);
	if (!size)
		return 0;
	const unsigned char *p = sec_data(f, s);
	struct cur c = {p, p + size, 0};
	int offsz;
	if (dw_enter_unit(&c, &offsz) < 0 || offsz != 4 || c.end != p + size)
		return fail(m, f, "a list table is not one 32-bit DWARF table");
	int version = (int)rd(&c, 2), addrsz = (int)rd(&c, 1), segsz = (int)rd(&c, 1);
	*count = rd(&c, 4);
	if (c.bad || version != 5 || addrsz != 8 || segsz != 0 || *count > (size - 12) / 4)
		return fail(m, f, "a list table's header is not DWARF 5's");
	/* each offset (from the offsets' start) must name a place among the lists */
	for (uint64_t i = 0; i < *count; i++) {
		uint64_t v = rd(&c, 4);
		if (v < 4 * *count || v >= size - 12)
			return fail(m, f, "a list table's offset lies outside its lists");
	}
	return 0;
}

/* ---- DWARF expressions --------------------------------------------------------- */

/* Map the DIE offsets the expression p[0..len) carries (base types of
 * DW_OP_convert and the like, DW_OP_call2/4) through map, in place: each
 * must fit the bytes it had (LLVM pads these LEB128s to 4 bytes). */
static int fix_expr(unsigned char *p, size_t len, const struct die_map *map)
{
	struct cur c = {p, p + len, 0};
	while (c.p < c.end && !c.bad) {
		unsigned op = *c.p++;
		unsigned char *at;
		uint64_t v;
		long long to;
		if ((op >= 0x30 && op <= 0x6f) || (op >= 0x12 && op <= 0x14) || (op >= 0x16 && op <= 0x22) ||
		    (op >= 0x24 && op <= 0x27) || (op >= 0x29 && op <= 0x2e) || op == 0x06 || op == 0x96 ||
		    op == 0x97 || op == 0x9b || op == 0x9c || op == 0x9f || op == 0xe0 || op == 0xf0)
			continue; /* no operands (lit0..31 and reg0..31 too) */
		if (op >= 0x70 && op <= 0x8f) { /* breg0..31 */
			sleb(&c);
			continue;
		}
		switch (op) {
		case 0x03: skip(&c, 8); break;                         /* addr */
		case 0x08: case 0x09: case 0x15: case 0x94: case 0x95: skip(&c, 1); break;
		case 0x0a: case 0x0b: case 0x28: case 0x2f: skip(&c, 2); break;
		case 0x0c: case 0x0d: skip(&c, 4); break;
		case 0x0e: case 0x0f: skip(&c, 8); break;
		case 0x10: case 0x23: case 0x90: case 0x93: case 0xa1: case 0xa2: case 0xfb: case 0xfc:
			uleb(&c);
			break;
		case 0x11: case 0x91: sleb(&c); break;
		case 0x92: uleb(&c); sleb(&c); break;                  /* bregx */
		case 0x9d: uleb(&c); uleb(&c); break;                  /* bit_piece */
		case 0x9e: skip(&c, uleb(&c)); break;                  /* implicit_value */
		case 0x98: case 0x99: case 0xfa: {                     /* call2, call4, GNU_parameter_ref */
			int n = op == 0x98 ? 2 : 4;
			at = (unsigned char *)c.p;
			v = rd(&c, n);
			if (c.bad || (to = map_to(map, v)) < 0 || (n == 2 && to > 0xffff))
				return -1;
			for (int i = 0; i < n; i++)
				at[i] = (unsigned char)((uint64_t)to >> (8 * i));
			break;
		}
		case 0xa3: case 0xf3: {                                /* entry_value */
			uint64_t n = uleb(&c);
			if (c.bad || n > (uint64_t)(c.end - c.p) || fix_expr((unsigned char *)c.p, n, map) < 0)
				return -1;
			c.p += n;
			break;
		}
		case 0xa4: case 0xf4: case 0xa5: case 0xf5: case 0xa6: case 0xf6: case 0xa7: case 0xa8: case 0xf7:
		case 0xa9: case 0xf9:
			/* The base type's DIE offset, after a register (regval_type)
			 * or a size byte (deref_type, xderef_type); const_type has
			 * its size and value after it. */
			if (op == 0xa5 || op == 0xf5)
				uleb(&c);
			if (op == 0xa6 || op == 0xf6 || op == 0xa7)
				skip(&c, 1);
			at = (unsigned char *)c.p;
			v = uleb(&c);
			if (c.bad)
				return -1;
			/* 0: the generic type (convert, reinterpret) */
			if (v || !(op == 0xa8 || op == 0xf7 || op == 0xa9 || op == 0xf9)) {
				if ((to = map_to(map, v)) < 0 || dw_put_uleb_fixed(at, (int)(c.p - at), (uint64_t)to) < 0)
					return -1;
			}
			if (op == 0xa4 || op == 0xf4)
				skip(&c, rd(&c, 1));
			break;
		default:
			/* call_ref, implicit_pointer and the GNU ones name a place in
			 * the section (not the unit); the rest are not DWARF's. */
			return -1;
		}
	}
	return c.bad ? -1 : 0;
}

/* ---- the units ------------------------------------------------------------------ */

/* A unit's header, read. */
struct unit {
	uint64_t start, end;  /* in the input section: the length field .. the end */
	uint64_t dies;        /* where its first DIE starts (unit-relative) */
	int type;             /* DW_UT_* */
	uint64_t abbrev, sig, type_off;
};

static int read_unit(struct merge *m, struct dwo_in *f, uint64_t at, struct unit *u)
{
	const unsigned char *sec = sec_data(f, S_INFO);
	uint64_t size = sec_size(f, S_INFO);
	struct cur c = {sec + at, sec + size, 0};
	int offsz;
	if (dw_enter_unit(&c, &offsz) < 0)
		return fail(m, f, "a unit's length is outside its section");
	if (offsz != 4)
		return fail(m, f, "it is 64-bit DWARF");
	u->start = at;
	u->end = (uint64_t)(c.end - sec);
	if (rd(&c, 2) != 5)
		return fail(m, f, "it is not DWARF 5");
	u->type = (int)rd(&c, 1);
	int addrsz = (int)rd(&c, 1);
	u->abbrev = rd(&c, 4);
	if (u->type == DW_UT_split_compile) {
		u->sig = rd(&c, 8);
	} else if (u->type == DW_UT_split_type) {
		u->sig = rd(&c, 8);
		u->type_off = rd(&c, 4);
	} else {
		return fail(m, f, "a unit is not a split unit");
	}
	if (c.bad || addrsz != 8)
		return fail(m, f, "a unit's header is cut short");
	u->dies = (uint64_t)(c.p - (sec + at));
	return 0;
}

/* One attribute of a DIE: its value's new size (emit == NULL), or its new
 * bytes appended to emit with its references mapped through map. c is at
 * the value and is moved past it. */
static int attr_value(struct merge *m, struct dwo_in *f, struct cur *c, const uint64_t spec[3],
		      const struct die_map *map, struct buf *emit, uint64_t *size)
{
	const unsigned char *from = c->p;
	uint64_t form = spec[1], v;
	switch (form) {
	case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2: case DW_FORM_strx3: case DW_FORM_strx4:
		v = form == DW_FORM_strx ? uleb(c) : rd(c, form == DW_FORM_strx1 ? 1 : form == DW_FORM_strx2 ? 2 : form == DW_FORM_strx3 ? 3 : 4);
		if (c->bad || v >= f->nstr)
			return fail(m, f, "a string index is outside its string offsets table");
		v = f->str_to[v];
		*size += (uint64_t)uleb_size(v);
		if (emit)
			put_uleb(emit, v);
		return 0;
	case DW_FORM_loclistx: case DW_FORM_rnglistx:
		v = uleb(c);
		if (c->bad || v >= (form == DW_FORM_loclistx ? f->nloc : f->nrng))
			return fail(m, f, "a list index is outside its list table");
		v += form == DW_FORM_loclistx ? f->loc_first : f->rng_first;
		*size += (uint64_t)uleb_size(v);
		if (emit)
			put_uleb(emit, v);
		return 0;
	case DW_FORM_ref1: case DW_FORM_ref2: case DW_FORM_ref4: case DW_FORM_ref8: {
		int n = form == DW_FORM_ref1 ? 1 : form == DW_FORM_ref2 ? 2 : form == DW_FORM_ref4 ? 4 : 8;
		v = rd(c, n);
		*size += (uint64_t)n;
		if (!emit)
			return c->bad ? -1 : 0;
		long long to = map_to(map, v);
		if (to < 0 || (n < 8 && (uint64_t)to >> (8 * n)))
			return fail(m, f, "a reference does not point at a DIE of its unit");
		put_le(emit, (uint64_t)to, n);
		return 0;
	}
	case DW_FORM_sec_offset:
		v = rd(c, 4);
		*size += 4;
		if (spec[0] != DW_AT_stmt_list)
			return fail(m, f, "an attribute points into another section (macros?)");
		if (emit) {
			if (v >= sec_size(f, S_LINE))
				return fail(m, f, "a line table offset is outside its section");
			put_le(emit, v + f->line_at, 4);
		}
		return 0;
	case DW_FORM_exprloc: {
		uint64_t n = uleb(c);
		if (c->bad || n > (uint64_t)(c->end - c->p))
			return fail(m, f, "an expression is cut short");
		c->p += n;
		*size += (uint64_t)(c->p - from);
		if (emit) {
			size_t at = emit->len + (size_t)(c->p - from) - (size_t)n;
			buf_addn(emit, (const char *)from, (size_t)(c->p - from));
			if (fix_expr((unsigned char *)emit->s + at, (size_t)n, map) < 0)
				return fail(m, f, "an expression has an operation the merge cannot move");
		}
		return 0;
	}
	case DW_FORM_ref_udata: case DW_FORM_ref_addr: case DW_FORM_indirect: case DW_FORM_strp:
	case DW_FORM_line_strp: case DW_FORM_strp_sup: case DW_FORM_GNU_str_index: case DW_FORM_GNU_strp_alt:
	case DW_FORM_GNU_ref_alt: case DW_FORM_ref_sup4: case DW_FORM_ref_sup8:
		return fail(m, f, "a unit uses a form the merge does not move");
	default:
		if (dw_skip_form(c, form, 4, 8, 5) < 0 || c->bad)
			return fail(m, f, "a unit uses a form the merge does not know");
		*size += (uint64_t)(c->p - from);
		if (emit)
			buf_addn(emit, (const char *)from, (size_t)(c->p - from));
		return 0;
	}
}

/* The DIEs of unit u, one pass: measure (emit == NULL: fills map with
 * every DIE's new offset, from new_start) or write (with map). */
static int unit_dies(struct merge *m, struct dwo_in *f, const struct unit *u, struct abbrevs *t,
		     struct die_map *map, uint64_t new_start, struct buf *emit)
{
	const unsigned char *sec = sec_data(f, S_INFO);
	struct cur c = {sec + u->start + u->dies, sec + u->end, 0};
	uint64_t size = new_start;
	while (c.p < c.end) {
		uint64_t old = (uint64_t)(c.p - (sec + u->start));
		uint64_t code = uleb(&c);
		if (c.bad)
			return fail(m, f, "a DIE is cut short");
		if (code == 0) {
			size++;
			if (emit)
				buf_addc(emit, 0);
			continue;
		}
		const struct abbrev *a = dw_find_abbrev(t, code);
		struct code_map key = {u->abbrev, code, 0};
		const struct code_map *to = bsearch(&key, f->codes, f->ncodes, sizeof key, cmp_code_map);
		if (!a || !to)
			return fail(m, f, "a DIE has an abbreviation its table lacks");
		if (!emit)
			map_add(map, old, size);
		size += (uint64_t)uleb_size(to->to);
		if (emit)
			put_uleb(emit, to->to);
		for (size_t k = 0; k < a->n; k++) {
			const uint64_t *spec = t->spec[a->first + k];
			if (spec[0] == DW_AT_addr_base || spec[0] == DW_AT_rnglists_base ||
			    spec[0] == DW_AT_loclists_base || spec[0] == DW_AT_str_offsets_base ||
			    spec[0] == DW_AT_macros || spec[0] == DW_AT_GNU_macros || spec[0] == DW_AT_macro_info)
				return fail(m, f, "a split unit has a base or macro attribute");
			if (attr_value(m, f, &c, spec, map, emit, &size) < 0)
				return -1;
		}
	}
	return 0;
}

/* Whether a type unit of signature sig was kept already; if not, it is
 * now (a set by open addressing: C++ partitions have thousands). */
static int sig_kept(struct merge *m, uint64_t sig)
{
	if (2 * (m->nsigs + 1) > m->capsigs) {
		uint64_t *old = m->sigs;
		size_t oldcap = m->capsigs;
		unsigned char *oldused = m->sig_used;
		m->capsigs = m->capsigs ? 2 * m->capsigs : 256;
		m->sigs = xcalloc(m->capsigs, sizeof *m->sigs);
		m->sig_used = xcalloc(m->capsigs, 1);
		m->nsigs = 0;
		for (size_t i = 0; i < oldcap; i++)
			if (oldused[i])
				sig_kept(m, old[i]);
		free(old);
		free(oldused);
	}
	size_t k = (size_t)((sig * 0x9e3779b97f4a7c15ull) >> 32) & (m->capsigs - 1);
	for (; m->sig_used[k]; k = (k + 1) & (m->capsigs - 1))
		if (m->sigs[k] == sig)
			return 1;
	m->sig_used[k] = 1;
	m->sigs[k] = sig;
	m->nsigs++;
	return 0;
}

/* Every unit of f into the output's .debug_info.dwo. */
static int merge_units(struct merge *m, struct dwo_in *f)
{
	struct abbrevs t = DW_ABBREVS_NONE;
	struct buf *out = &m->out[S_INFO];
	uint64_t size = sec_size(f, S_INFO);
	int r = 0;
	for (uint64_t at = 0; at < size && r == 0;) {
		struct unit u;
		if ((r = read_unit(m, f, at, &u)) < 0)
			break;
		at = u.end;
		if (u.type == DW_UT_split_compile && f->has_cu) {
			r = fail(m, f, "it has two compile units");
			break;
		}
		if (u.type == DW_UT_split_type && sig_kept(m, u.sig))
			continue; /* an earlier file's copy of the type */
		if (dw_load_abbrevs(&t, sec_data(f, S_ABBREV), sec_size(f, S_ABBREV), u.abbrev) < 0) {
			r = fail(m, f, "a unit's abbreviations cannot be read");
			break;
		}
		/* header: length, version, unit type, address size, abbreviations, id (, type offset) */
		uint64_t head = u.type == DW_UT_split_type ? 24 : 20;
		struct die_map map = {0};
		if ((r = unit_dies(m, f, &u, &t, &map, head, NULL)) < 0) {
			map_free(&map);
			break;
		}
		size_t len_at = out->len;
		put_le(out, 0, 4);
		put_le(out, 5, 2);
		put_le(out, (uint64_t)u.type, 1);
		put_le(out, 8, 1);
		put_le(out, 0, 4); /* the one shared table */
		put_le(out, u.sig, 8);
		if (u.type == DW_UT_split_type) {
			long long to = map_to(&map, u.type_off);
			if (to < 0) {
				map_free(&map);
				r = fail(m, f, "a type unit's type offset is not a DIE");
				break;
			}
			put_le(out, (uint64_t)to, 4);
		}
		if ((r = unit_dies(m, f, &u, &t, &map, head, out)) == 0) {
			uint64_t len = out->len - len_at - 4;
			if (len > 0xfffffff0u)
				r = fail(m, f, "the merged unit is too large");
			for (int i = 0; i < 4; i++)
				out->s[len_at + (size_t)i] = (char)(len >> (8 * i));
		}
		if (u.type == DW_UT_split_compile) {
			f->cu = map;
			f->has_cu = 1;
		} else {
			map_free(&map);
		}
	}
	dw_abbrevs_free(&t);
	return r;
}

/* ---- abbreviations, lists, line tables -------------------------------------------- */

/* f's abbreviations into the shared table (m->abbrevs), their string
 * forms made DW_FORM_strx (each form code is one byte either way), and
 * f->codes saying which shared code each of them got. */
static int merge_abbrevs(struct merge *m, struct dwo_in *f)
{
	const unsigned char *p = sec_data(f, S_ABBREV);
	uint64_t size = sec_size(f, S_ABBREV), table = 0;
	struct cur c = {p, p + size, 0};
	struct buf blob = {0};
	size_t cap = 0;
	while (c.p < c.end && !c.bad) {
		uint64_t code = uleb(&c);
		if (code == 0) { /* the end of one table; the next starts after it */
			table = (uint64_t)(c.p - p);
			continue;
		}
		const unsigned char *from = c.p;
		uleb(&c);    /* tag */
		skip(&c, 1); /* children */
		for (;;) {
			uint64_t attr = uleb(&c), form = uleb(&c);
			if (c.bad || (!attr && !form))
				break;
			if (form == DW_FORM_implicit_const)
				sleb(&c);
		}
		if (c.bad)
			break;
		blob.len = 0;
		buf_addn(&blob, (const char *)from, (size_t)(c.p - from));
		/* the same walk over the copy, to change the string forms */
		struct cur w = {(const unsigned char *)blob.s, (const unsigned char *)blob.s + blob.len, 0};
		uleb(&w);
		skip(&w, 1);
		for (;;) {
			uint64_t attr = uleb(&w);
			unsigned char *form_at = (unsigned char *)w.p;
			uint64_t form = uleb(&w);
			if (!attr && !form)
				break;
			if (form >= DW_FORM_strx1 && form <= DW_FORM_strx4)
				*form_at = DW_FORM_strx;
			if (form == DW_FORM_implicit_const)
				sleb(&w);
		}
		if (f->ncodes == cap) {
			cap = cap ? 2 * cap : 64;
			f->codes = xrealloc(f->codes, cap * sizeof *f->codes);
		}
		f->codes[f->ncodes++] = (struct code_map){table, code, blobs_code(&m->abbrevs, blob.s, blob.len)};
	}
	buf_free(&blob);
	if (c.bad)
		return fail(m, f, "its abbreviations are cut short");
	qsort(f->codes, f->ncodes, sizeof *f->codes, cmp_code_map);
	for (size_t i = 1; i < f->ncodes; i++)
		if (!cmp_code_map(&f->codes[i - 1], &f->codes[i]))
			return fail(m, f, "an abbreviation table has a code twice");
	return 0;
}

/* The shared abbreviation table, in code order. */
static void write_abbrevs(struct merge *m)
{
	struct buf *out = &m->out[S_ABBREV];
	for (size_t i = 0; i < m->abbrevs.n; i++) {
		put_uleb(out, i + 1);
		buf_addn(out, m->abbrevs.data.s + m->abbrevs.off[i], m->abbrevs.len[i]);
	}
	buf_addc(out, 0);
}

/* f's location list table into the shared one: its offsets (written by
 * write_list_offsets) and its lists, with their expressions' DIE offsets
 * mapped through its compile unit's map. */
static int merge_loclists(struct merge *m, struct dwo_in *f, struct buf *out)
{
	uint64_t size = sec_size(f, S_LOC);
	if (!size)
		return 0;
	uint64_t from = 12 + 4 * f->nloc;
	size_t at = out->len;
	buf_addn(out, (const char *)sec_data(f, S_LOC) + from, (size_t)(size - from));
	unsigned char *p = (unsigned char *)out->s + at;
	struct cur c = {p, p + (size - from), 0};
	while (c.p < c.end && !c.bad) {
		unsigned kind = *c.p++;
		int expr = 1;
		switch (kind) {
		case 0: expr = 0; break;                        /* end_of_list */
		case 1: uleb(&c); expr = 0; break;              /* base_addressx */
		case 2: case 3: case 4: uleb(&c); uleb(&c); break; /* startx_endx, startx_length, offset_pair */
		case 5: break;                                  /* default_location */
		case 6: skip(&c, 8); expr = 0; break;           /* base_address */
		case 7: skip(&c, 16); break;                    /* start_end */
		case 8: skip(&c, 8); uleb(&c); break;           /* start_length */
		default: return fail(m, f, "a location list has an entry of a kind the merge does not know");
		}
		if (!expr)
			continue;
		uint64_t n = uleb(&c);
		if (c.bad || n > (uint64_t)(c.end - c.p) || !f->has_cu || fix_expr((unsigned char *)c.p, n, &f->cu) < 0)
			return fail(m, f, "a location list's expression cannot be moved");
		c.p += n;
	}
	return c.bad ? fail(m, f, "a location list is cut short") : 0;
}

/* The offsets of the shared list table s: each file's entries, moved to
 * where its lists now start. */
static void write_list_offsets(struct merge *m, int s, struct buf *b, uint64_t total)
{
	put_le(b, 0, 4); /* length, set below */
	put_le(b, 5, 2);
	put_le(b, 8, 1);
	put_le(b, 0, 1);
	put_le(b, total, 4);
	uint64_t lists = 0;
	for (size_t i = 0; i < m->n; i++) {
		struct dwo_in *f = &m->in[i];
		uint64_t count = s == S_LOC ? f->nloc : f->nrng, size = sec_size(f, s);
		if (!size)
			continue;
		const unsigned char *p = sec_data(f, s) + 12;
		for (uint64_t j = 0; j < count; j++) {
			uint64_t v = (uint64_t)p[4 * j] | (uint64_t)p[4 * j + 1] << 8 | (uint64_t)p[4 * j + 2] << 16 |
				     (uint64_t)p[4 * j + 3] << 24;
			/* relative to the offsets' start: past this file's offsets,
			 * then into the shared lists */
			put_le(b, v - 4 * count + 4 * total + lists, 4);
		}
		lists += size - 12 - 4 * count;
	}
}

/* ---- the output file ---------------------------------------------------------------- */

/* The ELF file of the output sections that are not empty, its header's
 * machine and flags those of the first input. */
static void write_elf(struct merge *m, struct buf *o)
{
	Elf64_Ehdr eh;
	memcpy(&eh, m->in[0].data, sizeof eh);
	struct buf names = {0};
	buf_addc(&names, 0);
	Elf64_Shdr sh[S_N + 2];
	memset(sh, 0, sizeof sh);
	size_t nsh = 1;
	buf_addn(o, (const char *)&eh, sizeof eh);
	for (int s = 0; s < S_N; s++) {
		if (!m->out[s].len)
			continue;
		uint64_t flags = 0;
		for (size_t i = 0; i < m->n && !flags; i++)
			if (m->in[i].sec[s])
				flags = m->in[i].e.sh[m->in[i].sec[s]].sh_flags;
		sh[nsh] = (Elf64_Shdr){.sh_name = (uint32_t)names.len, .sh_type = SHT_PROGBITS, .sh_flags = flags,
				       .sh_offset = o->len, .sh_size = m->out[s].len, .sh_addralign = 1,
				       .sh_entsize = s == S_STR ? 1 : 0};
		buf_addn(&names, sec_names[s], strlen(sec_names[s]) + 1);
		buf_addn(o, m->out[s].s, m->out[s].len);
		nsh++;
	}
	sh[nsh] = (Elf64_Shdr){.sh_name = (uint32_t)names.len, .sh_type = SHT_STRTAB, .sh_offset = 0,
			       .sh_addralign = 1};
	buf_addn(&names, ".strtab", 8);
	sh[nsh].sh_offset = o->len;
	sh[nsh].sh_size = names.len;
	buf_addn(o, names.s, names.len);
	size_t strndx = nsh++;
	while (o->len % 8)
		buf_addc(o, 0);
	eh.e_type = ET_REL;
	eh.e_entry = 0;
	eh.e_phoff = 0;
	eh.e_phnum = 0;
	eh.e_phentsize = 0;
	eh.e_shoff = o->len;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (Elf64_Half)nsh;
	eh.e_shstrndx = (Elf64_Half)strndx;
	memcpy(o->s, &eh, sizeof eh);
	buf_addn(o, (const char *)sh, nsh * sizeof sh[0]);
	buf_free(&names);
}

/* The merge of the inputs read into m->in, in memory into o. */
static int merge_files(struct merge *m, struct buf *o)
{
	for (size_t i = 0; i < m->n; i++) {
		struct dwo_in *f = &m->in[i];
		if (open_input(m, f) < 0 || read_strings(m, f) < 0 || list_header(m, f, S_LOC, &f->nloc) < 0 ||
		    list_header(m, f, S_RNG, &f->nrng) < 0)
			return -1;
		f->loc_first = m->nloc;
		f->rng_first = m->nrng;
		m->nloc += f->nloc;
		m->nrng += f->nrng;
		f->line_at = m->out[S_LINE].len;
		if (sec_size(f, S_LINE))
			buf_addn(&m->out[S_LINE], (const char *)sec_data(f, S_LINE), (size_t)sec_size(f, S_LINE));
		if (merge_abbrevs(m, f) < 0 || merge_units(m, f) < 0)
			return -1;
		if (m->out[S_LINE].len > 0xffffffffu)
			return fail(m, f, "the merged sections are too large");
	}
	write_abbrevs(m);
	/* the shared list tables: header and offsets, then every file's lists */
	for (int s = S_LOC; s <= S_RNG; s++) {
		struct buf table = {0};
		uint64_t total = s == S_LOC ? m->nloc : m->nrng;
		int any = 0;
		for (size_t i = 0; i < m->n; i++)
			any |= sec_size(&m->in[i], s) > 0;
		if (!any)
			continue;
		write_list_offsets(m, s, &table, total);
		for (size_t i = 0; i < m->n; i++) {
			struct dwo_in *f = &m->in[i];
			if (s == S_LOC) {
				if (merge_loclists(m, f, &table) < 0) {
					buf_free(&table);
					return -1;
				}
			} else if (sec_size(f, s)) {
				uint64_t from = 12 + 4 * f->nrng;
				buf_addn(&table, (const char *)sec_data(f, s) + from, (size_t)(sec_size(f, s) - from));
			}
		}
		uint64_t len = table.len - 4;
		if (len > 0xfffffff0u) {
			buf_free(&table);
			return fail(m, NULL, "the merged list table is too large");
		}
		for (int k = 0; k < 4; k++)
			table.s[k] = (char)(len >> (8 * k));
		buf_free(&m->out[s]);
		m->out[s] = table;
	}
	/* the shared string offsets table */
	if (m->strings.n) {
		struct buf *so = &m->out[S_STROFF];
		if (m->strings.data.len > 0xffffffffu)
			return fail(m, NULL, "the merged strings are too large");
		put_le(so, 4 + 4 * (uint64_t)m->strings.n, 4);
		put_le(so, 5, 2);
		put_le(so, 0, 2);
		for (size_t i = 0; i < m->strings.n; i++)
			put_le(so, m->strings.off[i], 4);
		buf_addn(&m->out[S_STR], m->strings.data.s, m->strings.data.len);
	}
	write_elf(m, o);
	return 0;
}

int debugfix_dwo_merge(char *const *in, size_t n, const char *out, char **why)
{
	*why = NULL;
	struct merge m = {0};
	m.in = xcalloc(n + 1, sizeof *m.in);
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		struct dwo_in *f = &m.in[m.n];
		f->path = in[i];
		if (mtpc_read_file(in[i], &f->data, &f->len) < 0) {
			*why = xasprintf("%s: cannot read it: %s", in[i], strerror(errno));
			r = -1;
		}
		else if (f->len == 0)
			free(f->data); /* the compile wrote no .dwo */
		else
			m.n++;
	}
	struct buf o = {0};
	if (r == 0 && m.n == 0) {
		r = 0; /* no partition has split units: nothing to write */
	} else if (r == 0 && merge_files(&m, &o) < 0) {
		*why = m.why_file ? xasprintf("%s: %s", m.why_file, m.why) : xstrdup(m.why);
		r = -1;
	} else if (r == 0 && mtpc_write_file(out, o.s, o.len, MTPC_WRITE_IF_CHANGED) < 0) {
		*why = xasprintf("cannot write %s: %s", out, strerror(errno));
		r = -1;
	} else if (r == 0) {
		r = 1;
	}
	for (size_t i = 0; i < m.n; i++) {
		free(m.in[i].codes);
		free(m.in[i].data);
		free(m.in[i].e.sh);
		free(m.in[i].str_to);
		map_free(&m.in[i].cu);
	}
	for (int s = 0; s < S_N; s++)
		buf_free(&m.out[s]);
	blobs_free(&m.strings);
	blobs_free(&m.abbrevs);
	free(m.sigs);
	free(m.sig_used);
	free(m.in);
	buf_free(&o);
	return r;
}
