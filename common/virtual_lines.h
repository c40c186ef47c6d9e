/* virtual_lines.h: the contract between mtpc-split --virtual-lines, which
 * renumbers the source lines in each partition (splitter/llvm_shim.h), and
 * the merge step, which puts the real ones back into the compiled objects
 * (ninja-gen/debugfix/debugfix.h, ninja-gen/debugfix/lines.c). Only a link's
 * split uses them: a compile's split (mtpc-compile) joins its partitions
 * before code generation, so its module keeps the real lines.
 *
 * Virtual lines are MTPC_VIRTUAL_LINE_BASE and up, real lines below it (a
 * module with a larger real line is left as it is). OUTDIR/lines.txt has one
 * line per span, "P VIRTUAL FIRST COUNT": in partition P, virtual lines
 * VIRTUAL .. VIRTUAL+COUNT-1 are real lines FIRST .. FIRST+COUNT-1. A
 * partition's spans come in increasing VIRTUAL order and do not overlap. */
#ifndef MTPC_VIRTUAL_LINES_H
#define MTPC_VIRTUAL_LINES_H

#define MTPC_VIRTUAL_LINE_BASE (1u << 30)

#endif
