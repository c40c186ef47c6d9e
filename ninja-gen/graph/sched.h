/* sched.h: how much of its module each partition of a split module gets.
 *
 * On few cores the partitions do not all start together: while a module is
 * being split, the other cores run small modules' backends, and a partition
 * slot waits for one of them to finish. Equal partitions then end at
 * different times and the last one is the link's critical path. sched_shares()
 * simulates the inner build as Ninja runs it (jobs lanes, ready edges started
 * in manifest order) with costs estimated from the modules' summaries (or
 * bitcode sizes), and gives each
 * partition a share that makes the module's slots end together. */
#ifndef MTPC_NG_SCHED_H
#define MTPC_NG_SCHED_H

#include <stddef.h>

/* The unit of the shares: a partition gets a whole number of 1/SCHED_UNITS of
 * its module. Coarse on purpose: an edit that changes sizes a little must
 * not change the shares (a new share is a new plan: every slot recompiles). */
#define SCHED_UNITS 40

struct sched_mod {
	long long size; /* estimated backend work (graph.h: module cost) */
	int split;      /* split into kmax slots (else one plain backend) */
};

/* mods: the modules in manifest order (graph_emit_modules: split ones first). For each
 * split module i, writes kmax shares in units of 1/SCHED_UNITS, largest first
 * (slots start in index order), summing to SCHED_UNITS, to shares[i * kmax ..],
 * and sets weighted[i] when they are not the equal ones (else equal partitions
 * are as good: keep them, and the module's plan). Plain modules' entries are
 * left alone. All equal for kmax > jobs (with more slots than cores, they
 * queue anyway) and for a module whose slots would start more than half a
 * fair share apart (small next to what runs beside it: its shares would be
 * extreme and flip with every edit elsewhere, for little gain). */
void sched_shares(const struct sched_mod *mods, size_t n, int jobs, int kmax, int *shares, int *weighted);

#endif
