/* units.h: units, the groups of owned symbols that must share a partition,
 * and the affinity edges between them that the assignment (assign.c)
 * follows.
 *
 * A unit is what one partition owns whole: an SCC of the direct-call graph
 * (unless it is too big for the balance: analyze_opts.scc_cut), a comdat,
 * an alias or ifunc with its base object, the users of several names of one
 * object with those names, a function with the users of its blockaddress,
 * everything module asm names (with the sections it names), all
 * constructors and destructors, the globals of one `__start_`/`__stop_`
 * section, and small static functions called from a single unit
 * (docs/splitter.md, "Units", says why each). Built once per module, after
 * roles and liveness (analyze.c): only ROLE_OWNED symbols are in units. */
#ifndef MTPC_UNITS_H
#define MTPC_UNITS_H

#include "analyze.h"
#include "intlist.h"

/* Several names of one object (an alias, its aliasee, other aliases of it):
 * flags them SF_ALIAS_NAME when code outside them takes the address of two
 * or more, and that code SF_ALIAS_ADDR (counted in mi->nalias_users), so
 * build_units keeps the users with the names and the roles never copy or
 * duplicate them. Call before the roles are decided (they read the flags). */
void flag_alias_names(struct module_info *mi);

/* Group mi's owned symbols into units (mi->units, mi->nunits, each owned
 * symbol's sym.unit, mi->total_cost, mi->ncut_sccs) and link them by
 * weighted affinity edges (unit.adj, unit.adjw). ncomdats: the number of
 * comdat indices in sym.comdat. blockaddr: (function, user of a
 * blockaddress of it) pairs; asm_set: (function, B) pairs of
 * asm_scan.set_uses (asm_names.h). Units are numbered by their smallest
 * symbol index and list their symbols ascending, so the result depends on
 * the module alone. */
void build_units(struct module_info *mi, int ncomdats, const struct intpairs *blockaddr,
		 const struct intpairs *asm_set, const struct analyze_opts *opt);

/* The units again for another opt->partitions (the only option of the
 * units that depends on the count: the SCC cut is a share of the module),
 * from the ties build_units kept (mi->tied); a no-op when the cut limit is
 * the one the units have. mtpc-split --cores plans at several counts, and
 * each plan must be the one `-n k` would make. */
void rebuild_units(struct module_info *mi, const struct analyze_opts *opt);

#endif
