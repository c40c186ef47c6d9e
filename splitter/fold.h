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
 * A module with debug info keeps every copy: ld -r would leave each dropped
 * copy's subprogram in its partition's compile unit at address 0, which
 * llvm-dwarfdump --verify rejects. */
#ifndef MTPC_FOLD_H
#define MTPC_FOLD_H

#include <llvm-c/Core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fold the functions of m marked MTPC_FOLD_ATTR and remove the mark from
 * every function. Returns how many were renamed. */
int mtpc_fold_marked(LLVMModuleRef m);

#ifdef __cplusplus
}
#endif

#endif
