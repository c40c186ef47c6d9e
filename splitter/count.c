/* count.c: see count.h.
 *
 * The prediction is the span of the plan's compiles on the cores: none can
 * end before its costliest partition, and all of them share the cores, so
 * max(largest, ceil(total / cores)). Work counts every instruction a
 * partition optimizes: what it owns, its copies, and what it carries. */
#include "count.h"
#include "buf.h"
#include "units.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

long count_partition_work(const struct module_info *mi, const struct split_plan *plan, int p)
{
	long work = plan->cost[p] + plan->copy_cost[p];
	const unsigned char *m = plan->member[p];
	for (int i = 0; i < mi->nsyms; i++) {
		const struct sym *s = &mi->syms[i];
		/* Not an owned unit's (in cost) nor a copy (in copy_cost): a
		 * duplicated or imported body, or the one partition that defines
		 * a shared static for the others (partition.c, share_statics). */
		if (s->kind == SYM_FUNC && s->role != ROLE_OWNED && (m[i] == M_CARRY || m[i] == M_OWN))
			work += s->cost;
	}
	return work;
}

long count_module_work(const struct module_info *mi)
{
	long work = 0;
	for (int i = 0; i < mi->nsyms; i++) {
		const struct sym *s = &mi->syms[i];
		if (s->kind == SYM_FUNC &&
		    (s->role == ROLE_OWNED || s->role == ROLE_DUP || s->role == ROLE_IMPORTED))
			work += s->cost;
	}
	return work;
}

/* Plan mi afresh at count k (the units rebuilt for k) and predict it. */
static struct count_candidate plan_candidate(struct module_info *mi, struct analyze_opts *aopt,
					     const struct partition_opts *fresh, int k, int cores)
{
	aopt->partitions = k;
	rebuild_units(mi, aopt);
	struct partition_opts opt = *fresh;
	opt.max_partitions = k;
	struct split_plan plan;
	partition_module(mi, &opt, &plan);
	struct count_candidate c = {plan.n, 0, 0, 0};
	for (int p = 0; p < plan.n; p++) {
		long w = count_partition_work(mi, &plan, p);
		c.work += w;
		if (w > c.largest)
			c.largest = w;
	}
	long share = (c.work + cores - 1) / cores;
	c.span = c.largest > share ? c.largest : share;
	split_plan_free(&plan);
	return c;
}

static int cmp_desc(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x < y) - (x > y);
}

/* Adds k to v (of *nv) unless it is there. */
static void add_count(int *v, int *nv, int k)
{
	for (int i = 0; i < *nv; i++)
		if (v[i] == k)
			return;
	v[(*nv)++] = k;
}

/* The counts to plan below n, descending (v holds n entries). Every count
 * up to twice the cores: the best span lies near the cores (below them the
 * largest partition bounds it, above them the growing copies over the
 * cores do), and twice leaves room for a module whose big units keep the
 * largest partition above the mean. Above that halvings of n only: there
 * the span can only grow with the copies, and a plan costs about as much as
 * the analysis. */
static int candidate_counts(int n, int cores, int seed_count, int *v)
{
	int nv = 0;
	int dense = n - 1 < 2 * cores ? n - 1 : 2 * cores;
	for (int k = dense; k >= 2; k--)
		add_count(v, &nv, k);
	for (int k = n / 2; k > dense; k /= 2)
		add_count(v, &nv, k);
	if (seed_count >= 2 && seed_count < n)
		add_count(v, &nv, seed_count);
	qsort(v, nv, sizeof *v, cmp_desc);
	return nv;
}

/* The rule (count.h): the fewest partitions within COUNT_SLACK_PCT of the
 * best span; a seed's count within COUNT_SEED_PCT. */
static void apply_rule(struct count_choice *out, int seed_count)
{
	out->best = out->cand[0].span;
	for (int i = 1; i < out->ncand; i++)
		if (out->cand[i].span < out->best)
			out->best = out->cand[i].span;
	out->fresh = out->cand[0].partitions;
	for (int i = 0; i < out->ncand; i++) {
		const struct count_candidate *c = &out->cand[i];
		if (c->span * 100 <= out->best * (100 + COUNT_SLACK_PCT) && c->partitions < out->fresh)
			out->fresh = c->partitions;
		if (seed_count && c->partitions == seed_count)
			out->seed_count = seed_count;
	}
	out->chosen = out->fresh;
	for (int i = 0; out->seed_count && i < out->ncand; i++)
		if (out->cand[i].partitions == out->seed_count &&
		    out->cand[i].span * 100 <= out->best * (100 + COUNT_SEED_PCT))
			out->chosen = out->seed_count;
}

void choose_count(struct module_info *mi, struct analyze_opts *aopt, const struct partition_opts *popt,
		  int cores, int seed_count, struct count_choice *out)
{
	double t0 = mtpc_now();
	memset(out, 0, sizeof *out);
	out->cores = cores;
	out->unsplit = count_module_work(mi);
	/* Fresh plans: the prediction must not depend on where an earlier
	 * plan put things, or measured times, or the seed would choose its own
	 * count. */
	struct partition_opts fresh = *popt;
	fresh.seed = NULL;
	fresh.seed_copy = NULL;
	fresh.seed_ctx = NULL;
	fresh.scale = NULL;
	fresh.scale_ctx = NULL;
	fresh.seed_exact = fresh.seed_keep = 0;
	int n = popt->max_partitions < 1 ? 1 : popt->max_partitions;
	struct count_candidate first = plan_candidate(mi, aopt, &fresh, n, cores);
	n = first.partitions; /* fewer than asked: every larger count is this plan */
	int *ks = xmalloc((n + 1) * sizeof *ks);
	/* With a core for each partition the span is the largest partition,
	 * which fewer partitions can only lengthen (they differ in copies, a
	 * few percent the estimate does not resolve): -n's plan stays. */
	int nk = cores >= n ? 0 : candidate_counts(n, cores, seed_count, ks);
	out->cand = xmalloc((nk + 1) * sizeof *out->cand);
	out->cand[out->ncand++] = first;
	for (int i = 0; i < nk; i++) {
		struct count_candidate c = plan_candidate(mi, aopt, &fresh, ks[i], cores);
		/* (a count the clamps gave already) */
		if (c.partitions != out->cand[out->ncand - 1].partitions)
			out->cand[out->ncand++] = c;
	}
	free(ks);
	apply_rule(out, seed_count);
	aopt->partitions = out->chosen;
	rebuild_units(mi, aopt);
	out->seconds = mtpc_now() - t0;
}

char *count_choice_describe(const struct count_choice *c)
{
	struct buf b = {0};
	buf_printf(&b, "--cores %d: %d partitions (fresh choice %d", c->cores, c->chosen, c->fresh);
	if (c->seed_count)
		buf_printf(&b, ", seed's %d", c->seed_count);
	buf_printf(&b, "), %d candidates planned in %.3f s; partitions:span/largest x duplication:", c->ncand,
		   c->seconds);
	for (int i = 0; i < c->ncand; i++) {
		const struct count_candidate *k = &c->cand[i];
		buf_printf(&b, " %d:%ld/%ld x%.3f", k->partitions, k->span, k->largest,
			   c->unsplit ? (double)k->work / c->unsplit : 0.0);
	}
	return b.s;
}

void count_choice_free(struct count_choice *c)
{
	free(c->cand);
	memset(c, 0, sizeof *c);
}
