/* makespan.c: see makespan.h. */
#include "makespan.h"
#include "util.h"
#include "workboard.h"

#include <stdio.h>
#include <stdlib.h>

/* No load outside: the prediction of the link alone. */
static const struct outside_load no_load = {0, 0, 0, 0, 0, -1, 0};

double makespan_free_lanes(const struct outside_load *out, int jobs)
{
	double held = out->held_lanes < jobs ? out->held_lanes : jobs;
	/* idle now: a whole backend takes its lane and keeps it */
	return out->idle > jobs - held ? out->idle : jobs - held;
}

long long makespan_span(long long work, long long longest, size_t wide, int jobs, const struct outside_load *out)
{
	out = out ? out : &no_load;
	jobs = jobs > 0 ? jobs : 1;
	double w = (double)(wide < 1 ? 1 : wide < (size_t)jobs ? wide : (size_t)jobs);
	double t[5] = {
		makespan_free_lanes(out, jobs) < 1 ? out->held_until + (double)longest : (double)longest,
		(double)work / w,
		((double)work + out->held_work + out->shared_work) / jobs,
		out->held_until,
		out->shared_until,
	};
	double t_max = 0;
	for (int i = 0; i < 5; i++)
		t_max = t[i] > t_max ? t[i] : t_max;
	long long r = (long long)t_max;
	return r < t_max ? r + 1 : r; /* rounded up */
}

struct split_cost makespan_split_cost(long long c, int k)
{
	struct split_cost s = {c, c, c};
	if (k >= 2) {
		s.task = (c + k - 1) / k;
		s.chain = c / SPLIT_OVERHEAD + s.task;
		s.work = c + c / SPLIT_OVERHEAD;
	}
	return s;
}

struct outside_load makespan_outside_load(const struct work_others *w, double spc)
{
	struct outside_load o = {w->held_lanes, w->held_until / spc, w->held_work / spc, w->shared_work / spc,
				 w->shared_until / spc, w->idle, 0};
	return o;
}

struct split_choice makespan_split_choice(long long c, long long others_work, long long others_longest,
					  size_t nmods, int jobs, const struct outside_load *out, int kmax,
					  int was_split)
{
	struct split_choice ch = {0, 0, 0};
	jobs = jobs > 0 ? jobs : 1;
	out = out ? out : &no_load;
	nmods = nmods > 0 ? nmods : 1;
	struct outside_load with_outer;
	if (out->outer_lanes > 0) {
		/* the outer build's next edges, for as long as the link takes
		 * unsplit alone (struct outside_load) */
		with_outer = *out;
		double t = (double)makespan_span(others_work + c, others_longest > c ? others_longest : c, nmods, jobs,
						 NULL);
		double w = out->outer_lanes * t;
		with_outer.shared_work = w > out->shared_work ? w : out->shared_work;
		out = &with_outer;
	}
	ch.whole_span = makespan_span(others_work + c, others_longest > c ? others_longest : c, nmods, jobs, out);
	long long best = -1;
	long long spans[4097];
	kmax = kmax > 4096 ? 4096 : kmax;
	for (int k = 2; k <= kmax; k++) {
		struct split_cost sc = makespan_split_cost(c, k);
		spans[k] = makespan_span(others_work + sc.work, others_longest > sc.chain ? others_longest : sc.chain,
					 nmods - 1 + (size_t)k, jobs, out);
		if (best < 0 || spans[k] < best)
			best = spans[k];
	}
	if (best < 0)
		return ch; /* kmax < 2: splitting off */
	int k = 2;
	while (k < kmax && spans[k] * 100 > best * (100 + SPLIT_K_SLACK))
		k++;
	ch.split_span = spans[k];
	int pays = was_split == 1 ? ch.split_span <= ch.whole_span
				  : ch.split_span * 100 <= ch.whole_span * (100 - SPLIT_MIN_GAIN);
	ch.parts = pays ? k : 0;
	return ch;
}

char *makespan_busy_reason(int backends, int jobs, double outer, const struct split_choice *ch, double spc)
{
	struct buf b = {0};
	const char *sep = "";
	buf_add(&b, "the cores are busy with ");
	if (backends >= 0) {
		buf_printf(&b, "%d other backend%s", backends, backends == 1 ? "" : "s");
		sep = " and ";
	}
	if (jobs > 0 || (backends < 0 && !(outer > 0))) {
		buf_printf(&b, "%s%d other MTPC job%s", sep, jobs, jobs == 1 ? "" : "s");
		sep = " and ";
	}
	if (outer > 0)
		buf_printf(&b, "%sthe outer build's other edges (%.1f core%s while it ran last time)", sep, outer,
			   outer >= 0.95 && outer < 1.05 ? "" : "s");
	buf_printf(&b, " (predicted %.*f s split vs %.*f s unsplit)", MAKESPAN_SECS(ch->split_span * spc),
		   MAKESPAN_SECS(ch->whole_span * spc));
	return b.s;
}

void makespan_recheck_format(struct buf *b, const struct split_recheck *r)
{
	buf_printf(b, "%lld %lld %lld %lld %d %d %.9g %.9g\n", r->cost, r->others_work, r->others_longest, r->nmods,
		   r->jobs, r->parts, r->spc, r->outer_lanes);
}

int makespan_recheck_parse(const char *text, struct split_recheck *r)
{
	int end = 0;
	if (!text || sscanf(text, "%lld %lld %lld %lld %d %d %lf %lf%n", &r->cost, &r->others_work, &r->others_longest,
			    &r->nmods, &r->jobs, &r->parts, &r->spc, &r->outer_lanes, &end) != 8 || r->outer_lanes < 0)
		return -1;
	if (r->cost < 0 || r->others_work < 0 || r->others_longest < 0 || r->nmods < 1 || r->jobs < 1 || r->parts < 2 ||
	    !(r->spc > 0) || (text[end] && text[end] != '\n'))
		return -1;
	return 0;
}

int makespan_recheck(const struct split_recheck *r, char **why)
{
	*why = NULL;
	struct work_others board;
	workboard_read(&board);
	if (!board.count)
		return 1; /* as the choice saw it, or emptier */
	struct outside_load load = makespan_outside_load(&board, r->spc);
	load.outer_lanes = r->outer_lanes;
	struct split_choice ch = makespan_split_choice(r->cost, r->others_work, r->others_longest, (size_t)r->nmods,
						       r->jobs, &load, r->parts, 1);
	if (ch.parts)
		return 1;
	*why = makespan_busy_reason((int)(r->nmods - 1), board.count, r->outer_lanes, &ch, r->spc);
	return 0;
}
