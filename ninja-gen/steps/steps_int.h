/* steps_int.h: what the steps share (files.c, record.c) and the step
 * entry points steps.c dispatches to. Each returns the step's exit status. */
#ifndef MTPC_NG_STEPS_INT_H
#define MTPC_NG_STEPS_INT_H

#include "step_protocol.h"

/* The size of p, or -1 if it does not exist. */
long long file_size(const char *p);

/* Move tmp to path only if the content differs (so restat can stop the
 * rebuild there). Returns 0 or -1 after an error message. */
int move_if_changed(const char *tmp, const char *path);

/* Move the .dwo a -gsplit-dwarf compile wrote to dwo.tmp in, only if
 * changed (an empty one if it wrote none). Returns 0 or -1. */
int take_dwo(const char *dwo);

/* The message of a full disk or quota in msg (a failure of the machine that
 * must fail the step, so the next build retries it), or NULL. */
const char *out_of_space(const char *msg);

/* Mark module directory dir as compiled unsplit after all (MOD_UNSPLIT),
 * or clear the mark: the front ends' summaries read it. */
void mark_unsplit(const char *dir, int unsplit);

/* The checked compile of the backend and slot steps: s->cmd writes
 * s->out.tmp, moved in only if changed. *seconds: its CPU; *bytes: the
 * object's size; *machine: the failure was the machine's, not the
 * compiler's (then a slot fails rather than falls back). */
int compile_checked(const struct step_args *s, double *seconds, long long *bytes, int *machine);

/* Plan cache records (record.c): a slot's time and object size under its
 * plan's key; with --record-module, a module's backend seconds (seconds < 0:
 * the sum of its n slots' recorded times) and one rebuild of it (through a
 * split of parts partitions, rewritten of them changed; 0 and 0: compiled
 * whole). */
void record_timing(const struct step_args *s, double seconds, long long bytes);
void record_module(const struct step_args *s, double seconds, int n);
void record_rebuild(const struct step_args *s, int parts, int rewritten);

int thinlink_step(const struct step_args *s);
int split_step(const struct step_args *s);
int merge_step(const struct step_args *s);
int dwp_step(const struct step_args *s);
int join_step(const struct step_args *s);

#endif
