/* steps.h: running the inner build's edges. Every edge runs a front end
 * again in a step mode (protocol/step_protocol.h has the command lines and
 * what each step does); a front end's main() hands such an argv here.
 *
 * One file per step: thinlink.c, compile.c (backend and slot), split.c,
 * merge.c, join.c (a compile's partitions), dwp.c; the node step is the
 * Slurm executor's (slurm.h); the run step is here. files.c and record.c are what they share (steps_int.h).
 * Every step takes a token of the machine's job budget first (jobs.h),
 * unless its work runs elsewhere (a Slurm node). */
#ifndef MTPC_NG_STEPS_H
#define MTPC_NG_STEPS_H

/* Is argv[1] a step mode? */
int steps_is_step(const char *arg);

/* Run the step argv[1] names; returns its exit status (2: a bad command
 * line, after one error message). */
int steps_main(int argc, char **argv);

/* Number of partitions in a plan.json text (the length of "partitions"),
 * or -1 if it is not a valid plan. */
int steps_plan_partitions(const char *json);

#endif
