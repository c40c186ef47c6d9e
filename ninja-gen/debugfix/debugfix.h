/* debugfix.h: put back into a compiled partition (its object or .dwo) the
 * debug info that mtpc-split replaced so that a partition's bitcode changes
 * only when its code does: the real MD5 checksums of the source files (for
 * the placeholders of --placeholder-checksums) and the real line numbers
 * (for the virtual lines of --virtual-lines, common/virtual_lines.h).
 *
 * Checksums are patched in place in the line tables. Lines are patched in
 * place in the DIEs (DW_AT_decl_line, DW_AT_call_line: clang writes them as
 * data4 for numbers this large) and by re-encoding the line programs
 * (.debug_line, .debug_line.dwo), which changes their size: the new section
 * goes to the end of the file and the relocations into it, or against its
 * section symbol, are moved with it. The result is an input of `ld.lld -r`,
 * which lays the output out anew. Before that link, it also marks dead the
 * debug info of the COMDAT copies the link will discard (discarded.c).
 * 64-bit little-endian ELF only (what mtpc-split renumbers lines for).
 * Same input, same output, byte for byte.
 *
 * The code is the folder ninja-gen/debugfix/, the library mtpc_debugfix
 * (it needs only common/): one file per concern, each saying what it owns
 * first; debugfix_int.h is what they share. The same ELF access reads a
 * thin link's regular LTO object for steps.c (elf_exported_definitions). */
#ifndef MTPC_DEBUGFIX_H
#define MTPC_DEBUGFIX_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* One span of a partition's map: virtual lines virt .. virt+count-1 are real
 * lines first .. first+count-1. */
struct line_span {
	uint32_t virt, first, count;
};

/* A partition's map, spans in increasing virt order (n == 0: no virtual
 * lines, nothing to put back). */
struct line_map {
	struct line_span *span;
	size_t n;
};

/* Partition part's spans out of the text of lines.txt. Returns 0, or -1 if
 * the text is malformed (map left empty). */
int debugfix_parse_lines(const char *text, int part, struct line_map *map);
void debugfix_free_lines(struct line_map *map);

/* The real line of line v: v itself when it is not virtual, -1 when it is
 * virtual but no span has it. */
long long debugfix_real_line(const struct line_map *map, uint64_t v);

/* What the objects before this one in a module's `ld.lld -r` provide,
 * which makes parts of this one redundant; each debugfix_object call adds
 * the file's own. Zero-initialize; debugfix_earlier_free when done. */
struct debugfix_earlier {
	struct strv groups; /* COMDAT group signatures, sorted: the link keeps
			     * the first group of each */
	struct strv names;  /* keys of the type and namespace entries of the
			     * GNU name lists (.debug_gnu_pubtypes/pubnames),
			     * sorted: with names_once, of every entry */
	int names_once;     /* set by the caller: list every name once per
			     * module, functions and variables too. Right when
			     * the link builds no .gdb_index from the lists:
			     * nothing else reads them (gdb and lldb index the
			     * DWARF themselves), and plain ThinLTO lists each
			     * name once per module's unit */
};
void debugfix_earlier_free(struct debugfix_earlier *earlier);

/* Fix the file in (*data, *len), which may be reallocated: the checksums of
 * checksums ("PLACEHOLDER REAL" hex lines, may be NULL) and the lines of
 * lines (may be NULL). With earlier (may be NULL), also mark dead (the
 * tombstone address, its relocation removed) the debug info of the COMDAT copies the
 * link discards because an earlier object has their group, so that no
 * subprogram of a dropped copy is left at address 0; and shrink what the
 * earlier objects of the module make redundant: the entries of its DWARF 5
 * string offsets table that only the type units of discarded groups use,
 * and the entries of its GNU name lists for types and namespaces (all
 * entries with earlier->names_once) an earlier object lists (a file this
 * code cannot read that far keeps its tables). Returns 0, or -1 with *why
 * set (a static string) when the file has virtual lines this code cannot
 * put back. */
int debugfix_object(char **data, size_t *len, const char *checksums, const struct line_map *lines,
		    struct debugfix_earlier *earlier, const char **why);

/* debugfix_object from the file from to the file to, written atomically and
 * only if changed; with only_if_fixed, not at all when the fixed file would
 * equal from. Returns 1 when to was written (or is up to date), 0 when
 * only_if_fixed left it unwritten, -1 after one error message naming the
 * file. */
int debugfix_copy(const char *from, const char *to, const char *checksums, const struct line_map *lines,
		  struct debugfix_earlier *earlier, int only_if_fixed);

/* Shrink the DWARF 5 package (.dwp) at path, rewritten atomically if it
 * changes: llvm-dwp keeps one copy of each type unit but every input's
 * whole string offsets table, so drop the entries no unit of the package
 * reads. A package this code does not expect is left as it is. Returns 0,
 * or -1 after one error message naming the file. */
int debugfix_package(const char *path);

/* Merge the .dwo files in[0..n) of a plain compile's partitions (each the
 * DWARF 5 split units of one partition, real lines already back) into the
 * one .dwo at out that every partition's skeleton unit names: one unit per
 * partition, sharing one string offsets table and one table each of
 * location and range lists, since a split unit has no base attributes and
 * readers take those tables from the start of the file's sections (gdb 13
 * does). Type units an earlier file has are dropped. An empty input (a
 * compile that wrote no .dwo) is skipped. out is written atomically, only
 * if changed. Returns 1 when out was written (or was up to date), 0 when
 * no input had units (out untouched), -1 with *why (heap) naming the file
 * and what the merge cannot move (DWARF before 5, 64-bit DWARF, compressed
 * sections, macros, ...; out untouched): the caller, which falls back to
 * the plain compile, says it in its one warning. */
int debugfix_dwo_merge(char *const *in, size_t n, const char *out, char **why);

/* llvm-objcopy clears GRP_COMDAT of every section group whose signature
 * symbol is local, and LLVM signs the group of each DWARF type unit with a
 * local symbol: after the merge's objcopy, the final link would keep every
 * module's copy of every C++ type instead of one. Give each group of to
 * that was already signed by a local symbol in from (the file objcopy read;
 * the n-th SHT_GROUP section of one is the n-th of the other, objcopy
 * neither adds nor removes sections there) the flag word it has in from.
 * The groups whose signature objcopy localized (a split's copy of a static
 * function whose address is taken, in a COMDAT so that ld -r keeps one)
 * keep the cleared flag: the static is the module's own. to is rewritten
 * atomically, only if a flag changed. Returns 0, or -1 after one warning
 * naming the file, which is then left as it is: correct, but with each
 * module's own copy of each type. */
int debugfix_group_flags(const char *from, const char *to);

/* A copy of a compiler's message text with "FILE:LINE" virtual lines turned
 * into real ones (backend warnings and remarks name source lines). */
char *debugfix_text(const char *text, const struct line_map *lines);

/* Append to names the global and weak symbols that the relocatable ELF
 * object at path defines (not undefined, not common) with default or
 * protected visibility: steps.c gives the thin link's regular LTO object
 * the visibilities the bitcode gave its symbols. An empty file (lld's
 * regular LTO object of a link without regular LTO input) defines
 * nothing. Returns 0, or -1 after an error message naming the file
 * (unreadable, not a 64-bit little-endian ELF object, or a symbol table
 * that points outside the file). */
int elf_exported_definitions(const char *path, struct strv *names);

/* Append to syms the symbols, and to secs the sections, of the relocatable
 * ELF object at path whose names are folded bodies' (common/fold_names.h:
 * NAME.mtpc.f<hex>; a body's section is named after it, ".text.NAME..."),
 * each once, in file order: the merge names them NAME again, the symbols
 * local. Returns 0, or -1 after an error message naming the file. */
int elf_folded_names(const char *path, struct strv *syms, struct strv *secs);

/* The bytes of code (the executable sections) of the ELF object at path,
 * or -1 when it cannot be read or is not a 64-bit little-endian ELF file;
 * quiet: mtpc-compile measures a plain compile's cost from its previous
 * object by it, and a missing or foreign object only means no measure. */
long long elf_code_bytes(const char *path);

#endif
