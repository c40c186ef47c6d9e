/* intlist.h: growable lists of ints (symbol or unit indices), for the
 * analysis: a symbol's references while they are collected, a unit's
 * members and neighbours, and pairs of symbols that must stay together.
 * Zero-initialize ({0}) before use; never iterated in an order that depends
 * on anything but the indices pushed. */
#ifndef MTPC_INTLIST_H
#define MTPC_INTLIST_H

struct intlist {
	int *v, n, cap;
};

void intlist_push(struct intlist *l, int x);
/* Sort l ascending, duplicates kept (a count of equal neighbours is an
 * edge weight: units.c). */
void intlist_sort(struct intlist *l);
/* The distinct values of l, ascending, as a new heap array of *n ints (one
 * slot more, so never an allocation of 0 bytes); empties l, keeping its
 * storage for the next list. */
int *intlist_distinct(struct intlist *l, int *n);
void intlist_free(struct intlist *l);

/* Pairs (first.v[k], second.v[k]) in the order they were found. */
struct intpairs {
	struct intlist first, second;
};

void intpairs_push(struct intpairs *p, int first, int second);
void intpairs_free(struct intpairs *p);

#endif
