/* print_modes.c: see print_modes.h. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "print_modes.h"
#include "buf.h"
#include "llvm_shim.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* text (len bytes) on stdout, or written to out. */
static void put_text(const char *out, const char *text, size_t len)
{
	if (!out)
		fwrite(text, 1, len, stdout);
	else if (mtpc_write_file(out, text, len, 0) < 0)
		mtpc_fatal("%s: cannot write: %s", out, strerror(errno));
}

int print_costs(char *const *files, int nfiles, const char *out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		mtpc_fatal("--print-cost: %s", strerror(errno));
	int status = 0;
	for (int i = 0; i < nfiles; i++) {
		long long insts, funcs;
		char *err = NULL;
		int r = mtpc_summary_cost(files[i], &insts, &funcs, &err);
		if (r < 0) {
			mtpc_error("%s", err);
			free(err);
			status = 1;
		} else if (r > 0) {
			fprintf(f, "- - %s\n", files[i]);
		} else {
			fprintf(f, "%lld %lld %s\n", insts, funcs, files[i]);
		}
	}
	fclose(f);
	put_text(out, text, len);
	free(text);
	return status;
}

/* One symbol's visibility in one file. */
struct vis_entry {
	char *name;
	int vis; /* 1 hidden, 2 protected */
};

/* The entries of every file, in the order read. */
struct vis_list {
	struct vis_entry *v;
	size_t n, cap;
};

/* mtpc_bitcode_visibility's callback. */
static void add_visibility(void *arg, const char *name, size_t len, int vis)
{
	struct vis_list *l = arg;
	if (l->n == l->cap)
		l->v = xrealloc(l->v, (l->cap = l->cap ? 2 * l->cap : 256) * sizeof *l->v);
	l->v[l->n++] = (struct vis_entry){xasprintf("%.*s", (int)len, name), vis};
}

/* By name, then the most constraining (hidden) first. */
static int cmp_vis(const void *a, const void *b)
{
	const struct vis_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->vis - y->vis;
}

int print_visibility(char *const *files, int nfiles, const char *out)
{
	struct vis_list l = {0};
	int status = 0;
	for (int i = 0; i < nfiles; i++) {
		char *err = NULL;
		if (mtpc_bitcode_visibility(files[i], add_visibility, &l, &err) < 0) {
			mtpc_error("%s", err);
			free(err);
			status = 1;
		}
	}
	if (l.n)
		qsort(l.v, l.n, sizeof *l.v, cmp_vis);
	/* The first of each name is the most constraining (cmp_vis). Names are
	 * freed only after the loop: each is compared with the one before. */
	struct buf text = {0};
	for (size_t i = 0; i < l.n; i++)
		if (i == 0 || strcmp(l.v[i].name, l.v[i - 1].name))
			buf_printf(&text, "%s %s\n", l.v[i].vis == 1 ? "hidden" : "protected", l.v[i].name);
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].name);
	free(l.v);
	put_text(out, text.s ? text.s : "", text.len);
	buf_free(&text);
	return status;
}
