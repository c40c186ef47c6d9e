/* dwarf.c: reading DWARF 2 to 5 (32- and 64-bit DWARF) as far as this code
 * needs to find and patch attribute values in place: LEB128 writing (the
 * cursor that reads is inline in debugfix_int.h), unit headers, the size of
 * every form, abbreviation tables, and one walk over every attribute of
 * every DIE of a section's units, which calls a visit (struct visit) at
 * each. Nothing here knows which attributes matter: lines.c and
 * str_offsets.c bring the visits. */
#include "debugfix_int.h"
#include "util.h"

#include <stdlib.h>

void dw_put_sleb(struct buf *b, int64_t v)
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

int dw_put_uleb_fixed(unsigned char *p, int n, uint64_t v)
{
	for (int i = 0; i < n; i++) {
		p[i] = (unsigned char)((v & 0x7f) | (i + 1 < n ? 0x80 : 0));
		v >>= 7;
	}
	return v ? -1 : 0;
}

int dw_enter_unit(struct cur *c, int *offsz)
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

int dw_skip_form(struct cur *c, uint64_t form, int offsz, int addrsz, int version)
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
	case DW_FORM_indirect: return dw_skip_form(c, uleb(c), offsz, addrsz, version);
	default: return -1;
	}
}

/* ---- abbreviations ---------------------------------------------------------- */

int dw_load_abbrevs(struct abbrevs *t, const unsigned char *sec, size_t size, uint64_t off)
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

const struct abbrev *dw_find_abbrev(const struct abbrevs *t, uint64_t code)
{
	if (code >= 1 && code <= t->n && t->a[code - 1].code == code)
		return &t->a[code - 1]; /* LLVM numbers them 1, 2, ... */
	for (size_t i = 0; i < t->n; i++)
		if (t->a[i].code == code)
			return &t->a[i];
	return NULL;
}

void dw_abbrevs_free(struct abbrevs *t)
{
	free(t->a);
	free(t->spec);
}

/* ---- the walk over the DIEs -------------------------------------------------- */

int dw_walk_units(struct elf *e, size_t si, size_t from, size_t to, size_t abbrev_si, uint64_t abbrev_base,
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
		if (dw_enter_unit(&c, &offsz) < 0)
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
		    dw_load_abbrevs(t, ab, absize, abbrev_base + elf_relocated(e, si, abbr_at, abbr)) < 0)
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
			const struct abbrev *a = dw_find_abbrev(t, code);
			if (!a)
				return -1;
			for (size_t k = 0; k < a->n; k++) {
				const uint64_t *spec = t->spec[a->first + k];
				int r = v->attr(v, &c, spec);
				if (r == 1)
					r = dw_skip_form(&c, spec[1], offsz, addrsz, version);
				if (r < 0 || c.bad)
					return -1;
			}
		}
		off = (size_t)(end - sec);
	}
	return 0;
}

int dw_walk_dies(struct elf *e, size_t si, size_t abbrev_si, int types, struct abbrevs *t, struct visit *v)
{
	return dw_walk_units(e, si, 0, e->sh[si].sh_size, abbrev_si, 0, types, t, v);
}
