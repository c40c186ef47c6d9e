/* sorted.c: the sorted sets of strings (a struct strv kept sorted and
 * without duplicates) that struct debugfix_earlier carries from one object
 * of a module to the next: str_offsets.c and names.c look up and add to
 * them, debugfix.c hands them on. In a file of their own so that the steps
 * take them from below and call nothing back in debugfix.c. */
#include "debugfix_int.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int sorted_has(const struct strv *sv, const char *s)
{
	size_t lo = 0, hi = sv->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(sv->v[mid], s);
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void sorted_union(struct strv *sorted, const struct strv *more)
{
	if (!more->n)
		return;
	strv_addv(sorted, more);
	qsort(sorted->v, sorted->n, sizeof *sorted->v, cmp_str);
	size_t n = 0;
	for (size_t i = 0; i < sorted->n; i++) {
		if (n && !strcmp(sorted->v[n - 1], sorted->v[i]))
			free(sorted->v[i]);
		else
			sorted->v[n++] = sorted->v[i];
	}
	sorted->n = n;
	sorted->v[n] = NULL;
}

void debugfix_earlier_free(struct debugfix_earlier *earlier)
{
	strv_free(&earlier->groups);
	strv_free(&earlier->names);
}
