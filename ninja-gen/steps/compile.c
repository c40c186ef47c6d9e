/* compile.c: the backend and slot steps: a compile checked the way
 * ThinLTO needs (clang exits 0 with an empty object when a backend cannot
 * load an import, llvm issue 75441), its output moved in only if changed,
 * its messages shown with real line numbers. */
#include "steps_int.h"
#include "debugfix.h"
#include "inner_dir.h"
#include "proc.h"
#include "slurm.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A partition's map of virtual lines (--plan P --part I: from lines.txt
 * beside P); empty when there is none. */
static void slot_lines(const struct step_args *s, struct line_map *map)
{
	map->span = NULL;
	map->n = 0;
	if (!s->plan || !s->part)
		return;
	const char *slash = strrchr(s->plan, '/');
	char *path = slash ? xasprintf("%.*s/" SPLIT_LINES, (int)(slash - s->plan), s->plan)
			   : xstrdup(SPLIT_LINES);
	char *text;
	size_t len;
	if (mtpc_read_file(path, &text, &len) == 0) {
		debugfix_parse_lines(text, atoi(s->part), map);
		free(text);
	}
	free(path);
}

/* The compiler's messages, with real lines where a partition's have
 * virtual ones (a backend warning or remark names its source line). */
static void print_messages(const struct step_args *s, const char *text)
{
	struct line_map map;
	slot_lines(s, &map);
	char *real = debugfix_text(text, &map);
	fputs(real, stderr);
	free(real);
	debugfix_free_lines(&map);
}

/* Shared by the backend and slot steps. *machine is set when the failure is
 * not the compiler's (out of space, or our own write of the object failed):
 * then a slot must fail rather than fall back. */
int compile_checked(const struct step_args *s, double *seconds, long long *bytes, int *machine)
{
	char *tmp = xasprintf("%s.tmp", s->out);
	unlink(tmp);
	struct buf err = {0};
	/* CPU seconds, not wall: what the compile costs, whatever else the
	 * machine runs meanwhile (the plan cache and mtpc-link's choice of
	 * modules compare these times across builds). */
	struct proc_io io = {.err = &err, .cpu = seconds};
	int st = slurm_run(s->cmd, &io, s->out); /* here, or on the Slurm allocation */
	if (err.len)
		print_messages(s, err.s);
	long long size = file_size(tmp);
	int bad = st != 0 || (err.s && strstr(err.s, "Error running ThinLTO backend")) || size <= 0;
	if (bad && s->dwo) {
		char *dt = xasprintf("%s.tmp", s->dwo);
		unlink(dt);
		free(dt);
	}
	if (bad) {
		const char *full = out_of_space(err.s);
		*machine = full != NULL;
		if (full)
			mtpc_error("compiling %s failed: %s (the next build retries it)", s->out, full);
		else if (st == 0)
			mtpc_error("compiling %s failed: %s", s->out,
				   size <= 0 ? "empty or missing object (ThinLTO backend error?)"
					     : "\"Error running ThinLTO backend\"");
		unlink(tmp);
		buf_free(&err);
		free(tmp);
		return st ? st : 1;
	}
	buf_free(&err);
	int r = move_if_changed(tmp, s->out);
	free(tmp);
	if (r == 0 && s->dwo)
		r = take_dwo(s->dwo);
	*bytes = size;
	*machine = r < 0; /* the compile worked, writing its result did not */
	return r < 0 ? 1 : 0;
}
