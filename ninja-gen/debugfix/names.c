/* names.c: an object's GNU name lists (.debug_gnu_pubnames,
 * .debug_gnu_pubtypes) without the entries an earlier object of the module
 * lists. Each partition of a module is a unit of its own and lists again
 * the types and namespaces it uses, where plain ThinLTO's one unit per
 * module lists each once. This file owns which entries may go
 * (pub_entry_shared), the lists' rewrite in place and the relocations of
 * their set headers. */
#include "debugfix_int.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

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
	if (elf_movable(e, si) < 0)
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
	size_t si = elf_find_section(e, name);
	if (!si || e->sh[si].sh_type != SHT_PROGBITS)
		return;
	for (size_t i = si + 1; i < e->nsh; i++)
		if (!strcmp(elf_section_name(e, i), name))
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
		if (dw_enter_unit(&u, &offsz) < 0 || offsz != 4 || rd(&u, 2) != 2)
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
			if (!shared || !sorted_has(earlier, key))
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
	elf_store_shdr(e, si);
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

void names_dedup(struct elf *e, struct debugfix_earlier *earlier)
{
	struct strv mine = {0};
	dedup_pub_names(e, ".debug_gnu_pubtypes", &earlier->names, earlier->names_once, &mine);
	dedup_pub_names(e, ".debug_gnu_pubnames", &earlier->names, earlier->names_once, &mine);
	sorted_union(&earlier->names, &mine);
	strv_free(&mine);
}
