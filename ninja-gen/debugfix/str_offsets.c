/* str_offsets.c: an object's DWARF 5 string offsets table without the
 * entries that only the type units the link discards use. clang gives every
 * C++ type with -fdebug-types-section a type unit in a COMDAT group, and
 * the table of each object lists the strings of all its units: after the
 * merge's `ld.lld -r` keeps the first group of each signature, the table of
 * every later partition still lists the strings of the type units it lost
 * (the C++ sample: 31 KB of offsets where 14 KB are used). This file owns
 * the visit that marks and renumbers string indexes (package.c uses it
 * too), and the table's rewrite. */
#include "debugfix_int.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int str_visit_attr(struct visit *v, struct cur *c, const uint64_t spec[3])
{
	struct str_visit *s = (struct str_visit *)v;
	int width;
	if (spec[0] == DW_AT_str_offsets_base) {
		if (spec[1] != DW_FORM_sec_offset)
			return -1;
		uint64_t at = (uint64_t)(c->p - v->sec), stored = rd(c, v->offsz);
		return elf_relocated(s->e, s->si, at, stored) == s->base ? 0 : -1;
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
		return dw_put_uleb_fixed(at, (int)(c->p - at), s->to[x]);
	for (int i = 0; i < width; i++)
		at[i] = (unsigned char)(s->to[x] >> (8 * i));
	return 0;
}

/* Walk every .debug_info section of e that the link keeps with sv. */
static int walk_kept_units(struct elf *e, const unsigned char *gone, struct str_visit *sv)
{
	size_t ab = elf_find_section(e, ".debug_abbrev");
	struct abbrevs t = DW_ABBREVS_NONE;
	int r = ab ? 0 : -1;
	for (size_t i = 1; i < e->nsh && r == 0; i++)
		if (!gone[i] && e->sh[i].sh_type == SHT_PROGBITS && !strcmp(elf_section_name(e, i), ".debug_info")) {
			sv->si = i;
			r = dw_walk_dies(e, i, ab, 0, &t, &sv->v);
		}
	dw_abbrevs_free(&t);
	return r;
}

/* Check the relocations that involve the string offsets section so: the
 * ones applied to it relocate whole entries (the rela section: *rela),
 * the ones against it are unit bases (addend base). */
static int str_offsets_relocations(const struct elf *e, size_t so, uint64_t base, size_t *rela)
{
	*rela = 0;
	if (elf_movable(e, so) < 0)
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
		for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= rs->sh_size; k += sizeof(Elf64_Rela)) {
			Elf64_Rela rel;
			memcpy(&rel, e->data + rs->sh_offset + k, sizeof rel);
			if (rs->sh_info == so && (rel.r_offset < base || (rel.r_offset - base) % 4))
				return -1;
			Elf64_Sym sym = elf_rela_symbol(e, &e->sh[rs->sh_link], &rel);
			if (sym.st_shndx == so && (uint64_t)rel.r_addend != base)
				return -1;
		}
	}
	return 0;
}

/* Drop from e's string offsets table (DWARF 5, one table per object) the
 * entries only units in discarded COMDAT groups use (gone: a flag per
 * section, discarded_sections), and renumber the string indexes of the
 * kept units. The file is left as it is when it has no such table or
 * something this code does not expect. */
void str_offsets_trim(struct elf *e, const unsigned char *gone)
{
	size_t so = elf_find_section(e, ".debug_str_offsets"), rela = 0;
	uint32_t *to = NULL;
	struct str_visit sv = {{str_visit_attr, NULL, 0, 0, 0}, e, 0, 8, 0, NULL, NULL};
	int any_gone = 0;
	for (size_t i = 1; gone && i < e->nsh; i++)
		any_gone |= gone[i];
	if (!any_gone || !so || e->sh[so].sh_type != SHT_PROGBITS || elf_find_section(e, ".debug_macro"))
		goto done;
	for (size_t i = so + 1; i < e->nsh; i++)
		if (!strcmp(elf_section_name(e, i), ".debug_str_offsets"))
			goto done;
	unsigned char *sec = e->data + e->sh[so].sh_offset;
	size_t size = e->sh[so].sh_size;
	struct cur c = {sec, sec + size, 0};
	int offsz;
	if (dw_enter_unit(&c, &offsz) < 0 || offsz != 4 || c.end != sec + size || rd(&c, 2) != 5 ||
	    (size - 8) % 4 || str_offsets_relocations(e, so, 8, &rela) < 0)
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
	elf_store_shdr(e, so);
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
		elf_store_shdr(e, rela);
	}
done:
	free(to);
	free(sv.used);
}
