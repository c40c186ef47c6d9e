/* ctor_chunks.h: a module constructor that only calls its static
 * initializers, cut into chunks a partition each can own whole.
 *
 * A C++ source with many namespace-scope objects (a test file: one per
 * TEST()) gets one constructor, `_GLOBAL__sub_I_<file>`, that calls clang's
 * `__cxx_global_var_init.<n>` functions one after another, each called
 * from there only. The plain compile inlines every one into it (the last
 * call to a static is free). Split, the constructor's unit may take them
 * only up to 1/16 of the module (units.c), so the rest land in other
 * partitions, promoted, each out of line with its own prologue and call:
 * googletest's unit test at 16 partitions, 300 of them, `.text.startup`
 * +25 KB, 3% of the object's code.
 *
 * So before the split, in a plain compile's module (--native), such a
 * constructor's calls are moved, in order, into new internal functions
 * (`<constructor>.c<hash>`), and the constructor calls those in order:
 * what runs, and in what order, is unchanged. Each chunk is the single
 * caller of its initializers, so each keeps them in its own unit (and
 * inlines them), and the constructor's unit takes chunks, not
 * initializers, up to its cap.
 *
 * Chunks end where the content says, not at a count: after an initializer
 * whose shape (its opcodes and the global names it uses that an edit
 * elsewhere does not renumber) hashes to a multiple of 4, once the chunk
 * has half its target cost, or at twice the target. Adding or removing one
 * initializer so changes one chunk, and a chunk's name is the hash of its
 * first initializer's shape, so the others keep their names and bodies
 * (and their partitions their bitcode).
 *
 * With debug info, each chunk gets a copy of the constructor's subprogram
 * under its own name, each moved call keeps its line and column there, and
 * the constructor's call of a chunk has the location of the chunk's first
 * call.
 *
 * A constructor is left alone unless it is internal, named only by
 * llvm.global_ctors, one block of direct calls without arguments to
 * internal functions called nowhere else, then `ret void`; with debug info,
 * each call located in the constructor itself. */
#ifndef MTPC_CTOR_CHUNKS_H
#define MTPC_CTOR_CHUNKS_H

#include <llvm-c/Core.h>

/* Cut every such constructor of m into chunks of about 1/64 of the
 * module's instructions (their initializers', rounded down to a power of
 * two so that an edit seldom moves it). Returns how many chunks were made
 * (0: m is unchanged). */
int ctor_chunks(LLVMModuleRef m);

#endif
