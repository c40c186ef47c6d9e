/* partition.h: assign units to partitions and decide, per partition, what each
 * symbol becomes (owned definition, available_externally copy, carried
 * duplicate, declaration, or nothing), which locals must be promoted, and the
 * promoted names. */
#ifndef MTPC_PARTITION_H
#define MTPC_PARTITION_H

#include "analyze.h"

/* What symbol i is in partition p: split_plan.member[p][i]. */
enum member {
	M_NONE = 0, /* not needed: dropped */
	M_DECL,     /* referenced, defined elsewhere: declaration */
	M_CARRY,    /* duplicated or imported definition carried as is */
	M_COPY,     /* available_externally copy of a function owned elsewhere */
	M_OWN,      /* this partition defines it */
};

struct partition_opts {
	int max_partitions;   /* N */
	long min_cost;        /* fewer partitions if each would cost less than this */
	long copy_limit;      /* largest function (instructions) copied for inlining */
	double copy_budget;   /* copies per partition, as a fraction of its own cost */
	double critical_copy_budget; /* the same for the costliest partition (the
	                                critical path); no partition's copies take
	                                it past that one */
	double balance_slack; /* allowed overshoot of the ideal partition cost */
	double local_dup_budget; /* extra work of shared static duplicates, as a fraction of the module */
	int always_inline_copies; /* every partition calling an alwaysinline function
	                             gets a copy, whatever --copy-limit and the budgets
	                             say (a link's module: the calls a compile's join
	                             left to the backend, join.c) */
	int shared_statics_local; /* a static function several partitions carry
	                             (--local-dup-limit) stays internal in each,
	                             under its own name: each partition's inliner
	                             weighs it as the unsplit compile's does (the
	                             last call to a static), and what is left out
	                             of line is each partition's own (a plain
	                             compile's split; else one hidden linkonce_odr
	                             copy, merged by the link) */
	int copies_promote_noinline; /* a copy may promote a static it calls
	                                that no inliner can take (noinline,
	                                optnone, naked, varargs): the owner loses
	                                nothing an inliner would have done with it
	                                (a plain compile's split: SQLite's
	                                sqlite3BtreeNext, inlined into the
	                                interpreter loop by the unsplit compile,
	                                calls the noinline btreeNext) */
	int copies_for_carried; /* the callees of the definitions a partition
	                           carries (duplicated statics and comdats) may be
	                           copied too, not only those of its own functions
	                           (a plain compile's split: what they call is
	                           inlined nowhere else) */
	/* Optional seed (edit stability): previous partition of a symbol by name,
	 * or -1. seed_ctx is passed through. */
	int (*seed)(void *seed_ctx, const char *name);
	void *seed_ctx;
	int seed_exact;       /* the seed is this module's own plan: follow it
	                         regardless of the balance cap */
	int seed_keep;        /* seeded units keep their partition regardless of
	                         the cap (no measured reason to rebalance) */
	/* Optional, with seed: whether the previous plan gave partition p an
	 * available_externally copy of name. Such copies are kept (while p still
	 * calls the function and it may be copied) before any new one is
	 * chosen, budget or not: copy budgets follow partition costs, which
	 * measured times rescale, and a re-decided copy set changes a partition
	 * that no edit touched. */
	int (*seed_copy)(void *seed_ctx, const char *name, int p);
	/* Optional cost scale per symbol from measured times (1.0 if NULL). */
	double (*scale)(void *scale_ctx, const char *name);
	void *scale_ctx;
	/* Optional relative target sizes of the partitions, largest first
	 * (mtpc-link gives the partitions that start later, behind other
	 * modules' backends, less work). Used when there are at least as many
	 * as partitions (the first n, renormalized); NULL: equal shares. */
	const double *weights;
	int nweights;
};

struct split_plan {
	int n;                    /* partitions used */
	int nsyms;
	int *owner;               /* per unit */
	unsigned char **member;   /* [n][nsyms] enum member */
	char **new_name;          /* per symbol: promoted name or NULL (its own
	                             name for a local asm names) */
	char **local_extra;       /* more names to localize after the merge: */
	int nlocal_extra;         /* `.symver` names of promoted locals */
	unsigned char *keep;      /* per symbol: owner must not discard it (referenced elsewhere) */
	unsigned char *fold;      /* per symbol: a static each carrier keeps as its own
	                             internal copy (shared_statics_local), only
	                             called: marked for the fold (common/fold_names.h) */
	long *cost, *copy_cost;   /* per partition */
	int asm_partition;        /* partition that gets module inline asm */
	int npromoted, ncopies, nseeded;
	int nshared_dups;         /* static functions duplicated into several partitions */
	int nunseeded;            /* units the seed had no (single) answer for */
	int nunnamed;             /* of those, units of unnamed symbols only, which no plan names */
	long largest_unit;
};

void partition_module(const struct module_info *mi, const struct partition_opts *opt, struct split_plan *out);
void split_plan_free(struct split_plan *p);

#endif
