/* elfsyms.c: see elfsyms.h. */
#include "elfsyms.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int elf_exported_definitions(const char *path, struct strv *names)
{
	char *data;
	size_t len;
	if (mtpc_read_file(path, &data, &len) < 0) {
		mtpc_error("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (len == 0) { /* lld's regular LTO object of a link without regular LTO input */
		free(data);
		return 0;
	}
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
	int ok = len >= sizeof *eh && !memcmp(eh->e_ident, ELFMAG, SELFMAG) &&
		 eh->e_ident[EI_CLASS] == ELFCLASS64 && eh->e_ident[EI_DATA] == ELFDATA2LSB &&
		 eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shoff <= len &&
		 eh->e_shnum <= (len - eh->e_shoff) / sizeof(Elf64_Shdr);
	for (size_t i = 0; ok && i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(data + eh->e_shoff) + i;
		if (sh->sh_type != SHT_SYMTAB)
			continue;
		const Elf64_Shdr *str = sh->sh_link < eh->e_shnum ? (const Elf64_Shdr *)(data + eh->e_shoff) + sh->sh_link : NULL;
		if (!str || sh->sh_offset > len || sh->sh_size > len - sh->sh_offset || str->sh_offset > len ||
		    str->sh_size > len - str->sh_offset || sh->sh_entsize != sizeof(Elf64_Sym)) {
			ok = 0;
			break;
		}
		const Elf64_Sym *sym = (const Elf64_Sym *)(data + sh->sh_offset);
		const char *strtab = data + str->sh_offset;
		for (size_t k = 0; k < sh->sh_size / sizeof *sym; k++) {
			int bind = ELF64_ST_BIND(sym[k].st_info), vis = ELF64_ST_VISIBILITY(sym[k].st_other);
			if ((bind != STB_GLOBAL && bind != STB_WEAK) || sym[k].st_shndx == SHN_UNDEF ||
			    sym[k].st_shndx == SHN_COMMON || (vis != STV_DEFAULT && vis != STV_PROTECTED))
				continue;
			if (sym[k].st_name >= str->sh_size || !memchr(strtab + sym[k].st_name, 0, str->sh_size - sym[k].st_name)) {
				ok = 0;
				break;
			}
			strv_add(names, strtab + sym[k].st_name);
		}
	}
	free(data);
	if (!ok)
		mtpc_error("%s: not a 64-bit little-endian ELF object with a readable symbol table", path);
	return ok ? 0 : -1;
}
