/* fold.h: one out-of-line body for equal copies of a static that several
 * partitions of a plain compile keep (the contract: common/fold_names.h).
 *
 * Runs in each partition's own clang, at the end of its optimization and
 * before code generation (the pass plugin mtpc-fold.so,
 * shim_fold_plugin.cpp; mtpc-compile passes -fpass-plugin to a plain
 * compile's partitions).
 *
 * Why content and not name: each partition optimizes its copy with what it
 * sees (its own callers and callees), so two copies may differ; only equal
 * ones may share a body. The content is the function's printed IR without
 * its metadata (debug locations and type-based alias tags are numbered per
 * module; the code is the same), the attributes of the function and of its
 * calls, and the printed initializers of the local constants it reads. A
 * body that refers to a local variable, or to a local function that is not
 * folded itself first (its callees go first), is left internal: the copies
 * would reach different definitions.
 *
 * With debug info, the subprogram of each copy ld -r drops stays in its
 * partition's compile unit; the merge marks it dead (its address the
 * tombstone: ninja-gen/debugfix/discarded.c). Printing is what costs: the
 * C API's printer numbers the whole module's metadata (with -g, every
 * type and subprogram of the unit) at each call, so the plugin gives
 * mtpc_fold_marked a printer that numbers it once per module. */
#ifndef MTPC_FOLD_H
#define MTPC_FOLD_H

#include <llvm-c/Core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Prints a function or global variable of the module being folded as
 * LLVMPrintValueToString does (a string LLVMDisposeMessage frees); arg is
 * the caller's. */
typedef char *(*mtpc_fold_printer)(LLVMValueRef v, void *arg);

/* Fold the functions of m marked MTPC_FOLD_ATTR and remove the mark from
 * every function; IR printed by print(v, print_arg), or by
 * LLVMPrintValueToString when print is NULL. Returns how many were
 * renamed. */
int mtpc_fold_marked(LLVMModuleRef m, mtpc_fold_printer print, void *print_arg);

#ifdef __cplusplus
}
#endif

#endif
