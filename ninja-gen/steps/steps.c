/* steps.c: see steps.h. */
#define _POSIX_C_SOURCE 200809L
#include "steps.h"
#include "jobs.h"
#include "proc.h"
#include "slurm.h"
#include "steps_int.h"
#include "util.h"

#include <string.h>

int steps_is_step(const char *arg)
{
	return step_kind_of(arg) >= 0;
}

/* The backend and slot steps: a checked compile; a slot records its time,
 * and a slot whose compile failed (not for want of disk) leaves an empty
 * object that makes the merge compile the module unsplit. */
static int compile_step(const struct step_args *s)
{
	double sec = 0;
	long long bytes = 0;
	int machine = 0;
	int r = compile_checked(s, &sec, &bytes, &machine);
	if (s->kind == STEP_BACKEND) {
		if (r == 0) {
			record_module(s, sec, 0);
			record_rebuild(s, 0, 0);
		}
		return r;
	}
	if (r == 0) {
		record_timing(s, sec, bytes);
		return 0;
	}
	if (machine)
		return r; /* not the partition's fault: no fallback, rerun next time */
	/* The build must not break because of MTPC: leave an empty object (and
	 * .dwo) that tells the merge to compile the module unsplit. */
	mtpc_warn("compiling partition %s failed; its module will be compiled unsplit", s->out);
	int w = mtpc_write_file(s->out, "", 0, MTPC_WRITE_IF_CHANGED);
	if (w == 0 && s->dwo)
		w = mtpc_write_file(s->dwo, "", 0, MTPC_WRITE_IF_CHANGED);
	return w < 0 ? 1 : 0;
}

static int run_step(const struct step_args *s)
{
	switch (s->kind) {
	case STEP_THINLINK: return thinlink_step(s);
	case STEP_BACKEND:
	case STEP_SLOT: return compile_step(s);
	case STEP_SPLIT: return split_step(s);
	case STEP_MERGE: return merge_step(s);
	case STEP_JOIN: return join_step(s);
	case STEP_RUN: return proc_run(s->cmd, s->cwd, NULL, NULL);
	case STEP_DWP: return dwp_step(s);
	case STEP_NODE: return slurm_node_step(s->status, s->cmd);
	case STEP_KINDS: break;
	}
	return 2;
}

/* Does step s run its work on this machine? Everything but a node step
 * (already on its node) and a compile that goes to the Slurm allocation
 * (slurm_run takes a token itself when it falls back to a local compile). */
static int runs_here(const struct step_args *s)
{
	if (s->kind == STEP_NODE)
		return 0;
	if (s->kind == STEP_BACKEND || s->kind == STEP_SLOT)
		return !slurm_active();
	return 1;
}

int steps_main(int argc, char **argv)
{
	struct step_args s;
	int p = step_parse(argc, argv, &s);
	if (p != 0) {
		step_args_free(&s);
		return p > 0 ? 0 : 2;
	}
	/* One machine-wide budget of jobs for every link (and compile
	 * launcher) running at once (jobs.h). */
	struct job_token token = {.fd = -1};
	if (runs_here(&s))
		jobs_acquire(&token);
	int r = run_step(&s);
	jobs_release(&token);
	step_args_free(&s);
	return r;
}
