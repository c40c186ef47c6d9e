/* debugfix_int.h: what the files of ninja-gen/debugfix/ share, for them
 * only (the library's interface is debugfix.h). Each file owns one
 * concern and says so in its first comment:
 *
 *   elf.c          the ELF file: sections, symbols, relocations, a section
 *                  rewritten at the end of the file, COMDAT group flags,
 *                  exported definitions
 *   dwarf.c        reading DWARF: unit headers, forms, abbreviations, the
 *                  walk over every attribute of every DIE
 *   lines.c        the real lines and checksums: the map, the line table
 *                  headers, the line attributes, the line programs
 *   discarded.c    the sections the merge's link discards (later copies
 *                  of a COMDAT group), the debug info into them marked dead
 *   str_offsets.c  a DWARF 5 string offsets table without the entries of
 *                  the discarded type units
 *   names.c        the GNU name lists without an earlier object's entries
 *   package.c      a .dwp's string offsets tables without unread entries
 *   dwo_merge.c    a plain compile's partitions' .dwo files merged into one
 *   sorted.c       the sorted sets of strings that struct debugfix_earlier
 *                  carries from one object to the next
 *   debugfix.c     the entry points: one object, one file, and what the
 *                  module's earlier objects leave redundant
 *
 * Files read the DWARF through one bounded cursor (struct cur), and the
 * ELF through one struct elf. DWARF 2 to 5, 32- and 64-bit DWARF. */
#ifndef MTPC_DEBUGFIX_INT_H
#define MTPC_DEBUGFIX_INT_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "debugfix.h"

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

/* ---- the ELF file (elf.c) ----------------------------------------------- */

/* A 64-bit little-endian ELF file in memory, its section headers checked
 * to lie in it (but SHT_NOBITS ones). data may be reallocated by what
 * rewrites the file; the section headers there are stored back one by one
 * (elf_store_shdr). */
struct elf {
	unsigned char *data;
	size_t len;
	Elf64_Shdr *sh; /* copies of the section headers */
	size_t nsh;
	size_t names_off, names_size; /* the section name string table */
	const char *why; /* why the file could not be fixed (a static string) */
};

/* Read the file at path into *data (heap) and *len: 0, or -1 after an
 * error message naming it. */
int elf_read_file(const char *path, char **data, size_t *len);
/* Open the file in data[0..len) (not copied; e->sh is heap, freed by the
 * caller). -1 if it is not such a file. */
int elf_open(struct elf *e, unsigned char *data, size_t len);
/* The name of section i ("" if unreadable), the first section so named
 * (0: none). */
const char *elf_section_name(const struct elf *e, size_t i);
size_t elf_find_section(const struct elf *e, const char *name);
/* Write e->sh[i] back into the file's section header table. */
void elf_store_shdr(struct elf *e, size_t i);
/* The string at off of string table section strtab, or NULL if it is not
 * one (outside the file or the section, or not terminated there). */
const char *elf_string(const struct elf *e, size_t strtab, uint64_t off);
/* The symbol relocation rel (of a rela section linked to symtab) refers
 * to; all zeros if the index is outside the table. */
Elf64_Sym elf_rela_symbol(const struct elf *e, const Elf64_Shdr *symtab, const Elf64_Rela *rel);
/* The value a relocated field at off of section target holds after
 * relocation against a section symbol (what an unlinked object means by
 * it), or the stored value when nothing relocates it. */
uint64_t elf_relocated(const struct elf *e, size_t target, uint64_t off, uint64_t stored);
/* Whether section si can be rewritten with its contents moving: -1 if REL
 * relocations (addends in place) apply to it or a symbol other than its
 * section symbol labels a place in it. */
int elf_movable(const struct elf *e, size_t si);

/* Where bytes of a section went in its rewritten copy: old..old+len is now
 * at new.. (the bytes copied as they were). */
struct moved {
	uint64_t old, new, len;
};

struct moves {
	struct moved *m;
	size_t n, cap;
	uint64_t old_size, new_size;
};

/* Record that old..old+len went to new.. (in increasing order of both). */
void moves_add(struct moves *mv, uint64_t old, uint64_t new, uint64_t len);
/* The new offset of old offset x, or -1 if that byte was not kept. */
long long moves_to(const struct moves *mv, uint64_t x);
/* Make section si contents[0..len), placed at the end of the file, with
 * mv saying where its old bytes went: the offsets of the relocations
 * applied to it, and the addends of relocations against its section symbol
 * (DW_AT_stmt_list), follow them. -1 if one points at a byte not kept (the
 * file is then half done: an error). */
int elf_rewrite_section(struct elf *e, size_t si, const char *contents, size_t len, const struct moves *mv);

/* ---- reading DWARF (dwarf.c) --------------------------------------------- */

/* A bounded reader: reading past end sets bad and yields zeros. The
 * readers are inline: every walk calls them for every byte or field. */
struct cur {
	const unsigned char *p, *end;
	int bad;
};

/* n bytes, little-endian. */
static inline uint64_t rd(struct cur *c, int n)
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

static inline uint64_t uleb(struct cur *c)
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

static inline int64_t sleb(struct cur *c)
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

static inline void skip(struct cur *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = 1;
		c->p = c->end;
	} else {
		c->p += n;
	}
}

void dw_put_sleb(struct buf *b, int64_t v);
/* Write v as an unsigned LEB128 of exactly n bytes (padded); -1 if it does
 * not fit. */
int dw_put_uleb_fixed(unsigned char *p, int n, uint64_t v);
/* A unit's initial length (32- or 64-bit DWARF): sets *offsz and limits c
 * to the unit. Returns -1 if it does not fit. */
int dw_enter_unit(struct cur *c, int *offsz);
/* Skip one attribute value of the given form; -1 for a form we do not know. */
int dw_skip_form(struct cur *c, uint64_t form, int offsz, int addrsz, int version);

/* The abbreviation table last read, kept while the units read use it. */
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

#define DW_ABBREVS_NONE {~(uint64_t)0, NULL, 0, 0, NULL, 0, 0}
void dw_abbrevs_free(struct abbrevs *t);
/* Load the table at off of the abbreviation section sec[0..size) into t
 * (nothing to do when t holds it already); -1 if it cannot be read. */
int dw_load_abbrevs(struct abbrevs *t, const unsigned char *sec, size_t size, uint64_t off);
/* The abbreviation of t with this code, or NULL. */
const struct abbrev *dw_find_abbrev(const struct abbrevs *t, uint64_t code);

/* What dw_walk_units does at each attribute: attr is called with c at the
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
 * (index si; types: the latter before DWARF 5), with the abbreviation
 * offsets of their headers relative to abbrev_base (a package's per-unit
 * contribution; 0 elsewhere). */
int dw_walk_units(struct elf *e, size_t si, size_t from, size_t to, size_t abbrev_si, uint64_t abbrev_base,
		  int types, struct abbrevs *t, struct visit *v);
/* dw_walk_units over the whole section si. */
int dw_walk_dies(struct elf *e, size_t si, size_t abbrev_si, int types, struct abbrevs *t, struct visit *v);

/* ---- real lines and checksums (lines.c) ---------------------------------- */

/* Replace every placeholder MD5 of checksums ("PLACEHOLDER REAL" hex
 * lines) by its real one in data[0..len). */
void lines_patch_checksums(unsigned char *data, size_t len, const char *checksums);
/* The same in e's line tables only, where clang writes them. */
void lines_fix_checksums(struct elf *e, const char *checksums);
/* Real lines into e's line attributes and line programs; -1 with e->why
 * set if a virtual line cannot be put back. */
int lines_fix(struct elf *e, const struct line_map *map);

/* ---- what the link discards (discarded.c) --------------------------------- */

/* The sections `ld.lld -r` discards from e: the members of each COMDAT
 * group whose signature an earlier input has (earlier, sorted: the first
 * group of a signature wins). e's own COMDAT signatures go to *mine.
 * Returns a flag per section (heap), or NULL if a group cannot be read. */
unsigned char *discarded_sections(const struct elf *e, const struct strv *earlier, struct strv *mine);
/* Mark dead every address in e's debug sections that a relocation puts
 * into a section of gone (against a local symbol, with an absolute type):
 * the tombstone in place, the relocation removed. Returns how many. */
int tombstones(struct elf *e, const unsigned char *gone);

/* ---- string offsets (str_offsets.c) --------------------------------------- */

/* The visit that marks (to == NULL) or renumbers (to[old]) the string
 * indexes of the units, after checking that each unit's string offsets
 * start at base (package.c walks a package's units with it too). */
struct str_visit {
	struct visit v;
	const struct elf *e;
	size_t si;             /* the section walked */
	uint64_t base, n;      /* DW_AT_str_offsets_base of every unit; entries */
	unsigned char *used;   /* per entry */
	const uint32_t *to;    /* the new index of each used entry */
};

int str_visit_attr(struct visit *v, struct cur *c, const uint64_t spec[3]);
/* Drop from e's string offsets table the entries only units in the
 * discarded sections gone (discarded_sections) use. */
void str_offsets_trim(struct elf *e, const unsigned char *gone);

/* ---- GNU name lists (names.c) --------------------------------------------- */

/* Drop from e's GNU name lists the entries earlier->names has; e's own
 * join it. */
void names_dedup(struct elf *e, struct debugfix_earlier *earlier);

/* ---- sorted sets of strings (sorted.c) ------------------------------------ */

/* Whether sorted strv sv holds s. */
int sorted_has(const struct strv *sv, const char *s);
/* Add the strings of more to the sorted set *sorted, which stays sorted
 * and without duplicates. */
void sorted_union(struct strv *sorted, const struct strv *more);

#endif
