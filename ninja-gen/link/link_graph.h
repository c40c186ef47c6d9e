/* link_graph.h: mtpc-link's part of the inner graph (graph.h). From the
 * parsed link command (linkcmd.h): the thin link (on the bitcode inputs,
 * archives extracted, all paths absolute), the module edges of the graph,
 * the final link (the original command on the native objects) and, with
 * -gsplit-dwarf, the .dwp step; and the files only a link's inner build has:
 * the thin link's and the final link's response files and the module list
 * the thin-link step reads (inner_dir.h names them). */
#ifndef MTPC_NG_LINK_GRAPH_H
#define MTPC_NG_LINK_GRAPH_H

#include "graph.h"
#include "linkcmd.h"

struct link_graph {
	struct graph g;
	struct buf thinlink_rsp; /* the link command for --thinlto-index-only (absolute paths) */
	struct buf link_rsp;     /* the final link command on the native objects */
	struct buf modules_list; /* absolute module paths, one a line */
};

/* The whole inner build of the link lc. Returns 0, or -1 after an error
 * message (the caller then runs the original link command unchanged).
 * Extracts bitcode archives into the inner dir. */
int link_graph_build(const struct graph_conf *gc, const struct linkcmd *lc, struct link_graph *lg);

/* Write its files (creating the inner dir), each only if changed. Returns 0
 * or -1 after an error message. */
int link_graph_write(const struct graph_conf *gc, const struct link_graph *lg);
void link_graph_free(struct link_graph *lg);

#endif
