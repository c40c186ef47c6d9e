/* sched.c: see sched.h. */
#include "sched.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>

/* The split step (import + split) costs about this fraction of the module's
 * backend (docs/performance-history.md, Benchmark 1: 0.04-0.05). */
#define SPLIT_COST 0.05

struct edge {
	double dur, ready, start;
	int first_slot; /* for a split edge: index of its first slot edge, else -1 */
	int kslots;
};

/* Ninja's way: whenever a lane is free, start the ready edge that comes first
 * in the manifest. Fills in start times until the `watch_n` edges from
 * `watch` on have started (what comes later cannot change theirs). */
static void simulate(struct edge *e, int ne, int jobs, int watch, int watch_n)
{
	double *lane = xcalloc(jobs, sizeof *lane);
	char *started = xcalloc(ne + 1, 1);
	int watch_end = watch + watch_n;
	for (int done = 0; done < ne && watch_n > 0; done++) {
		int l = 0;
		for (int k = 1; k < jobs; k++)
			if (lane[k] < lane[l])
				l = k;
		double first_ready = INFINITY;
		for (int i = 0; i < ne; i++)
			if (!started[i] && e[i].ready < first_ready)
				first_ready = e[i].ready;
		double t = lane[l] > first_ready ? lane[l] : first_ready;
		int pick = 0;
		while (started[pick] || e[pick].ready > t)
			pick++;
		started[pick] = 1;
		e[pick].start = t;
		if (pick >= watch && pick < watch_end)
			watch_n--;
		lane[l] = t + e[pick].dur;
		for (int s = 0; s < e[pick].kslots; s++)
			e[e[pick].first_slot + s].ready = lane[l];
	}
	free(started);
	free(lane);
}

/* The edges of the manifest with the current shares (units). */
static int make_edges(const struct sched_mod *mods, size_t n, int kmax, const int *shares,
		      struct edge *e, int *slot0)
{
	int ne = 0;
	for (size_t i = 0; i < n; i++) {
		double size = (double)mods[i].size;
		if (!mods[i].split) {
			e[ne++] = (struct edge){size, 0, 0, -1, 0};
			continue;
		}
		e[ne] = (struct edge){SPLIT_COST * size, 0, 0, ne + 1, kmax};
		slot0[i] = ++ne;
		for (int j = 0; j < kmax; j++)
			e[ne++] = (struct edge){size * shares[i * kmax + j] / SCHED_UNITS, INFINITY, 0, -1, 0};
	}
	return ne;
}

/* Shares w (fractions summing to 1) in whole units, by largest remainder
 * (ties: lower index), at least one unit each. */
static void quantize(const double *w, int k, int *units)
{
	int left = SCHED_UNITS;
	for (int j = 0; j < k; j++) {
		units[j] = (int)floor(w[j] * SCHED_UNITS);
		if (units[j] < 1)
			units[j] = 1;
		left -= units[j];
	}
	while (left > 0) {
		int best = 0;
		double bf = -1;
		for (int j = 0; j < k; j++) {
			double f = w[j] * SCHED_UNITS - units[j];
			if (f > bf) {
				bf = f;
				best = j;
			}
		}
		units[best]++;
		left--;
	}
	while (left < 0) { /* the minimum of one unit overshot: take from the largest */
		int big = 0;
		for (int j = 1; j < k; j++)
			if (units[j] > units[big])
				big = j;
		units[big]--;
		left++;
	}
}

void sched_shares(const struct sched_mod *mods, size_t n, int jobs, int kmax, int *shares, int *weighted)
{
	for (size_t i = 0; i < n; i++)
		weighted[i] = 0;
	if (kmax < 2 || kmax > jobs || kmax > SCHED_UNITS)
		return;
	/* Start from equal shares (as equal as whole units allow). */
	double *w = xmalloc(kmax * sizeof *w);
	int *equal = xmalloc(kmax * sizeof *equal);
	for (int j = 0; j < kmax; j++)
		w[j] = 1.0 / kmax;
	quantize(w, kmax, equal);
	for (size_t i = 0; i < n; i++)
		for (int j = 0; mods[i].split && j < kmax; j++)
			shares[i * kmax + j] = equal[j];
	int nedges = 0;
	for (size_t i = 0; i < n; i++)
		nedges += mods[i].split ? 1 + kmax : 1;
	struct edge *e = xmalloc((nedges + 1) * sizeof *e);
	int *slot0 = xcalloc(n + 1, sizeof *slot0);
	/* Module by module in manifest order (the earlier ones' slots come first
	 * in Ninja's queue): make its slots end together given when they start. */
	for (size_t i = 0; i < n; i++) {
		if (!mods[i].split || mods[i].size <= 0)
			continue;
		double size = (double)mods[i].size;
		for (int iter = 0; iter < 4; iter++) {
			int ne = make_edges(mods, n, kmax, shares, e, slot0);
			simulate(e, ne, jobs, slot0[i], kmax);
			double first = e[slot0[i]].start, last = first, sum = 0;
			for (int j = 0; j < kmax; j++) {
				double st = e[slot0[i] + j].start;
				sum += st;
				first = st < first ? st : first;
				last = st > last ? st : last;
			}
			/* Slots starting further apart than half a fair share: the
			 * module is small next to what runs beside it, its split
			 * hardly matters to the link, and extreme shares of a small
			 * module flip with every edit elsewhere. Equal ones, then;
			 * otherwise every share is at least half a fair one. */
			if (last - first > 0.5 * size / kmax) {
				for (int j = 0; j < kmax; j++)
					shares[i * kmax + j] = equal[j];
				break;
			}
			double end = (size + sum) / kmax;
			for (int j = 0; j < kmax; j++)
				w[j] = (end - e[slot0[i] + j].start) / size;
			quantize(w, kmax, &shares[i * kmax]);
		}
		for (int j = 0; j < kmax; j++)
			weighted[i] |= shares[i * kmax + j] != equal[j];
	}
	free(slot0);
	free(e);
	free(w);
	free(equal);
}
