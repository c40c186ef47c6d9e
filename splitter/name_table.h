/* name_table.h: symbols, or globals' sections, sorted by name, for what
 * meets names as text: module asm and inline asm name symbols
 * (asm_names.c), and `__start_`/`__stop_` symbols name a section
 * (asm_names.c, units.c). Entries point at names they do not own. */
#ifndef MTPC_NAME_TABLE_H
#define MTPC_NAME_TABLE_H

#include "analyze.h"

struct name_idx {
	const char *name;
	int idx; /* a symbol index */
};

/* Sorted by name, then index: entries of one name are adjacent, in symbol
 * order. */
struct name_table {
	struct name_idx *v;
	int n;
};

/* Sort t's entries by (name, index). */
void name_table_sort(struct name_table *t);

/* First entry named name, or -1. */
int name_table_find(const struct name_table *t, const char *name);

/* Every named symbol of mi under its name in the module (the name asm text
 * uses: take it before the edit-stable renaming, stable_names.h). */
void name_table_of_symbols(const struct module_info *mi, struct name_table *t);

/* Every function and variable with an explicit section whose name is a C
 * identifier (only those get `__start_`/`__stop_` symbols from the linker),
 * under the section's name. */
void name_table_of_sections(const struct module_info *mi, struct name_table *t);

/* Frees the entries, not the names. */
void name_table_free(struct name_table *t);

#endif
