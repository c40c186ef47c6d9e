/* join.c: the join step of a compile's pre-link split: mtpc-split --join
 * of the partitions' pre-link objects into one ThinLTO object, and the plain
 * compile instead whenever anything on the way failed (the build never
 * breaks because of MTPC). */
#include "steps_int.h"
#include "inner_dir.h"
#include "proc.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plain compile (the command after "--", in the compile's directory)
 * writes s->out instead; why: the warning, or NULL when the split or a slot
 * gave one already. */
static int join_unsplit(const struct step_args *s, const char *why)
{
	if (why)
		mtpc_warn("%s: %s; compiling it unsplit", s->module, why);
	mark_unsplit(s->dir, 1);
	return proc_run(s->cmd, s->cwd, NULL, NULL);
}

int join_step(const struct step_args *s)
{
	char *np = xasprintf("%s/" MOD_COUNT, s->dir), *text = NULL;
	size_t len;
	int n = -1;
	if (mtpc_read_file(np, &text, &len) == 0)
		n = atoi(text);
	free(text);
	free(np);
	mark_unsplit(s->dir, 0);
	if (n <= 0)
		return join_unsplit(s, NULL); /* the split step warned */
	struct strv cmd = {0};
	char *plan = xasprintf("%s/" MOD_PARTS "/" SPLIT_PLAN, s->dir), *why = NULL;
	int slot_failed = 0;
	strv_addl(&cmd, s->tool, "--join", s->module, "--plan", plan, "-o", s->out, NULL);
	strv_addv(&cmd, &s->split_args); /* --no-join-inline; the split's own are ignored */
	for (int i = 0; i < n; i++) {
		char *p = xasprintf("%s/" MOD_SLOT_FMT, s->dir, i);
		/* A partition that failed to compile left an empty object. */
		slot_failed |= file_size(p) <= 0; /* the slot step warned */
		strv_addown(&cmd, p);
	}
	if (!slot_failed) {
		struct buf err = {0};
		int st = proc_run(cmd.v, NULL, NULL, &err);
		if (st != 0) {
			size_t l = err.s ? strcspn(err.s, "\n") : 0;
			why = l ? xasprintf("joining its partitions failed (%.*s)", (int)l, err.s)
				: xasprintf("joining its partitions failed (%s exited with %d, no message)",
					    mtpc_base_name(s->tool), st);
		}
		buf_free(&err);
	}
	int r = why || slot_failed ? join_unsplit(s, why) != 0 : 0;
	free(why);
	strv_free(&cmd);
	free(plan);
	return r;
}
