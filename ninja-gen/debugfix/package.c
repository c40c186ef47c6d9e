/* package.c: a DWARF 5 package (.dwp) without the string offsets no unit
 * of it reads. llvm-dwp keeps each input's string offsets table whole, but
 * only the first input's copy of each type unit: the tables of later
 * inputs list the strings of type units the package no longer has (the C++
 * sample's 8 partitions: 31 KB of offsets). This file owns reading the
 * package's unit indexes (.debug_cu_index, .debug_tu_index), trimming and
 * moving together the tables they point at, and debugfix_package. */
#include "debugfix_int.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	size_t si = elf_find_section(e, name);
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
	size_t info = elf_find_section(e, ".debug_info.dwo"), ab = elf_find_section(e, ".debug_abbrev.dwo");
	if (!x->units)
		return 0;
	if (ci < 0 || ca < 0 || cs < 0 || !info || !ab)
		return -1;
	struct abbrevs t = DW_ABBREVS_NONE;
	int r = 0;
	for (uint32_t u = 0; u < x->units && r == 0; u++) {
		uint32_t at = (u * x->cols + (uint32_t)cs) * 4, so = get32(x->off + at);
		struct pkg_table key = {so, 0, 0, 0, NULL, NULL};
		struct pkg_table *tab = bsearch(&key, tabs, ntabs, sizeof *tabs, cmp_table);
		if (!tab)
			return -1;
		struct str_visit sv = {{str_visit_attr, NULL, 0, 0, 0}, e, info, 0, (tab->size - 8) / 4, tab->used,
				       renumber ? tab->to : NULL};
		uint64_t from = get32(x->off + (u * x->cols + (uint32_t)ci) * 4);
		uint64_t len = get32(x->size + (u * x->cols + (uint32_t)ci) * 4);
		uint64_t abase = get32(x->off + (u * x->cols + (uint32_t)ca) * 4);
		r = dw_walk_units(e, info, from, from + len, ab, abase, 0, &t, &sv.v);
	}
	dw_abbrevs_free(&t);
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

/* Drop from each table the entries none of the units that use it reads,
 * renumber their string indexes, and move the tables together in the
 * index. The package is left as it is when it is not one this code expects
 * (DWARF 5, tables that tile the section, LLVM's forms). Returns 1 if it
 * changed. */
static int trim_package(struct elf *e)
{
	size_t so = elf_find_section(e, ".debug_str_offsets.dwo");
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
	elf_store_shdr(e, so);
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
	if (elf_read_file(path, &data, &len) < 0)
		return -1;
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
