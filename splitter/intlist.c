/* intlist.c: see intlist.h. */
#include "intlist.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

void intlist_push(struct intlist *l, int x)
{
	if (l->n == l->cap)
		l->v = xrealloc(l->v, (l->cap = l->cap ? l->cap * 2 : 8) * sizeof *l->v);
	l->v[l->n++] = x;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

void intlist_sort(struct intlist *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof *l->v, cmp_int);
}

int *intlist_distinct(struct intlist *l, int *n)
{
	int k = l->n;
	if (k >= 2) {
		qsort(l->v, l->n, sizeof *l->v, cmp_int);
		k = 1;
		for (int i = 1; i < l->n; i++)
			if (l->v[i] != l->v[k - 1])
				l->v[k++] = l->v[i];
	}
	int *out = xmalloc((k + 1) * sizeof *out);
	if (k)
		memcpy(out, l->v, k * sizeof *out);
	*n = k;
	l->n = 0;
	return out;
}

void intlist_free(struct intlist *l)
{
	free(l->v);
	*l = (struct intlist){0};
}

void intpairs_push(struct intpairs *p, int first, int second)
{
	intlist_push(&p->first, first);
	intlist_push(&p->second, second);
}

void intpairs_free(struct intpairs *p)
{
	intlist_free(&p->first);
	intlist_free(&p->second);
}
