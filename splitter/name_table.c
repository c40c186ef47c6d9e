/* name_table.c: see name_table.h. */
#include "name_table.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static int cmp_name_idx(const void *a, const void *b)
{
	const struct name_idx *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

void name_table_sort(struct name_table *t)
{
	if (t->n)
		qsort(t->v, t->n, sizeof *t->v, cmp_name_idx);
}

int name_table_find(const struct name_table *t, const char *name)
{
	int lo = 0, hi = t->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (strcmp(t->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && strcmp(t->v[lo].name, name) == 0 ? lo : -1;
}

void name_table_of_symbols(const struct module_info *mi, struct name_table *t)
{
	t->v = xmalloc((mi->nsyms + 1) * sizeof *t->v);
	t->n = 0;
	for (int i = 0; i < mi->nsyms; i++)
		if (mi->syms[i].name[0])
			t->v[t->n++] = (struct name_idx){mi->syms[i].name, i};
	name_table_sort(t);
}

static int is_c_ident(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

void name_table_of_sections(const struct module_info *mi, struct name_table *t)
{
	t->v = xmalloc((mi->nsyms + 1) * sizeof *t->v);
	t->n = 0;
	for (int i = 0; i < mi->nsyms; i++) {
		const struct sym *s = &mi->syms[i];
		if (!(s->flags & SF_SECTION) || (s->kind != SYM_VAR && s->kind != SYM_FUNC))
			continue;
		const char *sec = LLVMGetSection(s->v);
		if (sec && is_c_ident(sec))
			t->v[t->n++] = (struct name_idx){sec, i};
	}
	name_table_sort(t);
}

void name_table_free(struct name_table *t)
{
	free(t->v);
	*t = (struct name_table){0};
}
