/* dwp.c: the dwp step, the .dwp package of a -gsplit-dwarf link. */
#include "steps_int.h"
#include "debugfix.h"
#include "proc.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The value of the attribute line "DW_AT_x\t(\"VALUE\")" at l (as
 * llvm-dwarfdump prints a string), heap; NULL if it is not one. */
static char *quoted_value(const char *l)
{
	const char *q = strstr(l, "(\"");
	const char *e = q ? strstr(q + 2, "\")") : NULL;
	return e ? xasprintf("%.*s", (int)(e - q - 2), q + 2) : NULL;
}

/* The .dwo files output's skeleton units name, each once (their
 * DW_AT_comp_dir makes a relative name absolute), from llvm-dwarfdump's
 * unit DIEs. -1 if it cannot say. */
static int named_dwo_files(const char *bin, const char *output, struct strv *files)
{
	char *cmd[] = {xasprintf("%s/llvm-dwarfdump", bin), "--debug-info", "--recurse-depth=0", (char *)output, NULL};
	struct buf out = {0};
	struct proc_io io = {.out = &out};
	int st = proc_spawn(cmd, &io);
	free(cmd[0]);
	char *dir = NULL, *name = NULL;
	for (char *l = out.s; st == 0 && l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		if (strstr(l, "Compile Unit:") || strstr(l, "Type Unit:")) {
			free(dir);
			free(name);
			dir = name = NULL;
		} else if (strstr(l, "DW_AT_comp_dir")) {
			free(dir);
			dir = quoted_value(l);
		} else if (strstr(l, "DW_AT_dwo_name") || strstr(l, "DW_AT_GNU_dwo_name")) {
			free(name);
			name = quoted_value(l);
		}
		if (name && (dir || name[0] == '/')) {
			char *path = name[0] == '/' || !dir ? xstrdup(name) : xasprintf("%s/%s", dir, name);
			int seen = 0;
			for (size_t k = 0; k < files->n && !seen; k++)
				seen = !strcmp(files->v[k], path);
			if (!seen)
				strv_add(files, path);
			free(path);
			free(name);
			name = NULL;
		}
		l = nl ? nl + 1 : NULL;
	}
	free(dir);
	free(name);
	buf_free(&out);
	return st == 0 ? 0 : -1;
}

/* llvm-dwp of every .dwo the link output names (its skeleton CUs give the
 * paths: ours are absolute, those of native objects relative to their
 * DW_AT_comp_dir) into the .dwp, without the string offsets no unit reads
 * (debugfix_package), written only if changed. llvm-dwp -e reads a .dwo
 * once per skeleton that names it, so the .dwo of a plain compile split
 * with --merge-dwo (a unit per partition, every skeleton naming it) stops
 * it at a duplicate DWO id: then the files are listed here, each once. */
int dwp_step(const struct step_args *s)
{
	const char *bin = s->llvm_bin ? s->llvm_bin : MTPC_LLVM_BIN_DIR;
	char *tmp = xasprintf("%s.tmp", s->out);
	struct strv cmd = {0};
	strv_addown(&cmd, xasprintf("%s/llvm-dwp", bin));
	strv_addl(&cmd, "-e", s->cmd[0], "-o", tmp, NULL);
	unlink(tmp);
	struct buf err = {0};
	int st = proc_run(cmd.v, NULL, NULL, &err);
	strv_free(&cmd);
	if (st != 0 && err.s && strstr(err.s, "duplicate DWO ID")) {
		struct strv files = {0};
		strv_addown(&cmd, xasprintf("%s/llvm-dwp", bin));
		if (named_dwo_files(bin, s->cmd[0], &files) == 0 && files.n) {
			strv_addv(&cmd, &files);
			strv_addl(&cmd, "-o", tmp, NULL);
			buf_free(&err);
			st = proc_run(cmd.v, NULL, NULL, &err);
		}
		strv_free(&files);
		strv_free(&cmd);
	}
	if (st != 0 && err.len)
		fwrite(err.s, 1, err.len, stderr);
	buf_free(&err);
	int r = 1;
	if (st != 0) {
		mtpc_error("llvm-dwp could not pack the .dwo files of %s into %s", s->cmd[0], s->out);
	} else if (file_size(tmp) < 0) {
		/* No skeleton in the output (no -g): llvm-dwp warns, exits 0 and
		 * writes nothing. An empty package keeps the edge up to date, and
		 * a debugger never opens it without a skeleton that needs it. */
		r = mtpc_write_file(s->out, "", 0, MTPC_WRITE_IF_CHANGED) < 0;
		if (r)
			mtpc_error("cannot write %s: %s", s->out, strerror(errno));
	} else if (debugfix_package(tmp) == 0) {
		r = move_if_changed(tmp, s->out) < 0;
	}
	unlink(tmp);
	free(tmp);
	return r;
}
