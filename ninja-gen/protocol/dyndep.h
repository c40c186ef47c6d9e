/* dyndep.h: the dyndep file of a split module, which the split step writes
 * and the graph's slot and merge edges bind (graph.h): which of the kmax
 * slots are used, and what the merge waits for. Ninja's rules for it
 * (docs/build-integration.md, "Ninja dyndep"): every edge that binds the
 * file is listed, with only implicit inputs and restat; the merge takes the
 * used slots' objects and the split's symbol lists, or on a fallback
 * (n == 0) the module's plain backend. */
#ifndef MTPC_NG_DYNDEP_H
#define MTPC_NG_DYNDEP_H

#include "buf.h"

/* The dyndep file of the module in dir (as build.ninja names it): n used
 * slots out of kmax, or the fallback when n == 0: with fallback_edge, the
 * module's plain backend (a link's); without, nothing (a compile's join
 * runs the plain compile itself). */
void dyndep_of_split(struct buf *b, const char *dir, int kmax, int n, int fallback_edge);

#endif
