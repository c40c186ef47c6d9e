/* llvm_shim.h: the few things MTPC needs that the LLVM-C API (LLVM 19, 22)
 * lacks; each function says which C API gap it fills. Everything else in
 * MTPC uses the LLVM-C API. Implemented in MTPC's only C++ files, one per
 * concern, in the order of the groups below:
 *
 *   shim_ir.cpp       IR edits: dso_local, bodies, materialization, cloning,
 *                     aliases, the order of globals, struct type names, GUIDs
 *   shim_thinlto.cpp  ThinLTO: the import, the per-module index, summaries,
 *                     symbol tables, bitcode with a summary
 *   shim_debug.cpp    debug info: checksums, compile-unit lists, virtual lines
 *   shim_inline.cpp   the join's inliner
 *
 * and one more, outside mtpc-split: shim_fold_plugin.cpp, the pass plugin
 * (mtpc-fold.so) that runs fold.c's LLVM-C code inside clang's pipeline.
 *
 * They alone use LLVM's C++ API, which changes with every release: where it
 * differs between versions, they have the #if on LLVM_VERSION_MAJOR, and a
 * port to a new LLVM reads them through. shim_int.h is what they share. */
#ifndef MTPC_LLVM_SHIM_H
#define MTPC_LLVM_SHIM_H

#include <llvm-c/Core.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- IR edits (shim_ir.cpp) --------------------------------------------- */

/* GlobalValue::isDSOLocal / setDSOLocal: the C API cannot read or set dso_local. */
int mtpc_is_dso_local(LLVMValueRef global);
void mtpc_set_dso_local(LLVMValueRef global, int dso_local);

/* Function::deleteBody: the C API cannot drop a body together with its
 * personality, prefix and prologue data and metadata attachments. */
void mtpc_delete_body(LLVMValueRef function);

/* GlobalValue::materialize / Module::materializeAll: the C API can open a
 * module lazily (LLVMGetBitcodeModuleInContext2) but cannot load one body.
 * Return 0, or -1 with *error (heap) set. */
int mtpc_materialize(LLVMValueRef global, char **error);
int mtpc_materialize_all(LLVMModuleRef module, char **error);

/* CloneModule with a filter: the C API can clone a whole module
 * (LLVMCloneModule) but not only some of its definitions. Returns a copy of
 * module in the same context, where each definition g stays one if
 * define(g, arg) returns nonzero and becomes an external declaration
 * otherwise; aliases and ifuncs must be defined. From LLVM 21 the copy keeps
 * the key-instruction atom groups of the debug locations (a plain
 * CloneModule numbers them anew, as for a duplicated path). */
LLVMModuleRef mtpc_clone_module(LLVMModuleRef module, int (*define)(LLVMValueRef global, void *arg), void *arg);

/* GlobalAlias::eraseFromParent: the C API can erase functions, variables and
 * ifuncs but not aliases. The alias must have no uses left. */
void mtpc_erase_alias(LLVMValueRef alias);

/* Move the module's function and variable declarations, then its private
 * variables, to the end of their lists, each kind sorted by name. The C API
 * cannot reorder globals. Why: declarations come in the order clang first
 * used them, module-wide, and so do private constants (string literals,
 * under their edit-stable names, stable_names.h), so an edit anywhere can
 * reorder them (googletest's unit test: a literal changed in one test moved
 * two literals in six partitions), and a partition's bitcode follows that
 * order (value numbers): a canonical order keeps unchanged partitions
 * byte-identical. */
void mtpc_sort_globals(LLVMModuleRef module);

/* StructType::setName: the C API can read a struct type's name but not set
 * it. Names the module's identified struct types `<name without clang's
 * .<n>>.mtpc<k>`, k their order of first use in the module. Why: clang tells
 * apart struct types of one name (a class template's instances) by a
 * context-wide counter, `class.std::unique_ptr.521`, so a type added by an
 * edit anywhere renumbers the later ones, and every partition naming one
 * changed (googletest's unit test: a test added, 16 of 16 partitions). The
 * new names depend on the partition's own content only; no object holds
 * them. */
void mtpc_number_struct_types(LLVMModuleRef module);

/* GlobalValue::getGUID: the C API has no MD5 and no GUID, which value-profile
 * (!prof "VP") metadata uses to name indirect-call targets. */
uint64_t mtpc_global_guid(LLVMValueRef global);

/* ---- ThinLTO (shim_thinlto.cpp) ----------------------------------------- */

/* The ThinLTO backend's import step, in-process: the C API has no ThinLTO
 * backend entry point. Loads the ThinLTO object at path (its module id is path,
 * which must be the name the thin link saw), reads the per-module index written
 * by `--thinlto-index-only`, and runs lto::thinBackend up to its
 * PostImportModuleHook: promotion, internalization, dead-symbol dropping and
 * function import, exactly as clang's -fthinlto-index backend does before
 * optimization. pic: relocation model of the final link (lld passes PIC for
 * -shared and -pie). On success returns 0 and sets *out (in ctx); on failure
 * returns -1 and sets *error to a heap message (free with free()). Returns 1
 * (nothing set) when the index holds no module at all: lld writes such an
 * empty index for an archive member the link did not pull in. */
int mtpc_thin_import(LLVMContextRef ctx, const char *path, const char *index_path, int pic,
		     LLVMModuleRef *out, char **error);

/* m written as clang's ThinLTO compile writes its object: bitcode with the
 * module's summary, through ThinLTOBitcodeWriterPass (two modules for
 * -fsplit-lto-unit), for the compile-side join. The C API writes bitcode
 * without a summary. Returns the bytes (malloc'd, *len of them), or NULL
 * with *error (heap) set. */
char *mtpc_thinlto_bitcode(LLVMModuleRef m, size_t *len, char **error);

/* The modules a per-module ThinLTO index names without a content hash (all
 * zeros: their producer wrote none): the C API cannot read summaries.
 * mtpc-split keys its outputs by the index's bytes, which hold the other
 * modules' hashes, so the content of these must be read instead. Returns
 * their count and sets *paths (heap, sorted, NULL-terminated; each entry
 * heap), or -1 with *error (heap). An empty index names none. */
int mtpc_index_unhashed_modules(const char *index_path, char ***paths, char **error);

/* The promotion suffix of every module a per-module ThinLTO index names:
 * the C API cannot read summaries. ThinLTO renames a module's promoted
 * local f to `f.llvm.<suffix>`, the suffix a hash of the module's content,
 * so any edit of a module renames its promoted locals in every module that
 * imports them (stable_names.c gives them stable names). Returns "<suffix>
 * <module path>\n" lines sorted (heap, "" for an empty index), or NULL with
 * *error (heap) set. */
char *mtpc_index_suffixes(const char *index_path, char **error);

/* The per-module ThinLTO summary of a bitcode file: the C API cannot read
 * summaries. Sums the instruction counts of the functions the file's summary
 * lists (every module of the file: -fsplit-lto-unit writes two) without
 * loading any function body, which is cheap enough to estimate the backend
 * cost of every module at link time. Returns 0 with *insts and *functions
 * set, 1 when the file has no summary (not a ThinLTO object), -1 with *error
 * (heap) set when the file cannot be read as bitcode. */
int mtpc_summary_cost(const char *path, long long *insts, long long *functions, char **error);

/* The symbols of a bitcode file's symbol table (every module of the file,
 * definitions and references) with hidden (vis 1) or protected (vis 2)
 * visibility, each passed to fn. The C API's lto.h reads only files of one
 * module, and -fsplit-lto-unit (CFI, whole-program devirtualization) writes
 * two. Why: a linker resolving bitcode gives a symbol the most constraining
 * visibility any of its bitcode definitions or references has; a link of
 * the native objects alone no longer sees the references that optimization
 * removed (the thin-link step, ninja-gen/steps/thinlink.c, puts them back).
 * Returns 0, or -1 with *error (heap) set when the file cannot be read as
 * bitcode. */
typedef void (*mtpc_visibility_fn)(void *arg, const char *name, size_t len, int vis);
int mtpc_bitcode_visibility(const char *path, mtpc_visibility_fn fn, void *arg, char **error);

/* ---- debug info (shim_debug.cpp) ---------------------------------------- */

/* Give every DIFile with an MD5 checksum a placeholder checksum instead: the
 * MD5 of its directory and name, which no edit of the file changes. The C
 * API cannot read or set a DIFile's checksum, and DIFiles are uniqued, so
 * each user's operand is redirected to a new DIFile. Why: the checksum
 * changes with every edit of the source file, and every partition holding
 * any of its functions (or a function imported from it) would then change
 * too; with placeholders a partition's bitcode changes only when its code
 * does, and the merge writes the real checksums back into the objects.
 * Returns "<placeholder hex> <real hex>\n" lines, one per file changed
 * (malloc'ed, "" if none), or NULL with *error (heap) set. */
char *mtpc_placeholder_checksums(LLVMModuleRef module, char **error);

/* Keep in each compile unit of a partition only the debug info this
 * partition emits: the C API cannot read or replace a DICompileUnit's lists
 * (DIBuilder writes them once). Every partition starts with the whole
 * unit's list of global variables, so each would describe every global of
 * the file (again), and any edit that moves one global's line would change
 * every partition's bitcode. Keeps the entries of the global variables in
 * defined[0..n) (those the partition defines); entries of variables the
 * module does not have (optimized away before the split), and the unit's
 * enum, retained type and imported entity (C++ using-declaration) lists,
 * only when first is set (partition 0).
 * Call on the module as it was read, before its globals change. */
void mtpc_restrict_cu_lists(LLVMModuleRef module, LLVMValueRef *defined, unsigned n, int first);

/* Renumber the module's source lines into virtual lines (virtual_lines.h) that
 * no edit outside the partition's own code changes: the C API cannot read
 * or set the line of a debug-info node other than a location, nor replace
 * a node that others refer to. Each function body keeps the distances
 * between its lines; everything else between the spans the partition uses
 * is squeezed out (shim_debug.cpp says how). Why: a line added above a
 * function moves every function below it, and every partition holding one
 * would change and be compiled again; with virtual lines it changes only
 * if its own code or spans do, and the merge puts the real lines back
 * into the object (ninja-gen/debugfix/debugfix.h). Returns the map, one
 * "VIRTUAL FIRST COUNT\n" line per span, in increasing order; "" when the
 * module states no line or has a real line of MTPC_VIRTUAL_LINE_BASE or
 * more (then nothing changed). NULL
 * with *error (heap) set on failure. Call after
 * mtpc_placeholder_checksums. */
char *mtpc_virtual_lines(LLVMModuleRef module, char **error);

/* Give function to, made by the splitter, a subprogram of its own: a copy
 * of from's (the same file, line, type, flags and compile unit), named
 * name, without a linkage name or retained nodes. The C API can create a
 * subprogram only through a DIBuilder, whose new subprograms name no
 * compile unit unless that builder made the unit too, and the verifier
 * requires one on a definition. Returns the new subprogram, or NULL (to
 * unchanged) when from has none. Why: a chunk of a module constructor
 * (ctor_chunks.h) holds calls that must keep their locations. */
LLVMMetadataRef mtpc_copy_subprogram(LLVMValueRef from, LLVMValueRef to, const char *name);

/* ---- the join's inliner (shim_inline.cpp) ------------------------------- */

/* The join's inliner (join.c) on m: LLVM's inliner bottom-up over the call
 * graph, and after it, in each SCC where it inlined something, the function
 * passes of the pipeline text cleanup on that SCC's functions, before the
 * callers are weighed. Fills a gap of the C API: LLVMRunPasses takes
 * textual pipelines only, in which a CGSCC's function passes run on every
 * SCC whether or not the inliner changed it (the whole module cleaned up:
 * SQLite's join 0.7 -> 1.7 s). Returns 0, or -1 with *error (heap). */
int mtpc_join_inline(LLVMModuleRef m, const char *cleanup, char **error);

#ifdef __cplusplus
}
#endif

#endif
