/* debugfix.c: see debugfix.h. DWARF 2 to 5, 32- and 64-bit DWARF. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "debugfix.h"
#include "buf.h"
#include "util.h"
#include "virtual_lines.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The DWARF 5 constants used here (DWARF 5 standard, section 7; the GNU
 * forms of split DWARF before version 5). */
enum {
	DW_UT_compile = 1, DW_UT_type, DW_UT_partial, DW_UT_skeleton, DW_UT_split_compile, DW_UT_split_type,
	DW_AT_decl_line = 0x3b, DW_AT_call_line = 0x59, DW_AT_str_offsets_base = 0x72,
	DW_FORM_addr = 0x01, DW_FORM_block2 = 0x03, DW_FORM_block4, DW_FORM_data2, DW_FORM_data4,
	DW_FORM_data8, DW_FORM_string, DW_FORM_block, DW_FORM_block1, DW_FORM_data1, DW_FORM_flag,
	DW_FORM_sdata, DW_FORM_strp, DW_FORM_udata, DW_FORM_ref_addr, DW_FORM_ref1, DW_FORM_ref2,
	DW_FORM_ref4, DW_FORM_ref8, DW_FORM_ref_udata, DW_FORM_indirect, DW_FORM_sec_offset,
	DW_FORM_exprloc, DW_FORM_flag_present, DW_FORM_strx, DW_FORM_addrx, DW_FORM_ref_sup4,
	DW_FORM_strp_sup, DW_FORM_data16, DW_FORM_line_strp, DW_FORM_ref_sig8, DW_FORM_implicit_const,
	DW_FORM_loclistx, DW_FORM_rnglistx, DW_FORM_ref_sup8, DW_FORM_strx1, DW_FORM_strx2,
	DW_FORM_strx3, DW_FORM_strx4, DW_FORM_addrx1, DW_FORM_addrx2, DW_FORM_addrx3, DW_FORM_addrx4,
	DW_FORM_GNU_addr_index = 0x1f01, DW_FORM_GNU_str_index, DW_FORM_GNU_ref_alt = 0x1f20,
	DW_FORM_GNU_strp_alt,
	DW_LNS_copy = 1, DW_LNS_advance_line = 3, DW_LNS_fixed_advance_pc = 9,
	DW_LNE_end_sequence = 1,
};

/* ---- the map ---------------------------------------------------------- */

/* One decimal field of a map line and the blank after it (sep): 0, or -1
 * if *l does not start with one. Not sscanf: it measures the whole rest of
 * the text on every call, and a map has a line per span. */
static int map_field(const char **l, int sep, unsigned long long *v)
{
	const char *q = *l;
	if (*q < '0' || *q > '9')
		return -1;
	unsigned long long x = 0;
	for (; *q >= '0' && *q <= '9'; q++) {
		if (x > (ULLONG_MAX - 9) / 10)
			return -1;
		x = 10 * x + (unsigned)(*q - '0');
	}
	if (sep && *q++ != sep)
		return -1;
	*l = q;
	*v = x;
	return 0;
}

int debugfix_parse_lines(const char *text, int part, struct line_map *map)
{
	size_t cap = 0;
	map->span = NULL;
	map->n = 0;
	for (const char *l = text; l && *l;) {
		unsigned long long p, v, f, c;
		if (map_field(&l, ' ', &p) || map_field(&l, ' ', &v) || map_field(&l, ' ', &f) ||
		    map_field(&l, 0, &c) || (*l && *l != '\n'))
			goto bad;
		if (p == (unsigned long long)part) {
			const struct line_span *last = map->n ? &map->span[map->n - 1] : NULL;
			if (v < MTPC_VIRTUAL_LINE_BASE || c == 0 || v + c > 2ull * MTPC_VIRTUAL_LINE_BASE ||
			    f == 0 || f + c > MTPC_VIRTUAL_LINE_BASE ||
			    (last && v < (unsigned long long)last->virt + last->count))
				goto bad;
			if (map->n == cap) {
				cap = cap ? 2 * cap : 64;
				map->span = xrealloc(map->span, cap * sizeof *map->span);
			}
			map->span[map->n++] = (struct line_span){(uint32_t)v, (uint32_t)f, (uint32_t)c};
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	return 0;
bad:
	debugfix_free_lines(map);
	return -1;
}

void debugfix_free_lines(struct line_map *map)
{
	free(map->span);
	map->span = NULL;
	map->n = 0;
}

long long debugfix_real_line(const struct line_map *map, uint64_t v)
{
	if (v < MTPC_VIRTUAL_LINE_BASE)
		return (long long)v;
	size_t lo = 0, hi = map ? map->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct line_span *s = &map->span[mid];
		if (v < s->virt)
			hi = mid;
		else if (v >= (uint64_t)s->virt + s->count)
			lo = mid + 1;
		else
			return (long long)s->first + (long long)(v - s->virt);
	}
	return -1;
}

/* ---- checksums ---------------------------------------------------------- */

/* The value of hex digit c, or -1. */
static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One "PLACEHOLDER REAL" line of checksums.txt as two 16-byte MD5s. */
static int parse_checksum_line(const char *line, unsigned char ph[16], unsigned char real[16])
{
	unsigned char *out[2] = {ph, real};
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 16; i++) {
			int hi = hex_digit(line[2 * i]), lo = hi < 0 ? -1 : hex_digit(line[2 * i + 1]);
			if (lo < 0)
				return -1;
			out[k][i] = (unsigned char)(hi << 4 | lo);
		}
		line += 32;
		if (k == 0 && *line++ != ' ')
			return -1;
	}
	return 0;
}

/* Replace every placeholder MD5 by its real one in data[0..len). */
static void patch_checksums(unsigned char *data, size_t len, const char *map)
{
	for (const char *line = map; line && *line;) {
		unsigned char ph[16], real[16];
		if (parse_checksum_line(line, ph, real) == 0) {
			for (unsigned char *p = data; len >= 16 && p <= data + len - 16;) {
				unsigned char *hit = memmem(p, (size_t)(data + len - p), ph, 16);
				if (!hit)
					break;
				memcpy(hit, real, 16);
				p = hit + 16;
			}
		}
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
}

/* ---- reading DWARF ---------------------------------------------------- */

/* A bounded reader: reading past end sets bad and yields zeros. */
struct cur {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t rd(struct cur *c, int n)
{
	if (c->end - c->p < n) {
		c->bad = 1;
		c->p = c->end;
		return 0;
	}
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t uleb(struct cur *c)
{
	uint64_t v = 0;
	for (int shift = 0; c->p < c->end; shift += 7) {
		unsigned char b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

static int64_t sleb(struct cur *c)
{
	uint64_t v = 0;
	int shift = 0;
	while (c->p < c->end) {
		unsigned char b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	c->bad = 1;
	return 0;
}

static void skip(struct cur *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = 1;
		c->p = c->end;
	} else {
		c->p += n;
	}
}

static void put_sleb(struct buf *b, int64_t v)
{
	for (;;) {
		unsigned char byte = v & 0x7f;
		v >>= 7; /* arithmetic: gcc and clang */
		int done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
		buf_addc(b, (char)(done ? byte : byte | 0x80));
		if (done)
			return;
	}
}

/* Write v as an unsigned LEB128 of exactly n bytes (padded). */
static int put_uleb_fixed(unsigned char *p, int n, uint64_t v)
{
	for (int i = 0; i < n; i++) {
		p[i] = (unsigned char)((v & 0x7f) | (i + 1 < n ? 0x80 : 0));
		v >>= 7;
	}
	return v ? -1 : 0;
}

/* A unit's initial length (32- or 64-bit DWARF): sets *offsz and limits c
 * to the unit. Returns -1 if it does not fit. */
static int enter_unit(struct cur *c, int *offsz)
{
	uint64_t len = rd(c, 4);
	*offsz = 4;
	if (len == 0xffffffff) {
		len = rd(c, 8);
		*offsz = 8;
	} else if (len >= 0xfffffff0) {
		return -1;
	}
	if (c->bad || len > (uint64_t)(c->end - c->p))
		return -1;
	c->end = c->p + len;
	return 0;
}

/* Skip one attribute value of the given form; -1 for a form we do not know. */
static int skip_form(struct cur *c, uint64_t form, int offsz, int addrsz, int version)
{
	switch (form) {
	case DW_FORM_flag_present: case DW_FORM_implicit_const: return 0;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1:
	case DW_FORM_addrx1: skip(c, 1); return 0;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		skip(c, 2); return 0;
	case DW_FORM_strx3: case DW_FORM_addrx3: skip(c, 3); return 0;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_ref_sup4: case DW_FORM_strx4:
	case DW_FORM_addrx4: skip(c, 4); return 0;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		skip(c, 8); return 0;
	case DW_FORM_data16: skip(c, 16); return 0;
	case DW_FORM_addr: skip(c, (uint64_t)addrsz); return 0;
	case DW_FORM_ref_addr: skip(c, (uint64_t)(version <= 2 ? addrsz : offsz)); return 0;
	case DW_FORM_strp: case DW_FORM_sec_offset: case DW_FORM_strp_sup: case DW_FORM_line_strp:
	case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt: skip(c, (uint64_t)offsz); return 0;
	case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
	case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index: uleb(c); return 0;
	case DW_FORM_sdata: sleb(c); return 0;
	case DW_FORM_string:
		while (c->p < c->end && *c->p)
			c->p++;
		skip(c, 1);
		return 0;
	case DW_FORM_block1: skip(c, rd(c, 1)); return 0;
	case DW_FORM_block2: skip(c, rd(c, 2)); return 0;
	case DW_FORM_block4: skip(c, rd(c, 4)); return 0;
	case DW_FORM_block: case DW_FORM_exprloc: skip(c, uleb(c)); return 0;
	case DW_FORM_indirect: return skip_form(c, uleb(c), offsz, addrsz, version);
	default: return -1;
	}
}

/* ---- the ELF file -------------------------------------------------------- */

struct elf {
	unsigned char *data;
	size_t len;
	Elf64_Shdr *sh; /* copies of the section headers */
	size_t nsh;
	size_t names_off, names_size; /* the section name string table */
	const char *why;
};

static int elf_open(struct elf *e, unsigned char *data, size_t len)
{
	memset(e, 0, sizeof *e);
	e->data = data;
	e->len = len;
	Elf64_Ehdr eh;
	if (len < sizeof eh || memcmp(data, ELFMAG, SELFMAG) || data[EI_CLASS] != ELFCLASS64 ||
	    data[EI_DATA] != ELFDATA2LSB)
		return -1;
	memcpy(&eh, data, sizeof eh);
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > len || len - eh.e_shoff < sizeof(Elf64_Shdr))
		return -1;
	Elf64_Shdr first;
	memcpy(&first, data + eh.e_shoff, sizeof first);
	size_t n = eh.e_shnum ? eh.e_shnum : first.sh_size; /* extended numbering */
	size_t strndx = eh.e_shstrndx == SHN_XINDEX ? first.sh_link : eh.e_shstrndx;
	if (n == 0 || n > (len - eh.e_shoff) / sizeof(Elf64_Shdr) || strndx >= n)
		return -1;
	e->sh = xmalloc(n * sizeof *e->sh);
	memcpy(e->sh, data + eh.e_shoff, n * sizeof *e->sh);
	e->nsh = n;
	for (size_t i = 0; i < n; i++)
		if (e->sh[i].sh_type != SHT_NOBITS &&
		    (e->sh[i].sh_offset > len || e->sh[i].sh_size > len - e->sh[i].sh_offset)) {
			free(e->sh);
			e->sh = NULL;
			return -1;
		}
	e->names_off = e->sh[strndx].sh_offset;
	e->names_size = e->sh[strndx].sh_size;
	return 0;
}

static const char *sec_name(const struct elf *e, size_t i)
{
	uint32_t n = e->sh[i].sh_name;
	const char *names = (const char *)e->data + e->names_off;
	if (n >= e->names_size || !memchr(names + n, 0, e->names_size - n))
		return "";
	return names + n;
}

static size_t find_section(const struct elf *e, const char *name)
{
	for (size_t i = 1; i < e->nsh; i++)
		if (!strcmp(sec_name(e, i), name))
			return i;
	return 0;
}

static void store_shdr(struct elf *e, size_t i)
{
	Elf64_Ehdr eh;
	memcpy(&eh, e->data, sizeof eh);
	memcpy(e->data + eh.e_shoff + i * sizeof(Elf64_Shdr), &e->sh[i], sizeof(Elf64_Shdr));
}

/* The value a relocated field at off of section target holds after
 * relocation against a section symbol (what an unlinked object means by
 * it), or the stored value when nothing relocates it. */
static uint64_t relocated(const struct elf *e, size_t target, uint64_t off, uint64_t stored)
{
	for (size_t r = 1; r < e->nsh; r++) {
		const Elf64_Shdr *rs = &e->sh[r];
		if (rs->sh_type != SHT_RELA || rs->sh_info != target || rs->sh_link >= e->nsh)
			continue;
		const Elf64_Shdr *symtab = &e->sh[rs->sh_link];
		for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= rs->sh_size; k += sizeof(Elf64_Rela)) {
			Elf64_Rela rel;
			memcpy(&rel, e->data + rs->sh_offset + k, sizeof rel);
			if (rel.r_offset != off)
				continue;
			Elf64_Sym sym = {0};
			uint64_t at = (uint64_t)ELF64_R_SYM(rel.r_info) * sizeof sym;
			if (at + sizeof sym <= symtab->sh_size)
				memcpy(&sym, e->data + symtab->sh_offset + at, sizeof sym);
			return sym.st_value + (uint64_t)rel.r_addend;
		}
	}
	return stored;
}

/* ---- DIEs ----------------------------------------------------------------- */

struct abbrev {
	uint64_t code;
	size_t first, n; /* its attributes: specs[first .. first+n) */
};

struct abbrevs {
	uint64_t offset; /* in the abbreviation section; ~0: none loaded */
	struct abbrev *a;
	size_t n, cap;
	uint64_t (*spec)[3]; /* attribute, form, implicit constant */
	size_t nspec, capspec;
};

static int load_abbrevs(struct abbrevs *t, const unsigned char *sec, size_t size, uint64_t off)
{
	if (t->offset == off)
		return 0;
	t->n = t->nspec = 0;
	t->offset = ~(uint64_t)0;
	if (off >= size)
		return -1;
	struct cur c = {sec + off, sec + size, 0};
	for (;;) {
		uint64_t code = uleb(&c);
		if (c.bad)
			return -1;
		if (code == 0)
			break;
		uleb(&c); /* tag */
		rd(&c, 1); /* children */
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 64;
			t->a = xrealloc(t->a, t->cap * sizeof *t->a);
		}
		struct abbrev *a = &t->a[t->n++];
		a->code = code;
		a->first = t->nspec;
		a->n = 0;
		for (;;) {
			uint64_t attr = uleb(&c), form = uleb(&c), implicit = 0;
			if (c.bad)
				return -1;
			if (attr == 0 && form == 0)
				break;
			if (form == DW_FORM_implicit_const)
				implicit = (uint64_t)sleb(&c);
			if (t->nspec == t->capspec) {
				t->capspec = t->capspec ? 2 * t->capspec : 256;
				t->spec = xrealloc(t->spec, t->capspec * sizeof *t->spec);
			}
			t->spec[t->nspec][0] = attr;
			t->spec[t->nspec][1] = form;
			t->spec[t->nspec][2] = implicit;
			t->nspec++;
			a->n++;
		}
	}
	t->offset = off;
	return 0;
}

static const struct abbrev *find_abbrev(const struct abbrevs *t, uint64_t code)
{
	if (code >= 1 && code <= t->n && t->a[code - 1].code == code)
		return &t->a[code - 1]; /* LLVM numbers them 1, 2, ... */
	for (size_t i = 0; i < t->n; i++)
		if (t->a[i].code == code)
			return &t->a[i];
	return NULL;
}

/* Put the real value into a DW_AT_decl_line or DW_AT_call_line at c->p. */
static int fix_line_attr(struct cur *c, uint64_t form, const struct line_map *map)
{
	unsigned char *at = (unsigned char *)c->p;
	uint64_t v;
	int n;
	switch (form) {
	case DW_FORM_data4: v = rd(c, 4); n = 4; break;
	case DW_FORM_data8: v = rd(c, 8); n = 8; break;
	case DW_FORM_udata: v = uleb(c); n = (int)(c->p - at); break;
	default: return skip_form(c, form, 4, 8, 5) < 0 ? -1 : 0; /* too small to be virtual */
	}
	if (c->bad || v < MTPC_VIRTUAL_LINE_BASE)
		return c->bad ? -1 : 0;
	long long real = debugfix_real_line(map, v);
	if (real < 0)
		return -1;
	if (form == DW_FORM_udata)
		return put_uleb_fixed(at, n, (uint64_t)real);
	for (int i = 0; i < n; i++)
		at[i] = (unsigned char)((uint64_t)real >> (8 * i));
	return 0;
}

/* What walk_dies does at each attribute: attr is called with c at the
 * attribute's value (spec: attribute, form, implicit constant) and reads
 * past it, or returns 1 for the walk to skip it; -1 stops the walk. The
 * walk sets the unit's sizes and where its section starts before the
 * unit's first DIE. */
struct visit {
	int (*attr)(struct visit *v, struct cur *c, const uint64_t spec[3]);
	const unsigned char *sec;
	int offsz, addrsz, version;
};

/* The units in bytes from .. to of a .debug_info or .debug_types section
 * (index si), with the abbreviation offsets of their headers relative to
 * abbrev_base (a package's per-unit contribution; 0 elsewhere). */
static int walk_units(struct elf *e, size_t si, size_t from, size_t to, size_t abbrev_si, uint64_t abbrev_base,
		      int types, struct abbrevs *t, struct visit *v)
{
	unsigned char *sec = e->data + e->sh[si].sh_offset;
	size_t off = from;
	const unsigned char *ab = e->data + e->sh[abbrev_si].sh_offset;
	size_t absize = e->sh[abbrev_si].sh_size;
	if (to > e->sh[si].sh_size || from > to)
		return -1;
	while (off < to) {
		struct cur c = {sec + off, sec + to, 0};
		int offsz;
		if (enter_unit(&c, &offsz) < 0)
			return -1;
		const unsigned char *end = c.end;
		int version = (int)rd(&c, 2), addrsz = 8, unit_type = 0;
		uint64_t abbr_at, abbr;
		if (version >= 5) {
			unit_type = (int)rd(&c, 1);
			addrsz = (int)rd(&c, 1);
			abbr_at = (uint64_t)(c.p - sec);
			abbr = rd(&c, offsz);
			if (unit_type == DW_UT_skeleton || unit_type == DW_UT_split_compile)
				skip(&c, 8);
			else if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
				skip(&c, 8 + (uint64_t)offsz);
			else if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
				return -1;
		} else {
			abbr_at = (uint64_t)(c.p - sec);
			abbr = rd(&c, offsz);
			addrsz = (int)rd(&c, 1);
			if (types)
				skip(&c, 8 + (uint64_t)offsz);
		}
		if (c.bad || version < 2 || version > 5 ||
		    load_abbrevs(t, ab, absize, abbrev_base + relocated(e, si, abbr_at, abbr)) < 0)
			return -1;
		v->sec = sec;
		v->offsz = offsz;
		v->addrsz = addrsz;
		v->version = version;
		while (c.p < end) {
			uint64_t code = uleb(&c);
			if (c.bad)
				return -1;
			if (code == 0)
				continue;
			const struct abbrev *a = find_abbrev(t, code);
			if (!a)
				return -1;
			for (size_t k = 0; k < a->n; k++) {
				const uint64_t *spec = t->spec[a->first + k];
				int r = v->attr(v, &c, spec);
				if (r == 1)
					r = skip_form(&c, spec[1], offsz, addrsz, version);
				if (r < 0 || c.bad)
					return -1;
			}
		}
		off = (size_t)(end - sec);
	}
	return 0;
}

/* walk_units over the whole section si. */
static int walk_dies(struct elf *e, size_t si, size_t abbrev_si, int types, struct abbrevs *t, struct visit *v)
{
	return walk_units(e, si, 0, e->sh[si].sh_size, abbrev_si, 0, types, t, v);
}

/* The visit that puts real lines into DW_AT_decl_line and DW_AT_call_line. */
struct line_visit {
	struct visit v;
	const struct line_map *map;
};

static int visit_line(struct visit *v, struct cur *c, const uint64_t spec[3])
{
	if (spec[0] != DW_AT_decl_line && spec[0] != DW_AT_call_line)
		return 1;
	if (spec[1] == DW_FORM_implicit_const && spec[2] >= MTPC_VIRTUAL_LINE_BASE)
		return -1; /* a virtual line in the abbreviation: cannot be patched */
	return fix_line_attr(c, spec[1], ((struct line_visit *)v)->map);
}

/* ---- line programs ------------------------------------------------------ */

/* Where bytes of the old section went in the new one: old..old+len is now
 * at new.. (the bytes copied as they were). */
struct moved {
	uint64_t old, new, len;
};

struct moves {
	struct moved *m;
	size_t n, cap;
	uint64_t old_size, new_size;
};

static void moved_add(struct moves *mv, uint64_t old, uint64_t new, uint64_t len)
{
	if (mv->n && mv->m[mv->n - 1].old + mv->m[mv->n - 1].len == old &&
	    mv->m[mv->n - 1].new + mv->m[mv->n - 1].len == new) {
		mv->m[mv->n - 1].len += len;
		return;
	}
	if (mv->n == mv->cap) {
		mv->cap = mv->cap ? 2 * mv->cap : 64;
		mv->m = xrealloc(mv->m, mv->cap * sizeof *mv->m);
	}
	mv->m[mv->n++] = (struct moved){old, new, len};
}

/* The new offset of old offset x, or -1 if that byte was not kept. */
static long long moved_to(const struct moves *mv, uint64_t x)
{
	if (x == mv->old_size)
		return (long long)mv->new_size;
	size_t lo = 0, hi = mv->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x < mv->m[mid].old)
			hi = mid;
		else if (x >= mv->m[mid].old + mv->m[mid].len)
			lo = mid + 1;
		else
			return (long long)(mv->m[mid].new + (x - mv->m[mid].old));
	}
	return -1;
}

/* Copy old[from..to) to the output as it is. */
static void keep(struct buf *out, struct moves *mv, const unsigned char *sec, size_t from, size_t to)
{
	moved_add(mv, from, out->len, to - from);
	buf_addn(out, (const char *)sec + from, to - from);
}

/* Re-encode one line program (sec[from..to)) with real lines. Opcodes are
 * copied as they are; the advance_line opcodes are dropped and, before each
 * row, one advance_line brings the line register to the row's real line. */
static int fix_program(const unsigned char *sec, size_t from, size_t to, int opcode_base, int line_base,
		       int line_range, const unsigned char *std_lengths, const struct line_map *map,
		       struct buf *out, struct moves *mv)
{
	struct cur c = {sec + from, sec + to, 0};
	int64_t vline = 1, rline = 1; /* line register: as compiled, as written */
	while (c.p < c.end) {
		size_t at = (size_t)(c.p - sec);
		int op = (int)rd(&c, 1), row = 0, reset = 0;
		int64_t delta = 0; /* a special opcode's own line advance */
		if (op >= opcode_base) {
			delta = line_base + (op - opcode_base) % line_range;
			row = 1;
		} else if (op == 0) {
			uint64_t n = uleb(&c);
			int sub = n ? (int)rd(&c, 1) : -1;
			skip(&c, n ? n - 1 : 0);
			row = reset = sub == DW_LNE_end_sequence;
		} else if (op == DW_LNS_advance_line) {
			vline += sleb(&c);
			if (c.bad)
				return -1;
			continue;
		} else if (op == DW_LNS_copy) {
			row = 1;
		} else if (op == DW_LNS_fixed_advance_pc) {
			skip(&c, 2);
		} else {
			for (int k = 0; k < std_lengths[op - 1]; k++)
				uleb(&c);
		}
		if (c.bad)
			return -1;
		if (row) {
			int64_t v = vline + delta, real = v;
			if (v >= (int64_t)MTPC_VIRTUAL_LINE_BASE && (real = debugfix_real_line(map, (uint64_t)v)) < 0)
				return -1;
			if (real - rline - delta) {
				buf_addc(out, DW_LNS_advance_line);
				put_sleb(out, real - rline - delta);
			}
			vline = v;
			rline = real;
		}
		keep(out, mv, sec, at, (size_t)(c.p - sec));
		if (reset)
			vline = rline = 1;
	}
	return 0;
}

/* Every unit of a line table section, re-encoded into out. */
static int fix_line_section(const unsigned char *sec, size_t size, const struct line_map *map,
			    struct buf *out, struct moves *mv)
{
	size_t off = 0;
	mv->old_size = size;
	while (off < size) {
		struct cur c = {sec + off, sec + size, 0};
		int offsz;
		if (enter_unit(&c, &offsz) < 0)
			return -1;
		size_t end = (size_t)(c.end - sec);
		int version = (int)rd(&c, 2);
		if (version >= 5)
			skip(&c, 2); /* address and segment selector sizes */
		uint64_t header_len = rd(&c, offsz);
		if (c.bad || version < 2 || version > 5 || header_len > (uint64_t)(c.end - c.p))
			return -1;
		size_t program = (size_t)(c.p - sec) + (size_t)header_len;
		skip(&c, version >= 4 ? 3 : 2); /* minimum instruction length, max ops, default_is_stmt */
		int line_base = (int8_t)rd(&c, 1), line_range = (int)rd(&c, 1), opcode_base = (int)rd(&c, 1);
		const unsigned char *std_lengths = c.p;
		skip(&c, opcode_base > 0 ? (uint64_t)opcode_base - 1 : 0);
		if (c.bad || line_range == 0 || opcode_base == 0 || c.p > sec + program)
			return -1;
		/* The unit length is rewritten below; it keeps its size and place. */
		size_t unit_out = out->len;
		keep(out, mv, sec, off, program);
		if (fix_program(sec, program, end, opcode_base, line_base, line_range, std_lengths, map, out,
				mv) < 0)
			return -1;
		uint64_t newlen = out->len - unit_out - (offsz == 8 ? 12 : 4);
		if (offsz == 4 && newlen >= 0xfffffff0)
			return -1;
		for (int i = 0; i < offsz; i++)
			out->s[unit_out + (offsz == 8 ? 4 : 0) + i] = (char)(newlen >> (8 * i));
		off = end;
	}
	mv->new_size = out->len;
	return 0;
}

/* Move what refers into section si to where mv put it: the offsets of the
 * relocations applied to it, and the addends of relocations against its
 * section symbol (DW_AT_stmt_list). */
static int move_relocations(struct elf *e, size_t si, const struct moves *mv)
{
	for (size_t r = 1; r < e->nsh; r++) {
		const Elf64_Shdr *rs = &e->sh[r];
		if (rs->sh_type != SHT_RELA || rs->sh_link >= e->nsh)
			continue;
		const Elf64_Shdr *symtab = &e->sh[rs->sh_link];
		for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= rs->sh_size; k += sizeof(Elf64_Rela)) {
			unsigned char *p = e->data + rs->sh_offset + k;
			Elf64_Rela rel;
			memcpy(&rel, p, sizeof rel);
			long long to;
			if (rs->sh_info == si) {
				if ((to = moved_to(mv, rel.r_offset)) < 0)
					return -1;
				rel.r_offset = (uint64_t)to;
			}
			Elf64_Sym sym = {0};
			uint64_t at = (uint64_t)ELF64_R_SYM(rel.r_info) * sizeof sym;
			if (at + sizeof sym <= symtab->sh_size)
				memcpy(&sym, e->data + symtab->sh_offset + at, sizeof sym);
			if (ELF64_ST_TYPE(sym.st_info) == STT_SECTION && sym.st_shndx == si) {
				if (rel.r_addend < 0 || (to = moved_to(mv, (uint64_t)rel.r_addend)) < 0)
					return -1;
				rel.r_addend = to;
			}
			memcpy(p, &rel, sizeof rel);
		}
	}
	return 0;
}

/* ---- the whole file ----------------------------------------------------- */

static int fix_lines(struct elf *e, const struct line_map *map)
{
	static const char *const dies[][2] = {
		{".debug_info", ".debug_abbrev"},
		{".debug_info.dwo", ".debug_abbrev.dwo"},
		{".debug_types", ".debug_abbrev"},
		{".debug_types.dwo", ".debug_abbrev.dwo"},
	};
	struct abbrevs t = {~(uint64_t)0, NULL, 0, 0, NULL, 0, 0};
	struct line_visit lv = {{visit_line, NULL, 0, 0, 0}, map};
	int r = 0;
	for (size_t i = 1; i < e->nsh && r == 0; i++)
		for (size_t k = 0; k < sizeof dies / sizeof *dies; k++) {
			if (strcmp(sec_name(e, i), dies[k][0]) || e->sh[i].sh_type == SHT_NOBITS)
				continue;
			size_t ab = find_section(e, dies[k][1]);
			t.offset = ~(uint64_t)0;
			if (!ab || walk_dies(e, i, ab, k >= 2, &t, &lv.v) < 0) {
				e->why = "cannot read its DIEs";
				r = -1;
			}
		}
	free(t.a);
	free(t.spec);
	for (size_t i = 1; i < e->nsh && r == 0; i++) {
		const char *name = sec_name(e, i);
		if ((strcmp(name, ".debug_line") && strcmp(name, ".debug_line.dwo")) ||
		    e->sh[i].sh_type == SHT_NOBITS)
			continue;
		struct buf out = {0};
		struct moves mv = {0};
		const unsigned char *sec = e->data + e->sh[i].sh_offset;
		size_t size = e->sh[i].sh_size;
		if (fix_line_section(sec, size, map, &out, &mv) < 0) {
			e->why = "cannot read its line table";
			r = -1;
		} else if (out.len != size || memcmp(out.s, sec, size)) {
			if (move_relocations(e, i, &mv) < 0) {
				e->why = "a relocation points into a line number";
				r = -1;
			} else {
				/* The new table goes to the end of the file. */
				size_t at = e->len;
				e->data = xrealloc(e->data, e->len + out.len);
				memcpy(e->data + at, out.s, out.len);
				e->len += out.len;
				e->sh[i].sh_offset = at;
				e->sh[i].sh_size = out.len;
				store_shdr(e, i);
			}
		}
		buf_free(&out);
		free(mv.m);
	}
	return r;
}

/* ---- string offsets of discarded type units ----------------------------- */

/* Whether sorted strv sv holds s. */
static int strv_has(const struct strv *sv, const char *s)
{
	size_t lo = 0, hi = sv->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(sv->v[mid], s);
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add the strings of more to the sorted set *sorted, which stays sorted
 * and without duplicates. */
static void sorted_union(struct strv *sorted, const struct strv *more)
{
	if (!more->n)
		return;
	strv_addv(sorted, more);
	qsort(sorted->v, sorted->n, sizeof *sorted->v, cmp_str);
	size_t n = 0;
	for (size_t i = 0; i < sorted->n; i++) {
		if (n && !strcmp(sorted->v[n - 1], sorted->v[i]))
			free(sorted->v[i]);
		else
			sorted->v[n++] = sorted->v[i];
	}
	sorted->n = n;
	sorted->v[n] = NULL;
}

/* The sections `ld.lld -r` discards from e: the members of each COMDAT
 * group whose signature an earlier input has (the first group of a
 * signature wins). e's own COMDAT signatures go to *mine. Returns a flag
 * per section (heap), or NULL if a group cannot be read. */
static unsigned char *discarded_sections(const struct elf *e, const struct strv *earlier, struct strv *mine)
{
	unsigned char *gone = xcalloc(e->nsh + 1, 1);
	for (size_t i = 1; i < e->nsh; i++) {
		const Elf64_Shdr *g = &e->sh[i];
		if (g->sh_type != SHT_GROUP)
			continue;
		uint32_t w;
		if (g->sh_size < 4 || g->sh_size % 4 || g->sh_link >= e->nsh || e->sh[g->sh_link].sh_link >= e->nsh)
			goto bad;
		memcpy(&w, e->data + g->sh_offset, 4);
		if (!(w & GRP_COMDAT))
			continue;
		const Elf64_Shdr *symtab = &e->sh[g->sh_link], *strtab = &e->sh[symtab->sh_link];
		Elf64_Sym sym;
		if ((uint64_t)g->sh_info >= symtab->sh_size / sizeof sym)
			goto bad;
		memcpy(&sym, e->data + symtab->sh_offset + (uint64_t)g->sh_info * sizeof sym, sizeof sym);
		const char *names = (const char *)e->data + strtab->sh_offset;
		if (sym.st_name >= strtab->sh_size || !memchr(names + sym.st_name, 0, strtab->sh_size - sym.st_name))
			goto bad;
		const char *sig = names + sym.st_name;
		strv_add(mine, sig);
		if (!strv_has(earlier, sig))
			continue;
		for (uint64_t k = 4; k < g->sh_size; k += 4) {
			memcpy(&w, e->data + g->sh_offset + k, 4);
			if (w >= e->nsh)
				goto bad;
			gone[w] = 1;
		}
	}
	return gone;
bad:
	free(gone);
	return NULL;
}

/* The visit that marks (to == NULL) or renumbers (to[old]) the string
 * indexes of the units, after checking that each unit's string offsets
 * start at base. */
struct str_visit {
	struct visit v;
	const struct elf *e;
	size_t si;             /* the section walked */
	uint64_t base, n;      /* DW_AT_str_offsets_base of every unit; entries */
	unsigned char *used;   /* per entry */
	const uint32_t *to;    /* the new index of each used entry */
};

static int visit_str(struct visit *v, struct cur *c, const uint64_t spec[3])
{
	struct str_visit *s = (struct str_visit *)v;
	int width;
	if (spec[0] == DW_AT_str_offsets_base) {
		if (spec[1] != DW_FORM_sec_offset)
			return -1;
		uint64_t at = (uint64_t)(c->p - v->sec), stored = rd(c, v->offsz);
		return relocated(s->e, s->si, at, stored) == s->base ? 0 : -1;
	}
	switch (spec[1]) {
	case DW_FORM_strx1: width = 1; break;
	case DW_FORM_strx2: width = 2; break;
	case DW_FORM_strx3: width = 3; break;
	case DW_FORM_strx4: width = 4; break;
	case DW_FORM_strx: width = 0; break;
	case DW_FORM_indirect: case DW_FORM_GNU_str_index: return -1; /* not from LLVM: leave the file */
	default: return 1;
	}
	unsigned char *at = (unsigned char *)c->p;
	uint64_t x = width ? rd(c, width) : uleb(c);
	if (c->bad || x >= s->n)
		return -1;
	if (!s->to) {
		s->used[x] = 1;
		return 0;
	}
	if (!width)
		return put_uleb_fixed(at, (int)(c->p - at), s->to[x]);
	for (int i = 0; i < width; i++)
		at[i] = (unsigned char)(s->to[x] >> (8 * i));
	return 0;
}

/* Walk every .debug_info section of e that the link keeps with sv. */
static int walk_kept_units(struct elf *e, const unsigned char *gone, struct str_visit *sv)
{
	size_t ab = find_section(e, ".debug_abbrev");
	struct abbrevs t = {~(uint64_t)0, NULL, 0, 0, NULL, 0, 0};
	int r = ab ? 0 : -1;
	for (size_t i = 1; i < e->nsh && r == 0; i++)
		if (!gone[i] && e->sh[i].sh_type == SHT_PROGBITS && !strcmp(sec_name(e, i), ".debug_info")) {
			sv->si = i;
			r = walk_dies(e, i, ab, 0, &t, &sv->v);
		}
	free(t.a);
	free(t.spec);
	return r;
}

/* Whether section si can be rewritten with its contents moving: -1 if REL
 * relocations (addends in place) apply to it or a symbol other than its
 * section symbol labels a place in it. */
static int movable(const struct elf *e, size_t si)
{
	for (size_t r = 1; r < e->nsh; r++) {
		const Elf64_Shdr *rs = &e->sh[r];
		if (rs->sh_type == SHT_REL && rs->sh_info == si)
			return -1;
		if (rs->sh_type == SHT_SYMTAB)
			for (uint64_t k = 0; k + sizeof(Elf64_Sym) <= rs->sh_size; k += sizeof(Elf64_Sym)) {
				Elf64_Sym sym;
				memcpy(&sym, e->data + rs->sh_offset + k, sizeof sym);
				if (sym.st_shndx == si && ELF64_ST_TYPE(sym.st_info) != STT_SECTION)
					return -1;
			}
	}
	return 0;
}

/* Check the relocations that involve the string offsets section so: the
 * ones applied to it relocate whole entries (the rela section: *rela),
 * the ones against it are unit bases (addend base). */
static int str_offsets_relocations(const struct elf *e, size_t so, uint64_t base, size_t *rela)
{
	*rela = 0;
	if (movable(e, so) < 0)
		return -1;
	for (size_t r = 1; r < e->nsh; r++) {
		const Elf64_Shdr *rs = &e->sh[r];
		if (rs->sh_type != SHT_RELA || rs->sh_link >= e->nsh)
			continue;
		if (rs->sh_info == so) {
			if (*rela)
				return -1;
			*rela = r;
		}
		const Elf64_Shdr *symtab = &e->sh[rs->sh_link];
		for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= rs->sh_size; k += sizeof(Elf64_Rela)) {
			Elf64_Rela rel;
			memcpy(&rel, e->data + rs->sh_offset + k, sizeof rel);
			if (rs->sh_info == so && (rel.r_offset < base || (rel.r_offset - base) % 4))
				return -1;
			Elf64_Sym sym = {0};
			uint64_t at = (uint64_t)ELF64_R_SYM(rel.r_info) * sizeof sym;
			if (at + sizeof sym <= symtab->sh_size)
				memcpy(&sym, e->data + symtab->sh_offset + at, sizeof sym);
			if (sym.st_shndx == so && (uint64_t)rel.r_addend != base)
				return -1;
		}
	}
	return 0;
}

/* Drop from e's string offsets table (DWARF 5, one table per object) the
 * entries only units in discarded COMDAT groups use, and renumber the
 * string indexes of the kept units. clang gives every C++ type with
 * -fdebug-types-section a type unit in a COMDAT group, and the table of
 * each object lists the strings of all its units: after the merge keeps
 * each type unit of a module once, the table of every later partition
 * still lists the strings of the type units it lost (the C++ sample: 31 KB
 * of offsets where 14 KB are used). earlier: the COMDAT signatures of the
 * objects before e in the `ld.lld -r` (sorted); e's are added. The file is
 * left as it is when it has no such table or something this code does
 * not expect. */
static void trim_str_offsets(struct elf *e, struct strv *earlier)
{
	struct strv mine = {0};
	unsigned char *gone = discarded_sections(e, earlier, &mine);
	sorted_union(earlier, &mine);
	size_t so = find_section(e, ".debug_str_offsets"), rela = 0;
	uint32_t *to = NULL;
	struct str_visit sv = {{visit_str, NULL, 0, 0, 0}, e, 0, 8, 0, NULL, NULL};
	int any_gone = 0;
	for (size_t i = 1; gone && i < e->nsh; i++)
		any_gone |= gone[i];
	if (!any_gone || !so || e->sh[so].sh_type != SHT_PROGBITS || find_section(e, ".debug_macro"))
		goto done;
	for (size_t i = so + 1; i < e->nsh; i++)
		if (!strcmp(sec_name(e, i), ".debug_str_offsets"))
			goto done;
	unsigned char *sec = e->data + e->sh[so].sh_offset;
	size_t size = e->sh[so].sh_size;
	struct cur c = {sec, sec + size, 0};
	int offsz;
	if (enter_unit(&c, &offsz) < 0 || offsz != 4 || c.end != sec + size || rd(&c, 2) != 5 || (size - 8) % 4 ||
	    str_offsets_relocations(e, so, 8, &rela) < 0)
		goto done;
	sv.n = (size - 8) / 4;
	sv.used = xcalloc(sv.n + 1, 1);
	if (walk_kept_units(e, gone, &sv) < 0)
		goto done;
	to = xmalloc((sv.n + 1) * sizeof *to);
	uint32_t kept = 0;
	for (uint64_t k = 0; k < sv.n; k++)
		to[k] = sv.used[k] ? kept++ : UINT32_MAX;
	if (kept == sv.n)
		goto done;
	/* Renumber on a copy: the file stays as it is if the walk fails. */
	unsigned char *copy = xmalloc(e->len);
	memcpy(copy, e->data, e->len);
	unsigned char *orig = e->data;
	e->data = copy;
	sv.to = to;
	if (walk_kept_units(e, gone, &sv) < 0) {
		e->data = orig;
		free(copy);
		goto done;
	}
	free(orig);
	sec = e->data + e->sh[so].sh_offset;
	for (uint64_t k = 0; k < sv.n; k++)
		if (sv.used[k])
			memmove(sec + 8 + 4 * (uint64_t)to[k], sec + 8 + 4 * k, 4);
	uint32_t unit_len = 4 + 4 * kept;
	memcpy(sec, &unit_len, 4);
	e->sh[so].sh_size = 8 + 4 * (uint64_t)kept;
	store_shdr(e, so);
	if (rela) {
		unsigned char *rs = e->data + e->sh[rela].sh_offset;
		uint64_t out = 0;
		for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= e->sh[rela].sh_size; k += sizeof(Elf64_Rela)) {
			Elf64_Rela rel;
			memcpy(&rel, rs + k, sizeof rel);
			uint64_t x = (rel.r_offset - 8) / 4;
			if (x >= sv.n || !sv.used[x])
				continue;
			rel.r_offset = 8 + 4 * (uint64_t)to[x];
			memcpy(rs + out, &rel, sizeof rel);
			out += sizeof rel;
		}
		e->sh[rela].sh_size = out;
		store_shdr(e, rela);
	}
done:
	free(to);
	free(sv.used);
	free(gone);
	strv_free(&mine);
}

/* ---- a package's string offsets --------------------------------------- */

/* A DWARF 5 package index (.debug_cu_index or .debug_tu_index): per unit
 * (row), the offset and size of its contribution to each section. */
struct pkg_index {
	uint32_t cols, units;
	const unsigned char *ids; /* the column's section ids (DW_SECT_*) */
	unsigned char *off, *size; /* units x cols tables */
};

#define PKG_SECT_INFO 1
#define PKG_SECT_ABBREV 3
#define PKG_SECT_STR_OFFSETS 6

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Open index section name of e into *x (no section: no units). -1 if it is
 * malformed or not DWARF 5. */
static int pkg_open(struct elf *e, const char *name, struct pkg_index *x)
{
	memset(x, 0, sizeof *x);
	size_t si = find_section(e, name);
	if (!si)
		return 0;
	unsigned char *sec = e->data + e->sh[si].sh_offset;
	uint64_t size = e->sh[si].sh_size;
	if (e->sh[si].sh_type != SHT_PROGBITS || size < 16 || (get32(sec) & 0xffff) != 5)
		return -1;
	uint64_t cols = get32(sec + 4), units = get32(sec + 8), slots = get32(sec + 12);
	if (16 + slots * 12 + cols * 4 + 2 * units * cols * 4 > size)
		return -1;
	x->cols = (uint32_t)cols;
	x->units = (uint32_t)units;
	x->ids = sec + 16 + slots * 12;
	x->off = (unsigned char *)x->ids + cols * 4;
	x->size = x->off + units * cols * 4;
	return 0;
}

/* The column of section id in x, or -1. */
static int pkg_col(const struct pkg_index *x, uint32_t id)
{
	for (uint32_t k = 0; k < x->cols; k++)
		if (get32(x->ids + 4 * k) == id)
			return (int)k;
	return -1;
}

/* One input's string offsets table in the package (offsets include its
 * 8-byte header), with the entries its units use. */
struct pkg_table {
	uint32_t off, size, new_off, new_size;
	unsigned char *used;
	uint32_t *to;
};

static int cmp_table(const void *a, const void *b)
{
	const struct pkg_table *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Mark (to == NULL) or renumber the string indexes of every unit of x,
 * each in its own table of tabs. */
static int pkg_walk(struct elf *e, const struct pkg_index *x, struct pkg_table *tabs, size_t ntabs, int renumber)
{
	int ci = pkg_col(x, PKG_SECT_INFO), ca = pkg_col(x, PKG_SECT_ABBREV), cs = pkg_col(x, PKG_SECT_STR_OFFSETS);
	size_t info = find_section(e, ".debug_info.dwo"), ab = find_section(e, ".debug_abbrev.dwo");
	if (!x->units)
		return 0;
	if (ci < 0 || ca < 0 || cs < 0 || !info || !ab)
		return -1;
	struct abbrevs t = {~(uint64_t)0, NULL, 0, 0, NULL, 0, 0};
	int r = 0;
	for (uint32_t u = 0; u < x->units && r == 0; u++) {
		uint32_t at = (u * x->cols + (uint32_t)cs) * 4, so = get32(x->off + at);
		struct pkg_table key = {so, 0, 0, 0, NULL, NULL};
		struct pkg_table *tab = bsearch(&key, tabs, ntabs, sizeof *tabs, cmp_table);
		if (!tab)
			return -1;
		struct str_visit sv = {{visit_str, NULL, 0, 0, 0}, e, info, 0, (tab->size - 8) / 4, tab->used,
				       renumber ? tab->to : NULL};
		uint64_t from = get32(x->off + (u * x->cols + (uint32_t)ci) * 4);
		uint64_t len = get32(x->size + (u * x->cols + (uint32_t)ci) * 4);
		uint64_t abase = get32(x->off + (u * x->cols + (uint32_t)ca) * 4);
		r = walk_units(e, info, from, from + len, ab, abase, 0, &t, &sv.v);
	}
	free(t.a);
	free(t.spec);
	return r;
}

/* The tables the rows of x use, added to *tabs (by offset, once each). */
static int pkg_tables(const struct elf *e, const struct pkg_index *x, size_t so, struct pkg_table **tabs, size_t *n)
{
	int cs = pkg_col(x, PKG_SECT_STR_OFFSETS);
	if (x->units && cs < 0)
		return -1;
	for (uint32_t u = 0; u < x->units; u++) {
		uint32_t off = get32(x->off + (u * x->cols + (uint32_t)cs) * 4);
		uint32_t size = get32(x->size + (u * x->cols + (uint32_t)cs) * 4);
		size_t k = 0;
		while (k < *n && (*tabs)[k].off != off)
			k++;
		if (k < *n) {
			if ((*tabs)[k].size != size)
				return -1;
			continue;
		}
		const unsigned char *p = e->data + e->sh[so].sh_offset + off;
		if ((uint64_t)off + size > e->sh[so].sh_size || size < 8 || (size - 8) % 4 || get32(p) != size - 4 ||
		    (get32(p + 4) & 0xffff) != 5)
			return -1;
		*tabs = xrealloc(*tabs, (*n + 1) * sizeof **tabs);
		(*tabs)[(*n)++] = (struct pkg_table){off, size, 0, 0, xcalloc((size - 8) / 4 + 1, 1), NULL};
	}
	return 0;
}

/* Give every row of x its table's new place. */
static void pkg_update(struct pkg_index *x, const struct pkg_table *tabs, size_t ntabs)
{
	int cs = pkg_col(x, PKG_SECT_STR_OFFSETS);
	for (uint32_t u = 0; u < x->units; u++) {
		uint32_t at = (u * x->cols + (uint32_t)cs) * 4;
		struct pkg_table key = {get32(x->off + at), 0, 0, 0, NULL, NULL};
		const struct pkg_table *tab = bsearch(&key, tabs, ntabs, sizeof *tabs, cmp_table);
		memcpy(x->off + at, &tab->new_off, 4);
		memcpy(x->size + at, &tab->new_size, 4);
	}
}

/* llvm-dwp keeps each input's string offsets table whole, but only the
 * first input's copy of each type unit: the tables of later inputs list
 * the strings of type units the package no longer has (the C++ sample's
 * 8 partitions: 31 KB of offsets). Drop from each table the entries none
 * of the units that use it reads, renumber their string indexes, and move
 * the tables together in the index. The package is left as it is when it
 * is not one this code expects (DWARF 5, tables that tile the section,
 * LLVM's forms). Returns 1 if it changed. */
static int trim_package(struct elf *e)
{
	size_t so = find_section(e, ".debug_str_offsets.dwo");
	struct pkg_index cu, tu;
	struct pkg_table *tabs = NULL;
	size_t n = 0;
	unsigned char *copy = NULL;
	int changed = 0;
	if (!so || e->sh[so].sh_type != SHT_PROGBITS || pkg_open(e, ".debug_cu_index", &cu) < 0 ||
	    pkg_open(e, ".debug_tu_index", &tu) < 0 || !cu.units || pkg_tables(e, &cu, so, &tabs, &n) < 0 ||
	    pkg_tables(e, &tu, so, &tabs, &n) < 0)
		goto done;
	qsort(tabs, n, sizeof *tabs, cmp_table);
	uint64_t end = 0;
	for (size_t k = 0; k < n; k++) {
		if (tabs[k].off != end)
			goto done; /* not tiled: something else is in the section */
		end += tabs[k].size;
	}
	if (end != e->sh[so].sh_size || pkg_walk(e, &cu, tabs, n, 0) < 0 || pkg_walk(e, &tu, tabs, n, 0) < 0)
		goto done;
	uint32_t out = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t entries = (tabs[k].size - 8) / 4, kept = 0;
		tabs[k].to = xmalloc((entries + 1) * sizeof *tabs[k].to);
		for (uint32_t i = 0; i < entries; i++)
			tabs[k].to[i] = tabs[k].used[i] ? kept++ : UINT32_MAX;
		tabs[k].new_off = out;
		tabs[k].new_size = 8 + 4 * kept;
		out += tabs[k].new_size;
	}
	if (out == e->sh[so].sh_size)
		goto done;
	/* Renumber on a copy: the package stays as it is if a walk fails. */
	copy = xmalloc(e->len);
	memcpy(copy, e->data, e->len);
	unsigned char *orig = e->data;
	e->data = copy;
	pkg_open(e, ".debug_cu_index", &cu);
	pkg_open(e, ".debug_tu_index", &tu);
	if (pkg_walk(e, &cu, tabs, n, 1) < 0 || pkg_walk(e, &tu, tabs, n, 1) < 0) {
		e->data = orig;
		goto done;
	}
	copy = orig;
	/* Tables only move down, in order: compact in place. */
	unsigned char *sec = e->data + e->sh[so].sh_offset;
	for (size_t k = 0; k < n; k++) {
		unsigned char *from = sec + tabs[k].off, *to = sec + tabs[k].new_off;
		uint32_t len = tabs[k].new_size - 4, entries = (tabs[k].size - 8) / 4;
		memmove(to, from, 8);
		memcpy(to, &len, 4);
		for (uint32_t i = 0; i < entries; i++)
			if (tabs[k].used[i])
				memmove(to + 8 + 4 * (uint64_t)tabs[k].to[i], from + 8 + 4 * (uint64_t)i, 4);
	}
	e->sh[so].sh_size = out;
	store_shdr(e, so);
	pkg_update(&cu, tabs, n);
	pkg_update(&tu, tabs, n);
	changed = 1;
done:
	for (size_t k = 0; k < n; k++) {
		free(tabs[k].used);
		free(tabs[k].to);
	}
	free(tabs);
	free(copy);
	return changed;
}

int debugfix_package(const char *path)
{
	char *data;
	size_t len;
	if (mtpc_read_file(path, &data, &len) < 0) {
		mtpc_error("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	struct elf e;
	int r = 0;
	if (elf_open(&e, (unsigned char *)data, len) == 0) {
		if (trim_package(&e) && mtpc_write_file(path, (char *)e.data, e.len, MTPC_WRITE_IF_CHANGED) < 0) {
			mtpc_error("cannot write %s: %s", path, strerror(errno));
			r = -1;
		}
		data = (char *)e.data;
		free(e.sh);
	}
	free(data);
	return r;
}

/* ---- GNU name lists of the module's earlier partitions ------------------ */

/* GNU pubnames/pubtypes entry flags (DWARF 4 proposal used by gdb): bits
 * 4-6 the kind of the name. */
#define GIEK_TYPE 1
#define GIEK_SHIFT 4
#define GIEK_MASK 7

/* Whether the entry (flags, name) may be dropped from a name list when an
 * earlier partition of the module lists it: every type and namespace
 * (kind TYPE) is the same entity in each partition of one translation
 * unit, and a reader needs one unit that describes it. Functions and
 * variables are not: a function inlined in several partitions has inlined
 * instances in each, and gdb, through the .gdb_index a linker builds from
 * these lists, looks for them only in the units the list names. Without
 * that index (names_once) nothing reads the lists, and every name goes
 * once per module, as in the unsplit module's one unit. */
static int pub_entry_shared(unsigned flags, int types_section, int names_once)
{
	return names_once || types_section || ((flags >> GIEK_SHIFT) & GIEK_MASK) == GIEK_TYPE;
}

/* The sorted-list key of an entry: its flag byte, then its name. */
static char *pub_key(unsigned flags, const char *name)
{
	return xasprintf("%02x%s", flags & 0xff, name);
}

/* The relocations applied to section si, which must all be at one of the
 * offsets at[0 .. n) (set headers' unit offsets): their rela section in
 * *rela (0: none). -1 if something else relocates or points into si. */
static int pub_relocations(const struct elf *e, size_t si, const uint64_t *at, size_t n, size_t *rela)
{
	*rela = 0;
	if (movable(e, si) < 0)
		return -1;
	for (size_t r = 1; r < e->nsh; r++) {
		const Elf64_Shdr *rs = &e->sh[r];
		if (rs->sh_type != SHT_RELA || rs->sh_info != si)
			continue;
		if (*rela)
			return -1;
		*rela = r;
		for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= rs->sh_size; k += sizeof(Elf64_Rela)) {
			Elf64_Rela rel;
			memcpy(&rel, e->data + rs->sh_offset + k, sizeof rel);
			size_t j = 0;
			while (j < n && at[j] != rel.r_offset)
				j++;
			if (j == n)
				return -1;
		}
	}
	return 0;
}

/* Drop from e's GNU name list `name` (.debug_gnu_pubtypes, or the type and
 * namespace entries of .debug_gnu_pubnames; all entries with names_once)
 * the entries an earlier object of the module lists (earlier, sorted); add
 * e's own to *mine. The list is rewritten in place, shorter, and the
 * relocations of its set headers follow them. A list this code does not
 * expect is left as it is. */
static void dedup_pub_names(struct elf *e, const char *name, const struct strv *earlier, int names_once,
			    struct strv *mine)
{
	size_t si = find_section(e, name);
	if (!si || e->sh[si].sh_type != SHT_PROGBITS)
		return;
	for (size_t i = si + 1; i < e->nsh; i++)
		if (!strcmp(sec_name(e, i), name))
			return;
	int types = !strcmp(name, ".debug_gnu_pubtypes");
	unsigned char *sec = e->data + e->sh[si].sh_offset;
	size_t size = e->sh[si].sh_size;
	struct buf out = {0};
	uint64_t *at = NULL, *to = NULL; /* each set's unit offset field, before and after */
	size_t nsets = 0, rela;
	struct strv keys = {0};
	struct cur c = {sec, sec + size, 0};
	while (c.p < c.end) {
		const unsigned char *set = c.p;
		struct cur u = c;
		int offsz;
		if (enter_unit(&u, &offsz) < 0 || offsz != 4 || rd(&u, 2) != 2)
			goto done;
		skip(&u, 8); /* unit offset, unit length */
		if (u.bad)
			goto done;
		at = xrealloc(at, (nsets + 1) * sizeof *at);
		to = xrealloc(to, (nsets + 1) * sizeof *to);
		at[nsets] = (uint64_t)(set - sec) + 6;
		to[nsets++] = out.len + 6;
		size_t head = out.len;
		buf_addn(&out, (const char *)set, 14);
		for (;;) {
			const unsigned char *entry = u.p;
			if (rd(&u, 4) == 0)
				break;
			unsigned flags = (unsigned)rd(&u, 1);
			const char *s = (const char *)u.p;
			while (u.p < u.end && *u.p)
				u.p++;
			skip(&u, 1);
			if (u.bad)
				goto done;
			char *key = pub_key(flags, s);
			int shared = pub_entry_shared(flags, types, names_once);
			if (!shared || !strv_has(earlier, key))
				buf_addn(&out, (const char *)entry, (size_t)(u.p - entry));
			if (shared)
				strv_add(&keys, key);
			free(key);
		}
		if (u.bad || u.p != u.end)
			goto done;
		buf_addn(&out, "\0\0\0\0", 4);
		uint32_t len = (uint32_t)(out.len - head - 4);
		memcpy(out.s + head, &len, 4);
		c.p = u.end;
	}
	if (out.len == size || pub_relocations(e, si, at, nsets, &rela) < 0)
		goto done;
	memcpy(sec, out.s, out.len);
	e->sh[si].sh_size = out.len;
	store_shdr(e, si);
	for (uint64_t k = 0; rela && k + sizeof(Elf64_Rela) <= e->sh[rela].sh_size; k += sizeof(Elf64_Rela)) {
		unsigned char *p = e->data + e->sh[rela].sh_offset + k;
		Elf64_Rela rel;
		memcpy(&rel, p, sizeof rel);
		for (size_t j = 0; j < nsets; j++)
			if (at[j] == rel.r_offset) {
				rel.r_offset = to[j];
				break;
			}
		memcpy(p, &rel, sizeof rel);
	}
done:
	for (size_t i = 0; i < keys.n; i++)
		strv_add(mine, keys.v[i]);
	strv_free(&keys);
	buf_free(&out);
	free(at);
	free(to);
}

/* dedup_pub_names for both GNU name lists, then e's entries join earlier. */
static void dedup_pub(struct elf *e, struct debugfix_earlier *earlier)
{
	struct strv mine = {0};
	dedup_pub_names(e, ".debug_gnu_pubtypes", &earlier->names, earlier->names_once, &mine);
	dedup_pub_names(e, ".debug_gnu_pubnames", &earlier->names, earlier->names_once, &mine);
	sorted_union(&earlier->names, &mine);
	strv_free(&mine);
}

void debugfix_earlier_free(struct debugfix_earlier *earlier)
{
	strv_free(&earlier->groups);
	strv_free(&earlier->names);
}

int debugfix_object(char **data, size_t *len, const char *checksums, const struct line_map *lines,
		    struct debugfix_earlier *earlier, const char **why)
{
	struct elf e;
	*why = NULL;
	if (elf_open(&e, (unsigned char *)*data, *len) < 0) {
		if (lines && lines->n) {
			*why = "it is not a 64-bit little-endian ELF file";
			return -1;
		}
		if (checksums && *checksums)
			patch_checksums((unsigned char *)*data, *len, checksums);
		return 0;
	}
	/* Checksums only in the line tables' file entries, where clang writes
	 * them (a placeholder's 16 bytes could occur anywhere else). */
	for (size_t i = 1; checksums && *checksums && i < e.nsh; i++) {
		const char *name = sec_name(&e, i);
		if ((!strcmp(name, ".debug_line") || !strcmp(name, ".debug_line.dwo")) &&
		    e.sh[i].sh_type != SHT_NOBITS)
			patch_checksums(e.data + e.sh[i].sh_offset, e.sh[i].sh_size, checksums);
	}
	int r = lines && lines->n ? fix_lines(&e, lines) : 0;
	if (r == 0 && earlier) {
		trim_str_offsets(&e, &earlier->groups);
		dedup_pub(&e, earlier);
	}
	*data = (char *)e.data;
	*len = e.len;
	*why = e.why;
	free(e.sh);
	return r;
}

int debugfix_copy(const char *from, const char *to, const char *checksums, const struct line_map *lines,
		  struct debugfix_earlier *earlier, int only_if_fixed)
{
	char *data, *orig = NULL;
	size_t len, orig_len = 0;
	const char *why;
	if (mtpc_read_file(from, &data, &len) < 0) {
		mtpc_error("cannot read %s: %s", from, strerror(errno));
		return -1;
	}
	if (only_if_fixed) {
		orig = xmalloc(len + 1);
		memcpy(orig, data, len);
		orig_len = len;
	}
	if (debugfix_object(&data, &len, checksums, lines, earlier, &why) < 0) {
		mtpc_error("%s: cannot put the real line numbers back: %s", from, why);
		free(data);
		free(orig);
		return -1;
	}
	int r = 1;
	if (only_if_fixed && len == orig_len && !memcmp(data, orig, len))
		r = 0;
	else if (mtpc_write_file(to, data, len, MTPC_WRITE_IF_CHANGED) < 0) {
		mtpc_error("cannot write %s: %s", to, strerror(errno));
		r = -1;
	}
	free(data);
	free(orig);
	return r;
}

/* The offsets of the flag words of the SHT_GROUP sections of e, in section
 * order (heap array, *n of them). */
static size_t *group_flag_offsets(const struct elf *e, size_t *n)
{
	size_t *off = xmalloc((e->nsh + 1) * sizeof *off);
	*n = 0;
	for (size_t i = 1; i < e->nsh; i++)
		if (e->sh[i].sh_type == SHT_GROUP && e->sh[i].sh_size >= 4)
			off[(*n)++] = e->sh[i].sh_offset;
	return off;
}

int debugfix_group_flags(const char *from, const char *to)
{
	char *a = NULL, *b = NULL;
	size_t alen, blen, na = 0, nb = 0, *ga = NULL, *gb = NULL;
	struct elf ea = {0}, eb = {0};
	int r = -1, changed = 0;
	if (mtpc_read_file(from, &a, &alen) < 0 || mtpc_read_file(to, &b, &blen) < 0) {
		mtpc_warn("cannot read %s: %s", a ? to : from, strerror(errno));
		goto done;
	}
	if (elf_open(&ea, (unsigned char *)a, alen) < 0 || elf_open(&eb, (unsigned char *)b, blen) < 0) {
		mtpc_warn("%s: not a 64-bit little-endian ELF file", ea.sh ? to : from);
		goto done;
	}
	ga = group_flag_offsets(&ea, &na);
	gb = group_flag_offsets(&eb, &nb);
	if (na != nb) {
		mtpc_warn("%s: %zu section groups, %zu in %s", to, nb, na, from);
		goto done;
	}
	for (size_t i = 0; i < na; i++)
		if (memcmp(b + gb[i], a + ga[i], 4)) {
			memcpy(b + gb[i], a + ga[i], 4);
			changed = 1;
		}
	r = 0;
	if (changed && mtpc_write_file(to, b, blen, 0) < 0) {
		mtpc_warn("cannot write %s: %s", to, strerror(errno));
		r = -1;
	}
done:
	free(ga);
	free(gb);
	free(ea.sh);
	free(eb.sh);
	free(a);
	free(b);
	return r;
}

char *debugfix_text(const char *text, const struct line_map *lines)
{
	struct buf b = {0};
	const char *p = text;
	while (*p) {
		/* ":LINE" of ten digits (virtual lines are 2^30 and up) */
		const char *q = strchr(p, ':');
		if (!q) {
			buf_add(&b, p);
			break;
		}
		size_t digits = strspn(q + 1, "0123456789");
		buf_addn(&b, p, (size_t)(q + 1 - p));
		p = q + 1;
		if (digits == 10 && lines) {
			long long real = debugfix_real_line(lines, strtoull(p, NULL, 10));
			if (real >= 0) {
				buf_printf(&b, "%lld", real);
				p += digits;
			}
		}
	}
	return b.s ? b.s : xstrdup("");
}
