/* assign.c: see assign.h.
 *
 * Assignment is a cost-balanced greedy with call-graph affinity: units are
 * placed largest first, each into the partition it has the most edges to
 * among those that stay under the cost cap (ties: least loaded, then lowest
 * index). Large units therefore spread out and the many small ones follow
 * their callers and callees, which keeps inlining inside partitions and
 * promotions few. With a seed (the previous plan), units first go back to the
 * partition their symbols had, so unchanged code keeps its partition. */
#include "assign.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* What the assignment reads and writes. */
struct ctx {
	const struct module_info *mi;
	const struct partition_opts *opt;
	struct split_plan *plan;
	const double *scale; /* per partition: 1 / (n * its share) (assign.h) */
	int weighted;        /* the shares are not all equal */
};

/* A partition's load relative to its share. */
static double rel_load(const struct ctx *c, int p)
{
	return c->plan->cost[p] * c->scale[p];
}

static long unit_cost(const struct module_info *mi, const struct partition_opts *opt, int u)
{
	const struct unit *U = &mi->units[u];
	if (!opt->scale)
		return U->cost;
	double c = 0;
	for (int k = 0; k < U->nsyms; k++) {
		const struct sym *s = &mi->syms[U->syms[k]];
		if (s->kind == SYM_FUNC)
			c += s->cost * opt->scale(opt->scale_ctx, s->name);
	}
	return c < 1 ? 1 : (long)c;
}

long *assign_unit_costs(const struct module_info *mi, const struct partition_opts *opt)
{
	long *ucost = xmalloc((mi->nunits + 1) * sizeof *ucost);
	for (int u = 0; u < mi->nunits; u++)
		ucost[u] = unit_cost(mi, opt, u);
	return ucost;
}

struct order {
	long cost;
	int unit;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return (x->unit > y->unit) - (x->unit < y->unit);
}

/* Weight of unit u's edges to units owned by partition p. */
static long affinity(const struct ctx *c, int u, int p)
{
	const struct unit *U = &c->mi->units[u];
	long w = 0;
	for (int j = 0; j < U->nadj; j++)
		if (c->plan->owner[U->adj[j]] == p)
			w += U->adjw[j];
	return w;
}

/* The greedy's slack lets affinity win a few percent of balance, and those
 * percent are the critical path when there are as many cores as partitions.
 * Give them back: move units from the fullest partition to the emptiest while
 * that lowers the fullest, among the moves that gain at least half the best
 * one the unit least tied to its partition. Fresh plans only: a seeded plan
 * keeps its units where they were. */
/* How much moving a unit of cost u from partition hi to lo lowers hi's
 * relative load without making lo's the higher (with equal shares:
 * min(u, gap - u)). */
static double move_gain(const struct ctx *c, long u, int hi, int lo)
{
	const long *load = c->plan->cost;
	double after_hi = (load[hi] - u) * c->scale[hi], after_lo = (load[lo] + u) * c->scale[lo];
	return rel_load(c, hi) - (after_hi > after_lo ? after_hi : after_lo);
}

static void rebalance(struct ctx *c, const long *ucost)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	long *load = P->cost;
	for (int iter = 0; iter < 256; iter++) {
		int hi = 0, lo = 0;
		for (int p = 1; p < P->n; p++) {
			if (rel_load(c, p) > rel_load(c, hi))
				hi = p;
			if (rel_load(c, p) < rel_load(c, lo))
				lo = p;
		}
		double best_gain = 0;
		for (int u = 0; u < mi->nunits; u++)
			if (P->owner[u] == hi && move_gain(c, ucost[u], hi, lo) > best_gain)
				best_gain = move_gain(c, ucost[u], hi, lo);
		/* below 0.1% of the partition the move is not worth a promotion */
		if (best_gain <= rel_load(c, hi) / 1000)
			break;
		int pick = -1;
		long pick_loss = 0;
		double pick_gain = 0;
		for (int u = 0; u < mi->nunits; u++) {
			if (P->owner[u] != hi)
				continue;
			double g = move_gain(c, ucost[u], hi, lo);
			if (2 * g < best_gain)
				continue;
			long loss = affinity(c, u, hi) - affinity(c, u, lo);
			if (pick < 0 || loss < pick_loss || (loss == pick_loss && g > pick_gain)) {
				pick = u;
				pick_loss = loss;
				pick_gain = g;
			}
		}
		P->owner[pick] = lo;
		load[hi] -= ucost[pick];
		load[lo] += ucost[pick];
	}
}

/* Each partition's cost cap: its share of the module, with the slack.
 * Equal shares are water-filled: units bigger than the fair share get a
 * partition of their own, and the rest share the remaining partitions
 * evenly. Unequal shares skip that: a unit bigger than its share lands
 * where the relative load is lowest (place_by_affinity), and rebalance()
 * evens out. Sets plan->largest_unit. Heap array. */
static long *cost_caps(struct ctx *c, const long *ucost)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	int n = P->n;
	long total = 0, biggest = 0;
	for (int u = 0; u < mi->nunits; u++) {
		total += ucost[u];
		if (ucost[u] > biggest)
			biggest = ucost[u];
	}
	P->largest_unit = biggest;
	long rest = total;
	int nrest = n;
	struct order *big = xmalloc((mi->nunits + 1) * sizeof *big);
	for (int u = 0; u < mi->nunits; u++)
		big[u] = (struct order){ucost[u], u};
	qsort(big, mi->nunits, sizeof *big, cmp_order);
	for (int k = 0; k < mi->nunits && nrest > 1 && big[k].cost > rest / nrest; k++) {
		rest -= big[k].cost;
		nrest--;
	}
	free(big);
	long *cap = xmalloc(n * sizeof *cap);
	for (int p = 0; p < n; p++) {
		if (!c->weighted)
			cap[p] = (long)((double)rest / nrest * (1.0 + c->opt->balance_slack)) + 1;
		else
			cap[p] = (long)((double)total / (n * c->scale[p]) * (1.0 + c->opt->balance_slack)) + 1;
	}
	return cap;
}

/* Units back where the seed put their symbols: each goes to the partition
 * its symbols' costs vote for (nunseeded counts units with no vote or a
 * split one), unless that would take the partition past 1.15 times its
 * cap; with seed_exact or seed_keep, regardless. */
static void place_seeded(struct ctx *c, const long *ucost, const long *cap)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	int n = P->n;
	long *load = P->cost;
	long *seed_cap = xmalloc(n * sizeof *seed_cap);
	for (int p = 0; p < n; p++)
		seed_cap[p] = (long)(cap[p] * 1.15);
	long *votes = xcalloc(n, sizeof *votes);
	for (int u = 0; u < mi->nunits; u++) {
		const struct unit *U = &mi->units[u];
		memset(votes, 0, n * sizeof *votes);
		int any = 0;
		for (int k = 0; k < U->nsyms; k++) {
			const struct sym *s = &mi->syms[U->syms[k]];
			if (!s->name[0])
				continue;
			int p = c->opt->seed(c->opt->seed_ctx, s->name);
			if (p >= 0 && p < n) {
				votes[p] += s->cost + 1;
				any = 1;
			}
		}
		int best = 0, split = 0;
		for (int p = 1; p < n; p++)
			if (votes[p] > votes[best])
				best = p;
		for (int p = 0; p < n; p++)
			split += votes[p] > 0;
		if (!any || split > 1) {
			P->nunseeded++;
			if (!any) {
				int named = 0;
				for (int k = 0; k < U->nsyms && !named; k++)
					named = mi->syms[U->syms[k]].name[0] != 0;
				P->nunnamed += !named;
				continue;
			}
		}
		/* Stability beats a few percent of balance: measured times
		 * rescale costs a little on every build, and a unit refused by
		 * the tight cap would move, changing two partitions. */
		if (c->opt->seed_exact || c->opt->seed_keep || load[best] + ucost[u] <= seed_cap[best]) {
			P->owner[u] = best;
			load[best] += ucost[u];
			P->nseeded++;
		}
	}
	free(votes);
	free(seed_cap);
}

/* The units not placed yet, largest first, each into the partition it has
 * the most affinity to among those it fits under the cap (ties: the
 * lowest relative load, then the lowest index); where it fits nowhere,
 * into the partition with the lowest relative load. */
static void place_by_affinity(struct ctx *c, const long *ucost, const long *cap)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	int n = P->n;
	long *load = P->cost;
	struct order *ord = xmalloc((mi->nunits + 1) * sizeof *ord);
	int no = 0;
	for (int u = 0; u < mi->nunits; u++)
		if (P->owner[u] < 0)
			ord[no++] = (struct order){ucost[u], u};
	qsort(ord, no, sizeof *ord, cmp_order);
	long *aff = xcalloc(n, sizeof *aff);
	for (int k = 0; k < no; k++) {
		int u = ord[k].unit;
		const struct unit *U = &mi->units[u];
		memset(aff, 0, n * sizeof *aff);
		for (int j = 0; j < U->nadj; j++) {
			int o = P->owner[U->adj[j]];
			if (o >= 0)
				aff[o] += U->adjw[j];
		}
		int best = -1;
		for (int p = 0; p < n; p++) {
			if (load[p] + ucost[u] > cap[p])
				continue;
			if (best < 0 || aff[p] > aff[best] || (aff[p] == aff[best] && rel_load(c, p) < rel_load(c, best)))
				best = p;
		}
		if (best < 0) {
			best = 0;
			for (int p = 1; p < n; p++)
				if (rel_load(c, p) < rel_load(c, best))
					best = p;
		}
		P->owner[u] = best;
		load[best] += ucost[u];
	}
	free(aff);
	free(ord);
}

static void assign_greedy(struct ctx *c, const long *ucost)
{
	long *cap = cost_caps(c, ucost);
	if (c->opt->seed)
		place_seeded(c, ucost, cap);
	place_by_affinity(c, ucost, cap);
	free(cap);
	if (!c->plan->nseeded)
		rebalance(c, ucost);
}

/* A unit of variables only (a table, a buffer) costs no compile time, but
 * away from the code that reads it it is a promotion, and a promoted table
 * is one the backend no longer turns into a relative lookup table (SQLite's
 * opcode names: 187 dynamic relocations more at every start). The caps and
 * rebalance() move code without its data: give each such unit back to the
 * partition it has the most edges to (ties keep it where it is). */
static int data_only(const struct module_info *mi, int u)
{
	const struct unit *U = &mi->units[u];
	for (int k = 0; k < U->nsyms; k++)
		if (mi->syms[U->syms[k]].kind != SYM_VAR)
			return 0;
	return !U->has_asm;
}

/* Repeated until no unit moves (at most DATA_PASSES times): a unit's
 * edges to other data units make one pass depend on where the data was
 * before it, and a seeded plan (whose data already followed) must come out
 * as the fresh one did. One pass left gtest's test fixtures' typeinfo
 * names, which only their typeinfo reads, elsewhere on the next compile of
 * the same source: 8 of 16 partitions changed. */
#define DATA_PASSES 16
static void data_follows_code(struct ctx *c, const long *ucost)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	/* A partition with no code keeps its data: emptied, it would be a
	 * slot with nothing to compile. */
	unsigned char *has_code = xcalloc(P->n, 1);
	for (int u = 0; u < mi->nunits; u++)
		if (!data_only(mi, u))
			has_code[P->owner[u]] = 1;
	for (int pass = 0, moved = 1; moved && pass < DATA_PASSES; pass++) {
		moved = 0;
		for (int u = 0; u < mi->nunits; u++) {
			if (!data_only(mi, u) || !has_code[P->owner[u]])
				continue;
			int best = P->owner[u];
			long most = affinity(c, u, best);
			for (int p = 0; p < P->n; p++) {
				long w = affinity(c, u, p);
				if (w > most) {
					best = p;
					most = w;
				}
			}
			if (best == P->owner[u])
				continue;
			P->cost[P->owner[u]] -= ucost[u];
			P->cost[best] += ucost[u];
			P->owner[u] = best;
			moved = 1;
		}
	}
	free(has_code);
}

void assign_units(const struct module_info *mi, const struct partition_opts *opt, struct split_plan *plan,
		  const double *scale, int weighted, const long *ucost)
{
	struct ctx c = {mi, opt, plan, scale, weighted};
	assign_greedy(&c, ucost);
}

void assign_rebalance(const struct module_info *mi, struct split_plan *plan, const double *scale,
		      const long *ucost)
{
	struct ctx c = {mi, NULL, plan, scale, 0};
	rebalance(&c, ucost);
}

void assign_data_follows_code(const struct module_info *mi, struct split_plan *plan, const long *ucost)
{
	struct ctx c = {mi, NULL, plan, NULL, 0};
	data_follows_code(&c, ucost);
}
