/* outputs.c: see outputs.h. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "outputs.h"
#include "buf.h"
#include "plan.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *output_path(const char *dir, const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

/* Write path if its content changes, or exit with an error. */
static void write_or_die(const char *path, const void *data, size_t len)
{
	if (mtpc_write_file(path, data, len, MTPC_WRITE_IF_CHANGED) < 0)
		mtpc_fatal("%s: cannot write: %s", path, strerror(errno));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* OUTDIR/checksums.txt: the sorted union of the partitions' placeholder
 * lines (each partition lists the files it refers to). */
static void write_checksums(const char *outdir, struct emitted *parts, int n)
{
	struct strv lines = {0};
	for (int p = 0; p < n; p++) {
		char *save = NULL;
		for (char *l = parts[p].checksums ? strtok_r(parts[p].checksums, "\n", &save) : NULL; l;
		     l = strtok_r(NULL, "\n", &save))
			strv_add(&lines, l);
		free(parts[p].checksums);
		parts[p].checksums = NULL;
	}
	if (lines.n)
		qsort(lines.v, lines.n, sizeof *lines.v, cmp_str);
	struct buf b = {0};
	for (size_t i = 0; i < lines.n; i++)
		if (i == 0 || strcmp(lines.v[i], lines.v[i - 1]) != 0)
			buf_printf(&b, "%s\n", lines.v[i]);
	char *path = output_path(outdir, "checksums.txt");
	write_or_die(path, b.s ? b.s : "", b.len);
	free(path);
	buf_free(&b);
	strv_free(&lines);
}

/* OUTDIR/lines.txt: each partition's map of virtual to real lines, its
 * lines prefixed with its number. */
static void write_lines(const char *outdir, struct emitted *parts, int n)
{
	struct buf b = {0};
	for (int p = 0; p < n; p++) {
		char *save = NULL;
		for (char *l = parts[p].lines ? strtok_r(parts[p].lines, "\n", &save) : NULL; l;
		     l = strtok_r(NULL, "\n", &save))
			buf_printf(&b, "%d %s\n", p, l);
		free(parts[p].lines);
		parts[p].lines = NULL;
	}
	char *path = output_path(outdir, "lines.txt");
	write_or_die(path, b.s ? b.s : "", b.len);
	free(path);
	buf_free(&b);
}

/* The debug-info maps (checksums.txt, lines.txt) and the EMIT_* flag that
 * asks for each: a map is there exactly when its flag is set. */
static const struct {
	const char *name;
	int flag;
} debug_maps[] = {{"checksums.txt", EMIT_PLACEHOLDER_CHECKSUMS}, {"lines.txt", EMIT_VIRTUAL_LINES}};

int outputs_current(const char *dir, const char *input_hash, const char *options_hash,
			   int debug)
{
	char *pp = output_path(dir, "plan.json"), *text;
	size_t len;
	int ok = 0;
	if (mtpc_read_file(pp, &text, &len) == 0) {
		struct plan_seed s;
		char *err = NULL;
		if (plan_seed_parse(text, &s, &err) == 0) {
			ok = strcmp(s.input_hash, input_hash) == 0 && strcmp(s.options_hash, options_hash) == 0;
			for (int p = 0; ok && p < s.npartitions; p++) {
				char *name = xasprintf("%s/p%d.bc", dir, p);
				ok = access(name, R_OK) == 0;
				free(name);
			}
			char *lp = output_path(dir, "localize.txt");
			ok = ok && access(lp, R_OK) == 0;
			free(lp);
			for (size_t i = 0; ok && i < sizeof debug_maps / sizeof *debug_maps; i++) {
				char *mp = output_path(dir, debug_maps[i].name);
				ok = (access(mp, R_OK) == 0) == !!(debug & debug_maps[i].flag);
				free(mp);
			}
			plan_seed_free(&s);
		}
		free(err);
		free(text);
	}
	free(pp);
	return ok;
}

void write_outputs(const char *outdir, int debug, int verbatim, const struct module_info *mi,
		   const struct split_plan *plan, struct emitted *parts, const char *json)
{
	char *plan_path = output_path(outdir, "plan.json"), *old;
	size_t oldlen;
	int plan_same = 0;
	if (mtpc_read_file(plan_path, &old, &oldlen) == 0) {
		plan_same = oldlen == strlen(json) && memcmp(old, json, oldlen) == 0;
		free(old);
	}
	if (!plan_same)
		unlink(plan_path);
	for (int p = 0; p < plan->n; p++) {
		char *path = xasprintf("%s/p%d.bc", outdir, p);
		write_or_die(path, parts[p].data, parts[p].len);
		free(path);
		free(parts[p].data);
		parts[p].data = NULL;
	}
	char *loc = plan_localize_list(mi, plan), *ren = plan_rename_list(mi, plan, verbatim);
	char *loc_path = output_path(outdir, "localize.txt"), *ren_path = output_path(outdir, "rename.txt");
	write_or_die(loc_path, loc, strlen(loc));
	write_or_die(ren_path, ren, strlen(ren));
	if (debug & EMIT_PLACEHOLDER_CHECKSUMS)
		write_checksums(outdir, parts, plan->n);
	if (debug & EMIT_VIRTUAL_LINES)
		write_lines(outdir, parts, plan->n);
	for (size_t i = 0; i < sizeof debug_maps / sizeof *debug_maps; i++)
		if (!(debug & debug_maps[i].flag)) {
			char *mp = output_path(outdir, debug_maps[i].name);
			unlink(mp);
			free(mp);
		}
	write_or_die(plan_path, json, strlen(json));
	for (int p = plan->n;; p++) {
		char *path = xasprintf("%s/p%d.bc", outdir, p);
		int gone = unlink(path) < 0 && errno == ENOENT;
		free(path);
		if (gone)
			break;
	}
	free(loc);
	free(ren);
	free(loc_path);
	free(ren_path);
	free(plan_path);
}
