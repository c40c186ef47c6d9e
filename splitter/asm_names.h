/* asm_names.h: the names asm text uses.
 *
 * Module asm and a function's inline asm can name any symbol as text (a
 * call, `.symver`, `.set`, data), which no IR operand shows, and the text
 * cannot be rewritten. So the scan reads asm token by token and flags every
 * symbol whose name appears (analyze.h): SF_ASM_NAME keeps its exact name in
 * every partition, SF_IN_ASM keeps it with the module asm, SF_INLINE_ASM
 * keeps a function whose inline asm names one from being copied, and
 * SF_ASM_SECTION keeps the globals of a section module asm names (by name,
 * or through `__start_`/`__stop_`) with the asm: `ld -r` concatenates a
 * section's pieces in partition order, and the unsplit object has the
 * asm's pieces first. Over-approximate on purpose: a token that happens to
 * equal a symbol's name only keeps that symbol's name and place.
 *
 * Order of use: asm_scan_init, asm_scan_module (once), asm_scan_inline (for
 * each inline asm of each function; it needs what asm_scan_module read),
 * asm_scan_free. */
#ifndef MTPC_ASM_NAMES_H
#define MTPC_ASM_NAMES_H

#include "analyze.h"
#include "intlist.h"
#include "name_table.h"

#include <llvm-c/Core.h>
#include <stddef.h>

struct asm_scan {
	struct module_info *mi;      /* whose symbols' flags the scan sets */
	struct name_table names;     /* symbols by their names in the module */
	struct name_table set_names; /* A -> B of module asm's `.lto_set_conditional
	                                A, B` lines (names owned: heap) */
	struct intpairs set_uses;    /* (function, B): the function's inline asm
	                                names B through its local alias A, which
	                                exists only in the object defining B, so
	                                the two share a unit (units.c) */
	char *tok;                   /* token buffer, as long as the longest text */
	size_t tok_cap;
};

/* Start a scan of mi's asm, by the names the module uses now: call it
 * before the edit-stable renaming (stable_names.h), which skips the symbols
 * asm names. */
void asm_scan_init(struct asm_scan *a, struct module_info *mi);

/* Module asm: sets mi->has_asm, flags the symbols and sections it names,
 * records its `.lto_set_conditional` aliases (set_names) and its `.symver`
 * directives (mi->symvers). */
void asm_scan_module(struct asm_scan *a);

/* The inline asm inline_asm (a call's callee) in symbol user: every symbol
 * it names is a reference of user (pushed on refs), so it stays alive, is
 * promoted when user lands elsewhere, and keeps its name; user is never
 * copied (ThinLTO does not import such functions either). */
void asm_scan_inline(struct asm_scan *a, int user, LLVMValueRef inline_asm, struct intlist *refs);

void asm_scan_free(struct asm_scan *a);

/* Is this line of module asm a `.lto_set_conditional A, B`? ThinLTO's
 * bitcode writer adds one for each static it promotes to B in a module with
 * inline asm (CFI and -fsplit-lto-unit): the assembler makes A a local alias
 * of B, only in an object whose asm uses A. Every partition gets these lines
 * (emit.c): inline asm anywhere may use A. */
int asm_set_line(const char *line, size_t len);

#endif
