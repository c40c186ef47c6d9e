/* bitcode_cost.h: the cost estimate mtpc-link and mtpc-compile choose by
 * (the instructions of a module's ThinLTO summary), read from the bitcode
 * in plain C. The same figures as `mtpc-split --print-cost`
 * (splitter/shim_thinlto.cpp, mtpc_summary_cost, which reads them through
 * LLVM), without a process that loads libLLVM: about 15 ms a link, a
 * tenth of the fixed cost of a small link through MTPC. Only what the
 * estimate needs is read: the summary blocks' function records, every
 * other block skipped by the length it states. tests/units/test_bitcode_cost.c
 * checks it against LLVM's reader. */
#ifndef MTPC_BITCODE_COST_H
#define MTPC_BITCODE_COST_H

#include <stddef.h>

/* The summed instruction counts (*insts) and number (*funcs) of the
 * function summaries of every module of the bitcode in data[0..len) (a
 * ThinLTO object; a split LTO unit has two modules). Returns 0 (a module
 * without a summary adds nothing: LLVM's reader gives it an empty one), 1
 * when the data holds no module (0 and 0), or -1 when it is not bitcode
 * this reader can follow (the caller asks LLVM instead). */
int mtpc_bitcode_cost(const void *data, size_t len, long long *insts, long long *funcs);

/* mtpc_bitcode_cost of the file at path, mapped rather than read: only the
 * pages of the blocks read are touched. -1 also when it cannot be opened
 * (quiet: the caller asks LLVM, which says why). */
int mtpc_bitcode_file_cost(const char *path, long long *insts, long long *funcs);

#endif
