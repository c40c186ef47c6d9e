/* split.c: the split step: mtpc-split of one module, then the dyndep file
 * that tells Ninja which slots the module uses, with a fallback through the
 * module's plain backend on any failure (the build never breaks because of
 * MTPC). */
#define _POSIX_C_SOURCE 200809L /* struct stat's st_mtim */
#include "steps_int.h"
#include "steps.h"
#include "dyndep.h"
#include "inner_dir.h"
#include "makespan.h"
#include "proc.h"
#include "util.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int steps_plan_partitions(const char *text)
{
	json_error_t e;
	json_t *root = json_loads(text, 0, &e);
	if (!root)
		return -1;
	json_t *parts = json_object_get(root, "partitions");
	int n = json_is_array(parts) ? (int)json_array_size(parts) : -1;
	json_decref(root);
	return n;
}

/* Run mtpc-split and check what it produced; returns n, -1 with *why set, or
 * NOT_USED when the link does not use the module (mtpc-split's status 3:
 * lld wrote an empty index for an archive member it did not pull in). */
#define NOT_USED (-2)
static int run_split(const struct step_args *s, int kmax, char **why)
{
	char *parts = xasprintf("%s/" MOD_PARTS, s->dir);
	struct strv cmd = {0};
	strv_addl(&cmd, s->tool, s->module, "-o", parts, "--partitions", s->kmax, NULL);
	/* A link's module: imported first. Placeholder checksums and virtual
	 * lines: a partition changes only with its code, not with every edit
	 * of its source file (the merge puts the real ones back in the
	 * objects; a compile's join has no objects to put them into). */
	if (s->index)
		strv_addl(&cmd, "--thinlto-index", s->index, "--relocation-model", s->reloc ? s->reloc : "pic",
			  "--placeholder-checksums", "--virtual-lines", NULL);
	if (s->min_cost) {
		strv_add(&cmd, "--min-cost");
		strv_add(&cmd, s->min_cost);
	}
	if (s->cores)
		strv_addl(&cmd, "--cores", s->cores, NULL);
	strv_addv(&cmd, &s->split_args);
	char *env[2] = {s->cache ? xasprintf("MTPC_CACHE=%s", s->cache) : NULL, NULL};
	struct buf err = {0};
	int st = proc_run(cmd.v, NULL, env[0] ? env : NULL, &err);
	int n = -1;
	if (st == SPLIT_EXIT_UNUSED) {
		n = NOT_USED;
	} else if (st != 0) {
		/* First line of its message, for the one-line warning. */
		const char *msg = err.s ? err.s : "";
		size_t l = strcspn(msg, "\n");
		*why = l ? xasprintf("mtpc-split exited with %d: %.*s", st, (int)l, msg)
			 : xasprintf("mtpc-split exited with %d", st);
	} else {
		if (err.len)
			fputs(err.s, stderr);
		char *plan = xasprintf("%s/" SPLIT_PLAN, parts), *text;
		size_t len;
		if (mtpc_read_file(plan, &text, &len) < 0) {
			*why = xasprintf("cannot read %s", plan);
		} else {
			n = steps_plan_partitions(text);
			free(text);
			if (n < 1 || n > kmax) {
				*why = xasprintf("%s: %d partitions (want 1..%d)", plan, n, kmax);
				n = -1;
			}
			for (int i = 0; n > 0 && i < n; i++) {
				char *bc = xasprintf("%s/" SPLIT_PART_FMT, parts, i);
				if (file_size(bc) <= 0) {
					*why = xasprintf("%s missing or empty", bc);
					n = -1;
				}
				free(bc);
			}
		}
		free(plan);
	}
	buf_free(&err);
	free(env[0]);
	strv_free(&cmd);
	free(parts);
	return n;
}

/* Which partition files a split is about to replace: each one's inode and
 * modification time (0 if missing). mtpc-split writes a partition only if
 * it changed, by a rename, so a partition it rewrote has another inode or
 * time afterwards (and a slot then recompiles it). */
struct part_stamp {
	unsigned long long ino;
	long long mtime_ns;
};

static void stamp_parts(const struct step_args *s, struct part_stamp *st, int k)
{
	for (int i = 0; i < k; i++) {
		char *bc = xasprintf("%s/" MOD_PARTS "/" SPLIT_PART_FMT, s->dir, i);
		struct stat sb;
		if (stat(bc, &sb) == 0) {
			st[i].ino = (unsigned long long)sb.st_ino;
			st[i].mtime_ns = (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
		} else {
			st[i].ino = 0;
			st[i].mtime_ns = 0;
		}
		free(bc);
	}
}

/* How many of the n partitions differ from their stamps in before[]. */
static int parts_rewritten(const struct step_args *s, const struct part_stamp *before, int n)
{
	struct part_stamp *after = xcalloc((size_t)n, sizeof *after);
	stamp_parts(s, after, n);
	int k = 0;
	for (int i = 0; i < n; i++)
		k += !before[i].ino || after[i].ino != before[i].ino || after[i].mtime_ns != before[i].mtime_ns;
	free(after);
	return k;
}

/* With --recheck: why the split no longer pays beside the work board as it
 * is now (makespan.h, struct split_recheck), heap; NULL when it still does,
 * or when the file cannot be read (the choice stands). */
static char *held_by_board(const struct step_args *s)
{
	char *text = NULL, *held = NULL;
	size_t len;
	struct split_recheck r;
	if (!s->recheck || mtpc_read_file(s->recheck, &text, &len) < 0)
		return NULL;
	if (makespan_recheck_parse(text, &r) == 0)
		makespan_recheck(&r, &held);
	free(text);
	return held;
}

int split_step(const struct step_args *s)
{
	int kmax = atoi(s->kmax);
	char *why = NULL;
	/* Held whole (the cores have filled since the choice): its plain
	 * backend, as if the choice had been made now; the link's summary
	 * line says why. */
	char *held = kmax >= 2 ? held_by_board(s) : NULL;
	/* A relayed module's rebuild, or one split for its edits: recorded
	 * with how many partitions the split rewrote (what an edit reran). */
	struct part_stamp *before = NULL;
	if (s->record_module && kmax >= 2 && !held) {
		before = xcalloc((size_t)kmax, sizeof *before);
		stamp_parts(s, before, kmax);
	}
	int n = held ? 0 : kmax >= 1 ? run_split(s, kmax, &why) : -1, unused = n == NOT_USED;
	if (s->record_module)
		record_rebuild(s, before && n >= 2 ? n : 0, before && n >= 2 ? parts_rewritten(s, before, n) : 0);
	free(before);
	if (n < 0 && why && out_of_space(why)) {
		/* No fallback dyndep: it would stay trusted (see out_of_space). */
		mtpc_error("splitting %s failed (%s)", s->module, why);
		free(why);
		return 1;
	}
	if (unused) {
		/* No warning: the plain backend turns it into the empty object
		 * that distributed ThinLTO gives such a member, and the link,
		 * which takes it lazily, ignores it as it did in the thin link. */
		n = 0;
	} else if (n < 0) {
		mtpc_warn("splitting %s failed (%s); compiling it unsplit", s->module,
			  why ? why : "bad --kmax");
		n = 0;
	}
	free(why);
	struct buf dd = {0}, nb = {0};
	/* A link's module falls back to its plain backend edge; a compile's
	 * join runs the plain compile itself. */
	dyndep_of_split(&dd, s->dir, kmax, n, s->index != NULL);
	if (held)
		buf_printf(&nb, "0 " MOD_COUNT_HELD ": %s\n", held);
	else
		buf_printf(&nb, "%d%s\n", n, unused ? " " MOD_COUNT_UNUSED : "");
	free(held);
	char *ddp = xasprintf("%s/" MOD_DYNDEP, s->dir), *np = xasprintf("%s/" MOD_COUNT, s->dir);
	char *cp = xasprintf("%s/" MOD_PARTS "/" SPLIT_CHECKSUMS, s->dir);
	char *lp = xasprintf("%s/" MOD_PARTS "/" SPLIT_LINES, s->dir);
	int r = 0;
	/* The debug-info maps are outputs of the edge: there must be one of
	 * each, empty when the splitter wrote none (a failed split, another
	 * splitter). */
	if ((access(cp, F_OK) < 0 && mtpc_write_file(cp, "", 0, 0) < 0) ||
	    (access(lp, F_OK) < 0 && mtpc_write_file(lp, "", 0, 0) < 0) ||
	    mtpc_write_file(np, nb.s, nb.len, MTPC_WRITE_IF_CHANGED) < 0 ||
	    mtpc_write_file(ddp, dd.s, dd.len, MTPC_WRITE_IF_CHANGED) < 0) {
		mtpc_error("cannot write %s: %s", ddp, strerror(errno));
		r = 1;
	}
	free(cp);
	free(lp);
	free(ddp);
	free(np);
	buf_free(&dd);
	buf_free(&nb);
	return r;
}
