/* thinlink.c: the thin-link step: the index-only thin link, its shards
 * copied in only if changed, and the regular LTO object given the
 * visibilities the modules' bitcode gave its symbols. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "steps_int.h"
#include "debugfix.h"
#include "inner_dir.h"
#include "proc.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Copy the staged shards and imports files of every module to index/,
 * only if changed. */
static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A linker resolving bitcode gives each symbol the most constraining
 * visibility of all its bitcode definitions and references; the final link
 * here sees native objects only. The thin link's regular LTO object may
 * define with default visibility what the bitcode keeps hidden: CFI's jump
 * table entries for promoted statics, which LowerTypeTests declares without
 * the visibility the bitcode gave them. Plain ThinLTO makes them local;
 * linked as they are, they would be exported from a shared library. So give
 * obj's definitions the visibility the modules' symbol tables give them
 * (mtpc-split --print-visibility), only read when obj defines anything with
 * default or protected visibility. A failure costs one warning and leaves
 * obj as lld wrote it. */
static void restore_visibility(const struct step_args *s, const char *obj)
{
	struct strv defs = {0};
	if (elf_exported_definitions(obj, &defs) < 0 || defs.n == 0 || !s->tool) {
		strv_free(&defs);
		return;
	}
	qsort(defs.v, defs.n, sizeof *defs.v, cmp_cstr);
	char *list = xasprintf("%s/stage/visibility.txt", s->dir);
	char *modules = xasprintf("@%s/" INNER_MODULES_LIST, s->dir);
	struct strv cmd = {0};
	strv_addl(&cmd, s->tool, "--print-visibility", modules, "-o", list, NULL);
	struct buf err = {0}, want[2] = {{0}, {0}}; /* hidden, protected */
	char *text = NULL;
	size_t len;
	int st = proc_run(cmd.v, NULL, NULL, &err);
	strv_free(&cmd);
	if (st != 0 || mtpc_read_file(list, &text, &len) < 0) {
		size_t l = err.s ? strcspn(err.s, "\n") : 0;
		mtpc_warn("cannot read the modules' symbol visibilities (%s exited with %d%s%.*s); "
			  "%s keeps the visibilities lld gave it", s->tool, st, l ? ": " : "", (int)l,
			  l ? err.s : "", INNER_REGULAR_LTO);
	}
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *name = strchr(line, ' ');
		if (!name++)
			continue;
		int k = !strncmp(line, "hidden ", 7) ? 0 : !strncmp(line, "protected ", 10) ? 1 : -1;
		if (k >= 0 && bsearch(&name, defs.v, defs.n, sizeof *defs.v, cmp_cstr))
			buf_printf(&want[k], "%s\n", name);
	}
	if (want[0].len || want[1].len) {
		const char *bin = s->llvm_bin ? s->llvm_bin : MTPC_LLVM_BIN_DIR;
		strv_addown(&cmd, xasprintf("%s/llvm-objcopy", bin));
		for (int k = 0; k < 2; k++) {
			if (!want[k].len)
				continue;
			char *f = xasprintf("%s/stage/%s.txt", s->dir, k ? "protected" : "hidden");
			if (mtpc_write_file(f, want[k].s, want[k].len, 0) < 0)
				mtpc_warn("cannot write %s: %s", f, strerror(errno));
			strv_addown(&cmd, xasprintf("--set-symbols-visibility=%s=%s", f, k ? "protected" : "hidden"));
			free(f);
		}
		strv_add(&cmd, obj);
		buf_free(&err);
		if (proc_run(cmd.v, NULL, NULL, &err) != 0)
			mtpc_warn("cannot set the visibilities of %s: %s", obj, err.s ? err.s : "llvm-objcopy failed");
		strv_free(&cmd);
	}
	buf_free(&want[0]);
	buf_free(&want[1]);
	buf_free(&err);
	free(text);
	free(list);
	free(modules);
	strv_free(&defs);
}

int thinlink_step(const struct step_args *s)
{
	char *list = xasprintf("%s/" INNER_MODULES_LIST, s->dir), *text;
	size_t len;
	if (mtpc_read_file(list, &text, &len) < 0) {
		mtpc_error("cannot read %s: %s", list, strerror(errno));
		free(list);
		return 1;
	}
	free(list);
	/* lld does not create the directories --thinlto-prefix-replace implies. */
	char *copy = xstrdup(text), *save = NULL;
	for (char *m = strtok_r(copy, "\n", &save); m; m = strtok_r(NULL, "\n", &save)) {
		char *d = xasprintf("%s/stage%s", s->dir, m);
		*strrchr(d, '/') = 0;
		mtpc_mkdir_p(d);
		free(d);
	}
	free(copy);
	char *crashed = xasprintf("%s/" INNER_THINLINK_CRASHED, s->dir);
	unlink(crashed);
	struct buf err = {0};
	int st = proc_run(s->cmd, s->cwd, NULL, &err);
	/* lld itself may crash on an index-only thin link of inputs its
	 * in-process ThinLTO links fine (lld 19 and 22: an ifunc whose
	 * resolver is external and whose address an unused function takes):
	 * leave a marker, and mtpc-link runs the original link instead. An
	 * ordinary error (an undefined symbol) is the link's own: shown as is. */
	if (st && err.s && (strstr(err.s, "due to signal") || strstr(err.s, "PLEASE submit a bug report"))) {
		mtpc_write_file(crashed, "", 0, 0);
		size_t l = strcspn(err.s, "\n");
		mtpc_warn("the thin link crashed (%.*s)", (int)l, err.s);
	} else if (err.len) {
		fputs(err.s, stderr);
	}
	buf_free(&err);
	free(crashed);
	if (st) {
		free(text);
		return st;
	}
	int r = 0;
	save = NULL;
	for (char *m = strtok_r(text, "\n", &save); m && !r; m = strtok_r(NULL, "\n", &save)) {
		static const char *const ext[] = {".thinlto.bc", ".imports"};
		for (int k = 0; k < 2 && !r; k++) {
			char *from = xasprintf("%s/stage%s%s", s->dir, m, ext[k]);
			char *to = xasprintf("%s/index%s%s", s->dir, m, ext[k]);
			char *d = xstrdup(to);
			*strrchr(d, '/') = 0;
			if (mtpc_mkdir_p(d) < 0) {
				mtpc_error("cannot create %s: %s", d, strerror(errno));
				r = 1;
			} else if (move_if_changed(from, to) < 0) {
				r = 1;
			}
			free(d);
			free(from);
			free(to);
		}
	}
	free(text);
	if (r == 0) {
		char *from = xasprintf("%s/stage/" INNER_REGULAR_LTO, s->dir);
		char *to = xasprintf("%s/" INNER_REGULAR_LTO, s->dir);
		if (access(from, F_OK) != 0) {
			mtpc_error("the thin link wrote no %s (ld.lld 19 --lto-obj-path)", from);
			r = 1;
		} else if (restore_visibility(s, from), move_if_changed(from, to) < 0) {
			r = 1;
		}
		free(from);
		free(to);
	}
	return r;
}
