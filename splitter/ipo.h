/* ipo.h: the interprocedural passes that must see the whole module.
 *
 * The ThinLTO backend runs passes that reason about a function from all its
 * callers, or about a caller from its callees' bodies: constant arguments
 * propagated into internal functions (IPSCCP), dead arguments and return
 * values removed (DeadArgElim), internal globals folded or shrunk
 * (GlobalOpt), nounwind / memory effects / norecurse inferred bottom-up
 * (FunctionAttrs). In a partition, a function owned elsewhere is a promoted
 * declaration or an available_externally copy, so those facts are lost:
 * invokes stay invokes with their landing pads, a helper always called with
 * the same string keeps its strlen and its slow path, and its inline cost no
 * longer fits. Doing this once on the whole module before it is split gives
 * every partition the facts the unsplit backend would have found, in the
 * bodies and in the declarations' attributes. */
#ifndef MTPC_IPO_H
#define MTPC_IPO_H

#include <llvm-c/Core.h>

/* The LLVM passes run (LLVMRunPasses syntax), after ipo.c's own constant
 * argument propagation. */
extern const char ipo_pipeline[];

/* Propagate constant arguments into internal functions, then run
 * ipo_pipeline on m. Returns 0, or -1 with *error set (heap string). */
int ipo_run(LLVMModuleRef m, char **error);

#endif
