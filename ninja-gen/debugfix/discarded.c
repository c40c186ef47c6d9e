/* discarded.c: what a module's `ld.lld -r` discards from one partition's
 * object, and the debug info of it. The link keeps the first COMDAT group
 * of each signature: a later partition's copy of a group (a C++ inline
 * function, a static carried as one hidden linkonce_odr copy, a folded
 * body) goes, and so do the sections in it. This file owns finding those
 * sections (discarded_sections) and marking the debug info that points
 * into them as dead (tombstones).
 *
 * Why the marks: the DIEs of a discarded copy stay in the partition's
 * unit, and `ld.lld -r` rewrites each relocation to a discarded section
 * into R_*_NONE over a zero, so every such subprogram ends up at address 0.
 * Two in one unit overlap, which `llvm-dwarfdump --verify` rejects (20
 * times in SQLite's -O2 -g object at 2 partitions); and zero is a real
 * address of the object. DWARF 5's convention for code that is gone is the
 * tombstone address, all ones (llvm-dwarfdump prints "dead code" and skips
 * it; lld writes it with -z dead-reloc-in-nonalloc=.debug_*=-1). So each
 * such relocation is removed here, the tombstone written in its place:
 * neither `ld.lld -r` nor the final link changes it again (a relocation
 * made R_*_NONE instead would be read as 0 by llvm-dwarfdump). The
 * values are lld's rules with -1, for the sections DIEs take addresses
 * from: 1 in the pre-DWARF 5 range and location lists (.debug_ranges,
 * .debug_loc: all ones there starts a base address entry, 0 ends the list).
 * The other sections (the line table, .debug_frame, .debug_aranges) keep
 * what `ld.lld -r` gives them, 0, lld's own choice there, which their
 * readers skip. */
#include "debugfix_int.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

unsigned char *discarded_sections(const struct elf *e, const struct strv *earlier, struct strv *mine)
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
		const Elf64_Shdr *symtab = &e->sh[g->sh_link];
		Elf64_Sym sym;
		if ((uint64_t)g->sh_info >= symtab->sh_size / sizeof sym)
			goto bad;
		memcpy(&sym, e->data + symtab->sh_offset + (uint64_t)g->sh_info * sizeof sym, sizeof sym);
		const char *sig = elf_string(e, symtab->sh_link, sym.st_name);
		if (!sig)
			goto bad;
		strv_add(mine, sig);
		if (!sorted_has(earlier, sig))
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

/* The width in bytes of the field an absolute relocation of this type
 * writes, for the machines MTPC builds for; 0 for any other type (its
 * relocation is left to the link). */
static int absolute_width(unsigned machine, unsigned type)
{
	if (machine == EM_X86_64)
		switch (type) {
		case R_X86_64_64: case R_X86_64_DTPOFF64: return 8;
		case R_X86_64_32: case R_X86_64_DTPOFF32: return 4;
		default: return 0;
		}
	if (machine == EM_AARCH64)
		switch (type) {
		case R_AARCH64_ABS64: return 8;
		case R_AARCH64_ABS32: return 4;
		default: return 0;
		}
	return 0;
}

/* The tombstone of a field of debug section name: all ones where DIEs take
 * their addresses and ranges from, 1 in the pre-DWARF 5 lists where all
 * ones means something else; 0 for any other section (the line table,
 * .debug_frame, .debug_aranges), which is left to the link. */
static uint64_t tombstone(const char *name)
{
	static const char *const dies[] = {".debug_info", ".debug_addr", ".debug_rnglists", ".debug_loclists"};
	if (!strcmp(name, ".debug_ranges") || !strcmp(name, ".debug_loc"))
		return 1;
	for (size_t i = 0; i < sizeof dies / sizeof *dies; i++)
		if (!strcmp(name, dies[i]))
			return ~(uint64_t)0;
	return 0;
}

int tombstones(struct elf *e, const unsigned char *gone)
{
	Elf64_Ehdr eh;
	memcpy(&eh, e->data, sizeof eh);
	int marked = 0;
	for (size_t r = 1; r < e->nsh; r++) {
		Elf64_Shdr *rs = &e->sh[r];
		if (rs->sh_type != SHT_RELA || rs->sh_info == 0 || rs->sh_info >= e->nsh || rs->sh_link >= e->nsh ||
		    gone[r] || gone[rs->sh_info])
			continue;
		const Elf64_Shdr *target = &e->sh[rs->sh_info];
		const char *name = elf_section_name(e, rs->sh_info);
		uint64_t dead = tombstone(name);
		if ((target->sh_flags & (SHF_ALLOC | SHF_COMPRESSED)) || target->sh_type != SHT_PROGBITS || !dead)
			continue;
		unsigned char *at = e->data + target->sh_offset, *rels = e->data + rs->sh_offset;
		uint64_t kept = 0;
		for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= rs->sh_size; k += sizeof(Elf64_Rela)) {
			Elf64_Rela rel;
			memcpy(&rel, rels + k, sizeof rel);
			Elf64_Sym sym = elf_rela_symbol(e, &e->sh[rs->sh_link], &rel);
			int width = absolute_width(eh.e_machine, (unsigned)ELF64_R_TYPE(rel.r_info));
			/* Only local symbols: a global one defined in a
			 * discarded copy is the kept copy's after the link. */
			if (!width || ELF64_ST_BIND(sym.st_info) != STB_LOCAL || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx >= SHN_LORESERVE || sym.st_shndx >= e->nsh || !gone[sym.st_shndx] ||
			    rel.r_offset > target->sh_size || target->sh_size - rel.r_offset < (uint64_t)width) {
				memmove(rels + kept, rels + k, sizeof rel);
				kept += sizeof rel;
				continue;
			}
			for (int i = 0; i < width; i++)
				at[rel.r_offset + (uint64_t)i] = (unsigned char)(dead >> (8 * i));
			marked++;
		}
		if (kept != rs->sh_size) {
			rs->sh_size = kept;
			elf_store_shdr(e, r);
		}
	}
	return marked;
}
