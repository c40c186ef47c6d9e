/* graph_int.h: what the files of the graph share (graph.h has the rest). */
#ifndef MTPC_NG_GRAPH_INT_H
#define MTPC_NG_GRAPH_INT_H

#include "graph.h"

/* Decide which modules are split or relayed, and why (choose.c). By bytes
 * when gc->threshold >= 0; else by cost: the summary's instruction count,
 * replaced by the measured history where that disagrees by more than a
 * quarter; a module split last time stays split down to 3/4 of the
 * threshold; relays by graph_conf.relay. */
void graph_choose(const struct graph_conf *gc, struct graph *g);

/* The summary's instructions, else bytes turned into instructions. */
long long graph_estimated_cost(const struct module *m);

#endif
