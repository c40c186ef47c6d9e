/* inner.h: what mtpc-link and mtpc-distribute share around their inner
 * build: finding the tools, the plan cache checked once per link, and the
 * one summary line a link prints. */
#ifndef MTPC_NG_INNER_H
#define MTPC_NG_INNER_H

#include "graph.h"
#include "mtpc_cache.h"

#include <stdio.h>

/* Online cores (at least 1): the default of --jobs and --partitions. */
int inner_cores(void);

/* mtpc-split next to the running tool (installed layout), else in the build
 * tree, else "mtpc-split" on PATH; heap string. self: the tool's path. */
char *inner_find_split_tool(const char *self);

/* The directory of the real driver binary: /usr/bin/clang-19 resolves to
 * /usr/lib/llvm-19/bin, where ld.lld, llvm-objcopy and llvm-dwp live too
 * (else the bin directory of the LLVM MTPC was built against); heap string. */
char *inner_find_llvm_bin(const char *driver);

/* The plan cache (cache: its path or NULL for the default), opened once per
 * link for the module history. Unusable: NULL, one warning and
 * $MTPC_CACHE_QUIET set for the inner build, whose steps would otherwise
 * repeat the warning once each. */
mtpc_cache *inner_open_cache(const char *cache);

/* graph_history_fn over an open plan cache. */
double inner_cache_history(void *ctx, const char *module_id, int *was_split);

/* Print "<prog>: <output>: M modules, S split (<module>: N partitions, ...)
 * [, U unused][, K native objects][, A native archives], T s; <reasons>"
 * on f. S counts the split modules the link uses (a fallback among them is
 * listed as such), U the archive members it does not pull in; the reasons
 * say which rule chose and name the costs of the modules near it. */
void inner_summary(FILE *f, const struct graph *g, const struct graph_conf *gc, const char *output,
		   double secs);

#endif
