/* join.h: the compile-side inverse of a split (mtpc-split --join).
 *
 * A huge translation unit's frontend output (LLVM passes off) is split like
 * any module; each partition then runs the ThinLTO pre-link pipeline of the
 * compile on its own, and the join makes one module of them again, as the
 * compile's object: every partition linked into one module (the owner's
 * definition wins over the others' available_externally copies; duplicated
 * linkonce_odr bodies merge), every symbol the split changed given back its
 * original name, linkage and visibility (promoted statics are internal
 * again, owners made weak_odr are linkonce_odr again), then what the
 * pre-link pipeline must see whole runs on the joined module: the inliner,
 * on the calls no partition's inliner saw (a callee defined in another
 * partition and not copied into the caller's), GlobalOpt
 * (address significance, statics never written), GlobalDCE (a
 * static every partition inlined is gone, as in the unsplit compile) and
 * constant merging (the partitions' copies of small constants become one),
 * and the module is written as ThinLTO bitcode with its summary, as clang
 * writes it (two modules for -fsplit-lto-unit). */
#ifndef MTPC_JOIN_H
#define MTPC_JOIN_H

/* Join the partitions parts[0..n-1] (ThinLTO bitcode from the pre-link
 * compiles, in partition order) of the split of original (the bitcode the
 * split read, plan its plan.json) into out, written atomically and only if
 * changed; inline_calls: run that inliner (0: --no-join-inline). Returns 0,
 * or -1 with *error (heap) naming the file and the problem; out is then
 * untouched. */
int join_partitions(const char *original, const char *plan, char *const *parts, int n, const char *out,
		    int inline_calls, char **error);

#endif
