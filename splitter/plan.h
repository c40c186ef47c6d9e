/* plan.h: the plan file (plan.json, format in docs/architecture.md) and the
 * seed read back from an earlier plan. JSON goes through jansson. */
#ifndef MTPC_PLAN_H
#define MTPC_PLAN_H

#include "analyze.h"
#include "emit.h"
#include "count.h"
#include "partition.h"

struct plan_meta {
	const char *input_hash;
	const char *options_hash;
	const char *options_text;
	double split_seconds;
	const struct count_choice *count; /* --cores: why this many partitions
	                                     (plan.json's partition_count), or
	                                     NULL: the plan has no such key */
};

/* Serialize the plan. Deterministic: it holds no times (the same input and
 * options give the same bytes), so meta->split_seconds is not written; the
 * cache keeps times apart from the plan. Heap string. */
char *plan_to_json(const struct module_info *mi, const struct split_plan *plan, const struct plan_meta *meta);

/* Symbols to make local again after the merge, one per line. Heap string. */
char *plan_localize_list(const struct module_info *mi, const struct split_plan *plan);

/* Names to restore after the merge, one "partition-name real-name" pair per
 * line (for `llvm-objcopy --redefine-syms`): promoted internals get their own
 * names back once they are local again, so symbolizers and profilers show what
 * the unsplit build shows (private and unnamed ones keep the promoted name:
 * they have none in an object file); ThinLTO promotions get their real
 * `.llvm.<hash>` names back from the edit-stable ones, unless verbatim (the
 * one partition is the input module as it was, with its real names), and
 * numbered local functions (stabilize_local_names) their numbers. Heap
 * string. */
char *plan_rename_list(const struct module_info *mi, const struct split_plan *plan, int verbatim);

/* A previous plan as a seed: symbol name -> partition, for names it owned. */
struct plan_seed {
	char **names;
	int *parts;
	int n;
	int npartitions;
	char *input_hash, *options_hash;
	double *measured; /* per partition measured seconds (or -1), may be NULL */
	int rebalance;    /* the measured times show a real imbalance (every
	                     partition measured, max/mean > 1.2, slowest > 2 s):
	                     only then do they rescale costs and may units move */
	long *cost;       /* per partition estimated cost */
	char **copy_names; /* the plan's copies, sorted by (name, partition) */
	int *copy_parts;
	int ncopies;
};

/* Parse plan JSON text into a seed. Returns 0, or -1 with *error (heap) if the
 * text is not a valid plan. */
int plan_seed_parse(const char *json, struct plan_seed *seed, char **error);
/* With unequal target shares (--weights, as in partition_opts), an intended
 * difference in measured times is no imbalance: judge seed->rebalance on the
 * times divided by the shares. */
void plan_seed_weigh(struct plan_seed *seed, const double *weights, int nweights);
/* The seed's partition for name, or -1. Matches partition_opts.seed. */
int plan_seed_lookup(void *seed, const char *name);
/* Cost scale from measured times (measured/estimated of the symbol's old
 * partition, normalized); 1.0 when unknown. Matches partition_opts.scale. */
double plan_seed_scale(void *seed, const char *name);
/* Whether the seed's partition p had a copy of name. Matches
 * partition_opts.seed_copy. */
int plan_seed_had_copy(void *seed, const char *name, int p);
void plan_seed_free(struct plan_seed *seed);

#endif
