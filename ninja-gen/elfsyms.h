/* elfsyms.h: the defined global symbols of a relocatable ELF object and their
 * visibility, read straight from its symbol table (64-bit little-endian, what
 * the thin link writes here). Used to give the thin link's regular LTO object
 * the visibilities the bitcode gave its symbols (steps.c). */
#ifndef MTPC_NG_ELFSYMS_H
#define MTPC_NG_ELFSYMS_H

#include "buf.h"

/* Append to names the global and weak symbols that path defines (not
 * undefined, not common) with default or protected visibility. Returns 0, or
 * -1 after an error message naming the file (unreadable, not such an ELF
 * object, or a symbol table that points outside the file). */
int elf_exported_definitions(const char *path, struct strv *names);

#endif
