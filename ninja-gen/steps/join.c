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

/* The plain compile (the command after "--") writes s->out instead. */
static int join_unsplit(const struct step_args *s, const char *why)
{
	mtpc_warn("%s: %s; compiling it unsplit", s->module, why);
	return proc_run(s->cmd, NULL, NULL, NULL);
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
	if (n <= 0)
		return join_unsplit(s, "the split failed");
	struct strv cmd = {0};
	char *plan = xasprintf("%s/" MOD_PARTS "/" SPLIT_PLAN, s->dir), *why = NULL;
	strv_addl(&cmd, s->tool, "--join", s->module, "--plan", plan, "-o", s->out, NULL);
	for (int i = 0; i < n; i++) {
		char *p = xasprintf("%s/" MOD_SLOT_FMT, s->dir, i);
		/* A partition that failed to compile left an empty object. */
		if (file_size(p) <= 0 && !why)
			why = xstrdup("a partition failed to compile");
		strv_addown(&cmd, p);
	}
	if (!why) {
		struct buf err = {0};
		if (proc_run(cmd.v, NULL, NULL, &err) != 0) {
			size_t l = err.s ? strcspn(err.s, "\n") : 0;
			why = xasprintf("joining its partitions failed (%.*s)", (int)l, l ? err.s : "no message");
		}
		buf_free(&err);
	}
	int r = why ? join_unsplit(s, why) != 0 : 0;
	free(why);
	strv_free(&cmd);
	free(plan);
	return r;
}
