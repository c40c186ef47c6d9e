/* assign.h: which partition owns each unit: split_plan.owner, with each
 * partition's cost (split_plan.cost), seeded units (nseeded, nunseeded)
 * and the largest unit (largest_unit).
 *
 * Balance is judged per partition on its load relative to its share:
 * scale[p] = 1 / (n * p's share of the module) (partition_opts.weights;
 * exactly 1.0 with equal shares, so every decision is then the integer one
 * of an unweighted split). partition_module (partition.c) calls these in
 * order: assign_unit_costs, assign_units, for a fresh plan
 * assign_rebalance again once copies are measured, then
 * assign_data_follows_code. The result depends only on the module, the
 * options and the seed. */
#ifndef MTPC_ASSIGN_H
#define MTPC_ASSIGN_H

#include "partition.h"

/* Each unit's cost for the balance (heap, one per unit): its
 * instructions, scaled by measured times when opt->scale is set. */
long *assign_unit_costs(const struct module_info *mi, const struct partition_opts *opt);

/* Assign every unit (plan->owner must be -1 for all; plan->n set): first
 * from the seed (opt->seed), then the rest largest first by affinity under
 * water-filled cost caps; a fresh plan (nothing seeded) is then rebalanced
 * (assign_rebalance). weighted: the shares are not all equal. */
void assign_units(const struct module_info *mi, const struct partition_opts *opt, struct split_plan *plan,
		  const double *scale, int weighted, const long *ucost);

/* The greedy's slack lets affinity win a few percent of balance, which are
 * the critical path when there are as many cores as partitions: move
 * units from the fullest partition (relative to its share) to the
 * emptiest while that lowers the fullest. Only for fresh plans: a seeded
 * plan keeps its units where they were. */
void assign_rebalance(const struct module_info *mi, struct split_plan *plan, const double *scale,
		      const long *ucost);

/* Give each unit of variables only (no compile cost) back to the partition
 * it has the most affinity to: the caps and the rebalancing move code
 * without its data, and a table away from its reader is a promotion. */
void assign_data_follows_code(const struct module_info *mi, struct split_plan *plan, const long *ucost);

#endif
