/* merge.c: the merge step: the partitions' objects back into one native
 * object per module, their real source checksums and lines back in
 * (debugfix.h), the symbols the split promoted local again. A link's
 * module falls back to its plain backend; a plain compile's (--cwd) to the
 * plain compile, whatever failed: the build never breaks because of MTPC. */
#include "steps_int.h"
#include "debugfix.h"
#include "fold_names.h"
#include "inner_dir.h"
#include "proc.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The module's unsplit backend object as the merged object. */
static int take_backend(const struct step_args *s)
{
	char *bk = xasprintf("%s/" MOD_BACKEND, s->dir);
	int r = mtpc_copy_file(bk, s->out, MTPC_WRITE_IF_CHANGED) < 0;
	free(bk);
	return r;
}

/* The real checksums and lines back into each partition's object (into
 * D/p<i>.fix.o, which the merge links instead; *fixed says so) and .dwo
 * (D/p<i>.ph.dwo, as compiled, into the D/p<i>.dwo its skeleton names). */
static int fix_partitions(const struct step_args *s, int n, int *fixed)
{
	char *cp = xasprintf("%s/" MOD_PARTS "/" SPLIT_CHECKSUMS, s->dir), *sums = NULL;
	char *lp = xasprintf("%s/" MOD_PARTS "/" SPLIT_LINES, s->dir), *lines = NULL;
	size_t len;
	if (mtpc_read_file(cp, &sums, &len) < 0)
		sums = NULL; /* no map: nothing to restore */
	if (mtpc_read_file(lp, &lines, &len) < 0)
		lines = NULL;
	int r = 0;
	/* What p0 .. p<i-1> provide. */
	struct debugfix_earlier earlier = {.names_once = s->names && !strcmp(s->names, "once")};
	for (int i = 0; i < n && r == 0; i++) {
		struct line_map map = {NULL, 0};
		if (lines && debugfix_parse_lines(lines, i, &map) < 0) {
			mtpc_error("%s: malformed", lp);
			r = -1;
			break;
		}
		char *o = xasprintf("%s/p%d.o", s->dir, i), *fo = xasprintf("%s/p%d.fix.o", s->dir, i);
		char *ph = xasprintf("%s/p%d.ph.dwo", s->dir, i), *dwo = xasprintf("%s/p%d.dwo", s->dir, i);
		/* Every object is read for what makes later ones redundant
		 * (debugfix.h); the ones nothing changes in are linked as
		 * they are. */
		r = debugfix_copy(o, fo, sums, &map, &earlier, 1);
		fixed[i] = r == 1;
		if (r >= 0 && access(ph, F_OK) == 0)
			r = debugfix_copy(ph, dwo, sums, &map, NULL, 0);
		r = r < 0 ? -1 : 0;
		debugfix_free_lines(&map);
		free(o);
		free(fo);
		free(ph);
		free(dwo);
	}
	debugfix_earlier_free(&earlier);
	free(cp);
	free(lp);
	free(sums);
	free(lines);
	return r;
}

/* A plain compile's partitions' .dwo files (D/p<i>.dwo, their real lines
 * back) into the one .dwo (--dwo) every skeleton names; none when no
 * partition wrote split units. NULL, or why not (heap), for the warning. */
static char *merge_dwo(const struct step_args *s, int n)
{
	struct strv in = {0};
	for (int i = 0; i < n; i++)
		strv_addown(&in, xasprintf("%s/p%d.dwo", s->dir, i));
	char *why = NULL;
	int r = debugfix_dwo_merge(in.v, in.n, s->dwo, &why);
	if (r == 0)
		unlink(s->dwo);
	strv_free(&in);
	return why;
}

/* The module compiled unsplit (the command after "--") as the merged
 * object, after a partition could not be compiled or fixed (why, the
 * warning; NULL when a step before gave one). A link's backend writes
 * DIR/backend.o, which is copied; a plain compile (--cwd) writes FILE
 * itself, in the compile's directory. */
static int merge_unsplit(const struct step_args *s, const char *why)
{
	if (!s->cmd || !s->cmd[0]) {
		mtpc_error("%s: %s and there is no backend command", s->dir, why ? why : "the split failed");
		return 1;
	}
	if (why)
		mtpc_warn("%s: %s; compiling it unsplit", s->dir, why);
	mark_unsplit(s->dir, 1);
	int st = proc_run(s->cmd, s->cwd, NULL, NULL);
	return st || s->cwd ? st : take_backend(s);
}

/* The folded bodies of the merged object (common/fold_names.h) into
 * llvm-objcopy's lists and words: floc, one symbol a line, to localize;
 * fren, "NAME.mtpc.f<hex> NAME" lines; into cmd, a --rename-section for
 * each body's section. Returns how many symbols, or -1 (said). */
static int fold_lists(const char *merged, const char *floc, const char *fren, struct strv *cmd)
{
	struct strv syms = {0}, secs = {0};
	if (elf_folded_names(merged, &syms, &secs) < 0)
		return -1;
	struct buf lb = {0}, rb = {0};
	size_t base = 0;
	for (size_t i = 0; i < syms.n; i++) {
		mtpc_fold_name(syms.v[i], &base);
		buf_printf(&lb, "%s\n", syms.v[i]);
		buf_printf(&rb, "%s %.*s\n", syms.v[i], (int)base, syms.v[i]);
	}
	for (size_t i = 0; i < secs.n; i++) {
		mtpc_fold_name(secs.v[i], &base);
		strv_addown(cmd, xasprintf("--rename-section=%s=%.*s", secs.v[i], (int)base, secs.v[i]));
	}
	int r = (int)syms.n;
	if (r > 0 && (mtpc_write_file(floc, lb.s, lb.len, 0) < 0 || mtpc_write_file(fren, rb.s, rb.len, 0) < 0)) {
		mtpc_error("cannot write %s: %s", floc, strerror(errno));
		r = -1;
	}
	buf_free(&lb);
	buf_free(&rb);
	strv_free(&syms);
	strv_free(&secs);
	return r;
}

int merge_step(const struct step_args *s)
{
	if (s->names && strcmp(s->names, "once")) {
		mtpc_error("--merge-step: --names takes 'once', not '%s'", s->names);
		return 2;
	}
	mark_unsplit(s->dir, 0);
	char *np = xasprintf("%s/" MOD_COUNT, s->dir), *text = NULL;
	size_t len;
	int n = -1, r = 1;
	if (mtpc_read_file(np, &text, &len) == 0)
		n = atoi(text);
	free(text);
	free(np);
	if (n <= 0) /* the split failed (and warned): backend.o was built, or compile */
		return s->cwd ? merge_unsplit(s, NULL) : take_backend(s);
	/* A partition that failed to compile left an empty object (slot_step):
	 * the module is compiled unsplit by the command after "--". */
	for (int i = 0; i < n; i++) {
		char *p = xasprintf("%s/p%d.o", s->dir, i);
		long long size = file_size(p);
		free(p);
		/* (the slot warned: a compile's merge says no more) */
		if (size <= 0)
			return merge_unsplit(s, s->cwd ? NULL : "a partition failed to compile");
	}
	int *fixed = xcalloc((size_t)n, sizeof *fixed);
	if (fix_partitions(s, n, fixed) < 0) {
		free(fixed);
		return merge_unsplit(s, "a partition's debug info could not be restored");
	}
	char *no_dwo = s->dwo ? merge_dwo(s, n) : NULL;
	if (no_dwo) {
		char *why = xasprintf("its partitions' split DWARF could not be merged (%s)", no_dwo);
		int st = merge_unsplit(s, why);
		free(why);
		free(no_dwo);
		free(fixed);
		return st;
	}
	const char *bin = s->llvm_bin ? s->llvm_bin : MTPC_LLVM_BIN_DIR;
	char *tmp1 = xasprintf("%s.r.tmp", s->out), *tmp2 = xasprintf("%s.tmp", s->out);
	char *loc = xasprintf("%s/" MOD_PARTS "/" SPLIT_LOCALIZE, s->dir), *ren = xasprintf("%s/" MOD_PARTS "/" SPLIT_RENAME, s->dir);
	char *floc = xasprintf("%s/" MOD_FOLD_LOCALIZE, s->dir), *fren = xasprintf("%s/" MOD_FOLD_RENAME, s->dir);
	/* What the merge must do and no more: ld -r only for several objects
	 * (or to compress one: partitions write their debug info plain),
	 * llvm-objcopy only when the splitter promoted or renamed something,
	 * or the partitions folded copies of a static (common/fold_names.h). */
	int rewrite = file_size(loc) > 0 || file_size(ren) > 0, st = 0, folds = 0, link = n > 1 || s->gz;
	char *merged = !link ? xasprintf("%s/p0%s.o", s->dir, fixed[0] ? ".fix" : "") : xstrdup(tmp1);
	struct strv cmd = {0};
	if (link) {
		strv_addown(&cmd, xasprintf("%s/ld.lld", bin));
		strv_add(&cmd, "-r");
		/* ld -r writes debug sections uncompressed: a -gz compile's
		 * object has them compressed. */
		if (s->gz)
			strv_addown(&cmd, xasprintf("--compress-debug-sections=%s", s->gz));
		for (int i = 0; i < n; i++)
			strv_addown(&cmd, xasprintf("%s/p%d%s.o", s->dir, i, fixed[i] ? ".fix" : ""));
		strv_add(&cmd, "-o");
		strv_add(&cmd, tmp1);
		st = proc_run(cmd.v, NULL, NULL, NULL);
		strv_free(&cmd);
	}
	struct strv renames = {0};
	/* Only a plain compile's partitions (--cwd) load the fold's plugin. */
	if (st == 0 && n > 1 && s->cwd) {
		folds = fold_lists(merged, floc, fren, &renames);
		st = folds < 0;
		rewrite |= folds > 0;
	}
	if (st == 0 && rewrite) {
		/* Re-localize only the symbols the splitter promoted... */
		strv_addown(&cmd, xasprintf("%s/llvm-objcopy", bin));
		strv_addown(&cmd, xasprintf("--localize-symbols=%s", loc));
		/* ...and give them back their own names, as in the unsplit object. */
		strv_addown(&cmd, xasprintf("--redefine-syms=%s", ren));
		if (folds > 0) {
			/* The same for the bodies the partitions folded, and
			 * their sections. */
			strv_addown(&cmd, xasprintf("--localize-symbols=%s", floc));
			strv_addown(&cmd, xasprintf("--redefine-syms=%s", fren));
			strv_addv(&cmd, &renames);
		}
		strv_add(&cmd, merged);
		strv_add(&cmd, tmp2);
		st = proc_run(cmd.v, NULL, NULL, NULL);
		strv_free(&cmd);
		if (st == 0)
			debugfix_group_flags(merged, tmp2);
	}
	if (st == 0) {
		/* The one partition's object is kept: copied, not moved. */
		const char *result = rewrite ? tmp2 : merged;
		r = (!link && !rewrite ? mtpc_copy_file(result, s->out, MTPC_WRITE_IF_CHANGED)
					: move_if_changed(result, s->out)) < 0;
		if (r)
			mtpc_error("cannot write %s: %s", s->out, strerror(errno));
	} else if (s->cwd) {
		r = merge_unsplit(s, "merging its partitions failed") != 0;
	} else
		mtpc_error("merging the partitions of %s failed", s->dir);
	for (int i = 0; i < n; i++)
		if (fixed[i]) {
			char *fo = xasprintf("%s/p%d.fix.o", s->dir, i);
			unlink(fo);
			free(fo);
		}
	free(fixed);
	if (r == 0)
		record_module(s, -1, n);
	unlink(tmp1);
	unlink(tmp2);
	unlink(floc);
	unlink(fren);
	strv_free(&renames);
	free(tmp1);
	free(tmp2);
	free(floc);
	free(fren);
	free(merged);
	free(loc);
	free(ren);
	return r;
}
