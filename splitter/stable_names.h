/* stable_names.h: names in the partitions that an edit elsewhere does not
 * change.
 *
 * A partition's bitcode holds the names of everything it defines or
 * declares, so a name that changes with an unrelated edit changes every
 * partition naming it, and each is compiled again. Two kinds of names do:
 * ThinLTO's promoted locals (`f.llvm.<hash of their module's content>`)
 * and clang's numbered private constants (`.str.12`). The analysis renames
 * both in its symbol table (sym.name, keeping the original in
 * sym.orig_name), the partitions are written with those names (emit.c),
 * and the merge restores the real ThinLTO names (rename.txt, plan.c);
 * private names never reach an object file. A symbol that asm names
 * (SF_ASM_NAME, asm_names.h) keeps its name: the text cannot change.
 * A new name already taken in the module (never seen in practice) is not
 * used: the symbol keeps its old name. */
#ifndef MTPC_STABLE_NAMES_H
#define MTPC_STABLE_NAMES_H

#include "analyze.h"

/* ThinLTO names the module's own promoted locals `f.llvm.<hash of the
 * module>`: the most common suffix among its definitions. Any edit changes
 * the hash and so every partition naming one of them; partitions use
 * `f.llvm.mtpc` instead. Likewise the locals of other modules this one
 * imports or references get `f.llvm.mtpc<hash of that module's path
 * relative to this one's>`, so that an edit of another module leaves an
 * importer's partitions as they were unless the code it imports changed.
 * suffixes: "<suffix> <module path>" lines of the ThinLTO index
 * (mtpc_index_suffixes, llvm_shim.h), or NULL (then only the module's own
 * promotions are renamed). m is mi->mod. Counts renamed symbols in
 * mi->nstable. */
void stabilize_thinlto_names(struct module_info *mi, LLVMModuleRef m, const char *suffixes);

/* Private constants (clang's string literals `.str.<n>`, `__const.f.x`,
 * ...) are numbered in the order clang emitted them: a literal added
 * anywhere renumbers all the later ones. Partitions name them `<name
 * without the number>.k<hash of the definition>`; identical definitions
 * get .1, .2, ... in module order. Call after stabilize_thinlto_names
 * (symbols it renamed are left alone). Counts in mi->nstable. */
void stabilize_private_names(struct module_info *mi, LLVMModuleRef m);

/* Internal functions whose names end in a number (clang's
 * `__cxx_global_var_init.<n>`, `__cxx_global_array_dtor.<n>`, ...) are
 * numbered in emission order too: an edit of one test body of a C++ file
 * renumbers the static initializers after it, and every partition holding
 * one was compiled again (googletest's unit test: 16 of 16). Partitions
 * name them `<name without the number>.k<hash of the body's shape>` (the
 * opcodes, the globals each instruction names, its integer constants),
 * ranked like private constants; flagged SF_STABLE_LOCAL. Unlike a
 * private name, theirs reaches the object's symbol table, so only a
 * compile's split uses them (analyze_opts.stable_local_names): its join
 * gives every one its original name back (plan.json's "original" and
 * "renamed", join.c). Call after stabilize_private_names. */
void stabilize_local_names(struct module_info *mi, LLVMModuleRef m);

/* Whether name ends in `.<digits>` after something: clang numbers such
 * local names in emission order, so an edit elsewhere renumbers them. */
int numbered_name(const char *name);

/* The digits of a ThinLTO promotion suffix `name.llvm.<digits>` (the last
 * `.llvm.` of name), or NULL. */
const char *llvm_suffix(const char *name);

#endif
