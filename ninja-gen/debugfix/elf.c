/* elf.c: the one way this code reads and rewrites ELF files: a relocatable
 * 64-bit little-endian object or a .dwp, in memory (struct elf). It owns
 * the section headers and names, the symbols and relocations that point
 * into a section, a section whose new contents go to the end of the file
 * (the bytes it kept are followed by the relocations), and the two entry
 * points that are ELF and nothing else: the COMDAT flags objcopy clears
 * (debugfix_group_flags) and the definitions an object exports
 * (elf_exported_definitions). Everything is copied out with memcpy: the
 * file's fields need not be aligned. */
#include "debugfix_int.h"
#include "fold_names.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int elf_read_file(const char *path, char **data, size_t *len)
{
	if (mtpc_read_file(path, data, len) == 0)
		return 0;
	mtpc_error("cannot read %s: %s", path, strerror(errno));
	return -1;
}

int elf_open(struct elf *e, unsigned char *data, size_t len)
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

const char *elf_section_name(const struct elf *e, size_t i)
{
	uint32_t n = e->sh[i].sh_name;
	const char *names = (const char *)e->data + e->names_off;
	if (n >= e->names_size || !memchr(names + n, 0, e->names_size - n))
		return "";
	return names + n;
}

size_t elf_find_section(const struct elf *e, const char *name)
{
	for (size_t i = 1; i < e->nsh; i++)
		if (!strcmp(elf_section_name(e, i), name))
			return i;
	return 0;
}

void elf_store_shdr(struct elf *e, size_t i)
{
	Elf64_Ehdr eh;
	memcpy(&eh, e->data, sizeof eh);
	memcpy(e->data + eh.e_shoff + i * sizeof(Elf64_Shdr), &e->sh[i], sizeof(Elf64_Shdr));
}

const char *elf_string(const struct elf *e, size_t strtab, uint64_t off)
{
	const Elf64_Shdr *s = &e->sh[strtab];
	const char *names = (const char *)e->data + s->sh_offset;
	if (s->sh_type == SHT_NOBITS || off >= s->sh_size || !memchr(names + off, 0, s->sh_size - off))
		return NULL;
	return names + off;
}

Elf64_Sym elf_rela_symbol(const struct elf *e, const Elf64_Shdr *symtab, const Elf64_Rela *rel)
{
	Elf64_Sym sym = {0};
	uint64_t at = (uint64_t)ELF64_R_SYM(rel->r_info) * sizeof sym;
	if (at + sizeof sym <= symtab->sh_size)
		memcpy(&sym, e->data + symtab->sh_offset + at, sizeof sym);
	return sym;
}

uint64_t elf_relocated(const struct elf *e, size_t target, uint64_t off, uint64_t stored)
{
	for (size_t r = 1; r < e->nsh; r++) {
		const Elf64_Shdr *rs = &e->sh[r];
		if (rs->sh_type != SHT_RELA || rs->sh_info != target || rs->sh_link >= e->nsh)
			continue;
		for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= rs->sh_size; k += sizeof(Elf64_Rela)) {
			Elf64_Rela rel;
			memcpy(&rel, e->data + rs->sh_offset + k, sizeof rel);
			if (rel.r_offset != off)
				continue;
			return elf_rela_symbol(e, &e->sh[rs->sh_link], &rel).st_value + (uint64_t)rel.r_addend;
		}
	}
	return stored;
}

int elf_movable(const struct elf *e, size_t si)
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

/* ---- a section rewritten -------------------------------------------------- */

void moves_add(struct moves *mv, uint64_t old, uint64_t new, uint64_t len)
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

long long moves_to(const struct moves *mv, uint64_t x)
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

/* Move what refers into section si to where mv put it: the offsets of the
 * relocations applied to it, and the addends of relocations against its
 * section symbol. */
static int move_relocations(struct elf *e, size_t si, const struct moves *mv)
{
	for (size_t r = 1; r < e->nsh; r++) {
		const Elf64_Shdr *rs = &e->sh[r];
		if (rs->sh_type != SHT_RELA || rs->sh_link >= e->nsh)
			continue;
		for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= rs->sh_size; k += sizeof(Elf64_Rela)) {
			unsigned char *p = e->data + rs->sh_offset + k;
			Elf64_Rela rel;
			memcpy(&rel, p, sizeof rel);
			long long to;
			if (rs->sh_info == si) {
				if ((to = moves_to(mv, rel.r_offset)) < 0)
					return -1;
				rel.r_offset = (uint64_t)to;
			}
			Elf64_Sym sym = elf_rela_symbol(e, &e->sh[rs->sh_link], &rel);
			if (ELF64_ST_TYPE(sym.st_info) == STT_SECTION && sym.st_shndx == si) {
				if (rel.r_addend < 0 || (to = moves_to(mv, (uint64_t)rel.r_addend)) < 0)
					return -1;
				rel.r_addend = to;
			}
			memcpy(p, &rel, sizeof rel);
		}
	}
	return 0;
}

int elf_rewrite_section(struct elf *e, size_t si, const char *contents, size_t len, const struct moves *mv)
{
	if (move_relocations(e, si, mv) < 0)
		return -1;
	size_t at = e->len;
	e->data = xrealloc(e->data, e->len + len);
	memcpy(e->data + at, contents, len);
	e->len += len;
	e->sh[si].sh_offset = at;
	e->sh[si].sh_size = len;
	elf_store_shdr(e, si);
	return 0;
}

/* ---- COMDAT group flags ---------------------------------------------------- */

/* The SHT_GROUP sections of e with a flag word, in section order (heap
 * array of section indexes, *n of them). */
static size_t *group_sections(const struct elf *e, size_t *n)
{
	size_t *gs = xmalloc((e->nsh + 1) * sizeof *gs);
	*n = 0;
	for (size_t i = 1; i < e->nsh; i++)
		if (e->sh[i].sh_type == SHT_GROUP && e->sh[i].sh_size >= 4)
			gs[(*n)++] = i;
	return gs;
}

/* Whether the signature symbol of group section g of e is local (an
 * unreadable one counts as not). */
static int group_signed_locally(const struct elf *e, size_t g)
{
	const Elf64_Shdr *gh = &e->sh[g];
	if (gh->sh_link == 0 || gh->sh_link >= e->nsh)
		return 0;
	const Elf64_Shdr *st = &e->sh[gh->sh_link];
	if (st->sh_type != SHT_SYMTAB || st->sh_entsize != sizeof(Elf64_Sym) ||
	    gh->sh_info >= st->sh_size / sizeof(Elf64_Sym))
		return 0;
	Elf64_Sym sym;
	memcpy(&sym, e->data + st->sh_offset + gh->sh_info * sizeof sym, sizeof sym);
	return ELF64_ST_BIND(sym.st_info) == STB_LOCAL;
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
	ga = group_sections(&ea, &na);
	gb = group_sections(&eb, &nb);
	if (na != nb) {
		mtpc_warn("%s: %zu section groups, %zu in %s", to, nb, na, from);
		goto done;
	}
	for (size_t i = 0; i < na; i++) {
		/* Only the groups signed locally in from (type units) lost a flag
		 * they must keep. A group whose signature objcopy localized is a
		 * split's own copy of a static, one per module after ld -r: left
		 * a COMDAT under the static's plain name, the final link would
		 * keep one module's copy for every module's static of that name. */
		size_t oa = ea.sh[ga[i]].sh_offset, ob = eb.sh[gb[i]].sh_offset;
		if (group_signed_locally(&ea, ga[i]) && memcmp(b + ob, a + oa, 4)) {
			memcpy(b + ob, a + oa, 4);
			changed = 1;
		}
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

/* ---- exported definitions -------------------------------------------------- */

/* The exported definitions of e's symbol tables into names: 0, or -1 if a
 * table or a name is not in the file. */
static int exported_definitions(const struct elf *e, struct strv *names)
{
	for (size_t i = 1; i < e->nsh; i++) {
		const Elf64_Shdr *sh = &e->sh[i];
		if (sh->sh_type != SHT_SYMTAB)
			continue;
		if (sh->sh_link >= e->nsh || sh->sh_entsize != sizeof(Elf64_Sym))
			return -1;
		for (uint64_t k = 0; k + sizeof(Elf64_Sym) <= sh->sh_size; k += sizeof(Elf64_Sym)) {
			Elf64_Sym sym;
			memcpy(&sym, e->data + sh->sh_offset + k, sizeof sym);
			int bind = ELF64_ST_BIND(sym.st_info), vis = ELF64_ST_VISIBILITY(sym.st_other);
			if ((bind != STB_GLOBAL && bind != STB_WEAK) || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx == SHN_COMMON || (vis != STV_DEFAULT && vis != STV_PROTECTED))
				continue;
			const char *name = elf_string(e, sh->sh_link, sym.st_name);
			if (!name)
				return -1;
			strv_add(names, name);
		}
	}
	return 0;
}

int elf_exported_definitions(const char *path, struct strv *names)
{
	char *data;
	size_t len;
	if (elf_read_file(path, &data, &len) < 0)
		return -1;
	struct elf e = {0};
	/* Empty: lld's regular LTO object of a link without regular LTO input. */
	int r = len == 0 ? 0 : elf_open(&e, (unsigned char *)data, len) < 0 ? -1 : exported_definitions(&e, names);
	free(e.sh);
	free(data);
	if (r < 0)
		mtpc_error("%s: not a 64-bit little-endian ELF object with a readable symbol table", path);
	return r;
}

/* Add name to v unless it is there. */
static void add_once(struct strv *v, const char *name)
{
	for (size_t n = 0; n < v->n; n++)
		if (!strcmp(v->v[n], name))
			return;
	strv_add(v, name);
}

int elf_folded_names(const char *path, struct strv *syms, struct strv *secs)
{
	char *data;
	size_t len;
	if (elf_read_file(path, &data, &len) < 0)
		return -1;
	struct elf e = {0};
	int r = elf_open(&e, (unsigned char *)data, len);
	size_t base;
	for (size_t i = 1; r == 0 && i < e.nsh; i++) {
		const Elf64_Shdr *sh = &e.sh[i];
		const char *sec = elf_section_name(&e, i);
		if (sec && sh->sh_type == SHT_PROGBITS && mtpc_fold_name(sec, &base))
			add_once(secs, sec);
		if (sh->sh_type != SHT_SYMTAB)
			continue;
		if (sh->sh_link >= e.nsh || sh->sh_entsize != sizeof(Elf64_Sym)) {
			r = -1;
			break;
		}
		for (uint64_t k = sizeof(Elf64_Sym); k + sizeof(Elf64_Sym) <= sh->sh_size; k += sizeof(Elf64_Sym)) {
			Elf64_Sym sym;
			memcpy(&sym, e.data + sh->sh_offset + k, sizeof sym);
			const char *name = elf_string(&e, sh->sh_link, sym.st_name);
			if (!name) {
				r = -1;
				break;
			}
			if (sym.st_shndx != SHN_UNDEF && mtpc_fold_name(name, &base))
				add_once(syms, name);
		}
	}
	free(e.sh);
	free(data);
	if (r < 0)
		mtpc_error("%s: not a 64-bit little-endian ELF object with a readable symbol table", path);
	return r;
}

long long elf_code_bytes(const char *path)
{
	char *data;
	size_t len;
	if (mtpc_read_file(path, &data, &len) < 0)
		return -1;
	struct elf e = {0};
	long long bytes = -1;
	if (elf_open(&e, (unsigned char *)data, len) == 0) {
		bytes = 0;
		for (size_t i = 0; i < e.nsh; i++)
			if ((e.sh[i].sh_flags & SHF_EXECINSTR) && e.sh[i].sh_type == SHT_PROGBITS)
				bytes += (long long)e.sh[i].sh_size;
	}
	free(e.sh);
	free(data);
	return bytes;
}
