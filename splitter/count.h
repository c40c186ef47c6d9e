/* count.h: how many partitions to plan when the cores the partitions'
 * compiles share are known (mtpc-split --cores).
 *
 * Every partition carries code it does not own: available_externally copies
 * (split_plan.copy_cost) and the duplicated definitions it carries
 * (linkonce_odr comdats under --dup-limit, small statics, imported bodies),
 * which are in neither cost nor copy_cost. The more partitions, the more of
 * that work: on a template-heavy C++ unit 16 partitions cost 1.6-2.2x the
 * unsplit compile, so on 2 cores a split into 16 takes longer than 2 (or
 * none). choose_count() plans the module fresh at several counts, predicts
 * each plan's span on the cores, and picks the count (docs/splitter.md,
 * "How many partitions: --cores"). */
#ifndef MTPC_COUNT_H
#define MTPC_COUNT_H

#include "analyze.h"
#include "partition.h"

/* The rule's margins, in percent of the best span: the fewest partitions
 * whose span is within COUNT_SLACK_PCT of the best (fewer partitions: less
 * duplicated work, fewer promotions, for a difference in the noise of the
 * estimate); a seeded plan keeps its count while its fresh span is within
 * COUNT_SEED_PCT (an edit must not flip the count back and forth, which
 * would change every partition). */
#define COUNT_SLACK_PCT 3
#define COUNT_SEED_PCT 10

/* One candidate count, planned afresh. */
struct count_candidate {
	int partitions; /* the plan's count (partition_module may give fewer
	                   than asked: --min-cost, units) */
	long largest;   /* its costliest partition's work (count_partition_work) */
	long work;      /* all its partitions' work */
	long span;      /* predicted: max(largest, ceil(work / cores)) */
};

/* The choice and its reasons (plan.json's partition_count, --stats). */
struct count_choice {
	int cores;
	int chosen;       /* the count to plan */
	int fresh;        /* the count the rule picks without a seed */
	int seed_count;   /* the seed's count, or 0: none (or not a candidate) */
	long unsplit;     /* the module's work unsplit (count_module_work) */
	long best;        /* the smallest span of the candidates */
	struct count_candidate *cand; /* by descending count (heap) */
	int ncand;
	double seconds;   /* time spent planning the candidates (--stats only:
	                     plan.json holds no times) */
};

/* The work of partition p: the cost of what it owns, of its copies, and of
 * every function it carries without owning it (duplicated comdats and
 * statics, imported bodies, a shared static it defines for the others):
 * each is optimized, and at least partly compiled, once per carrier. */
long count_partition_work(const struct module_info *mi, const struct split_plan *plan, int p);

/* The work of the module unsplit: every live function once. */
long count_module_work(const struct module_info *mi);

/* Plan mi afresh (popt without its seed, scale or seed flags) at each
 * candidate count: popt->max_partitions (N, or the fewer its plan has), and
 * with fewer cores than that every count from min(N - 1, 2 x cores) down to
 * 2, N/2, N/4, ... above that, and seed_count when it lies in [2, N] (0: no
 * seed); with as many cores N alone. The units are rebuilt at
 * each count (rebuild_units), so each plan is the one `-n k` makes. Fills
 * *out with the fresh choice and, with a seed whose count is a candidate
 * within COUNT_SEED_PCT of the best, the seed's count as chosen. Leaves mi's
 * units built for out->chosen (aopt->partitions set to it). Deterministic:
 * the same module and options give the same choice. */
void choose_count(struct module_info *mi, struct analyze_opts *aopt, const struct partition_opts *popt,
		  int cores, int seed_count, struct count_choice *out);

/* One line for --stats, without the newline (heap). */
char *count_choice_describe(const struct count_choice *c);

void count_choice_free(struct count_choice *c);

#endif
