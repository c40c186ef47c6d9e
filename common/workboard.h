/* workboard.h: the work MTPC's processes on this machine have announced.
 *
 * The job budget (jobs.h) says how many processes may work at once, not for
 * how long. Whether splitting a module shortens anything depends on what
 * else keeps the cores busy meanwhile: a split that must share its cores
 * with other links' backends or other compiles costs its duplicated work
 * and its merge and ends no sooner. So every mtpc-compile and every inner
 * build of mtpc-link and mtpc-distribute posts a notice of the work it is
 * about to run, and a front end deciding a split reads the others' notices
 * (the makespan prediction, ninja-gen/model/makespan.h), as does a link's
 * split step, which makes the choice again when it runs.
 *
 * A notice is the file <pool>/work.<pid> in the job pool's directory
 * (jobs_pool_dir()), written atomically, which its writer holds under a
 * shared flock for as long as it lives. A reader that can take an
 * exclusive lock on a notice knows its writer is gone (ended without
 * withdrawing it: killed, crashed) and removes it. Its one line:
 *
 *     POSTED WORK END TASK
 *
 * POSTED and END are CLOCK_REALTIME seconds (when it was posted, when the
 * work is predicted to end: its longest chain, or its work spread over the
 * cores it may use, whichever is longer), WORK the predicted CPU seconds,
 * TASK the longest single task in it (a whole compile is one task; a
 * link's backends are many short ones). A reader counts what is left of it
 * at the same rate: at time t, WORK * (END - t) / (END - POSTED), for
 * END - t more (nothing once END has passed: the prediction was short, and
 * the writer is about to end), over a width of parallel tasks of what is
 * left over END - t. Job tokens are held until a task ends, so a notice
 * of a few long tasks (TASK at least half of what it has left, and WORK at
 * most FEW_TASKS times TASK) holds its lanes until it ends; any other
 * competes for each lane that comes free (makespan.h, struct outside_load).
 *
 * What the board cannot see: edges of the outer build that do not run
 * through MTPC, and the outer build's edges not started yet. A split is
 * then predicted to pay as it would on an idle machine, the behaviour
 * without the board. Nothing here is needed for correctness: a board that
 * cannot be used is as good as an empty one. */
#ifndef MTPC_WORKBOARD_H
#define MTPC_WORKBOARD_H

/* A notice posted by this process (WORK_NOTICE_INIT: none yet). */
struct work_notice {
	int fd;     /* the notice, flocked (shared); -1: none posted */
	char *path; /* its path */
};
#define WORK_NOTICE_INIT {-1, NULL}

/* Post (or replace) n: work CPU seconds predicted to end in duration
 * seconds, whose longest task takes task seconds. Returns 0, or -1
 * (nothing posted, n->fd == -1: the pool's directory cannot be used). */
int workboard_post(struct work_notice *n, double work, double duration, double task);

/* Remove n, if posted. */
void workboard_withdraw(struct work_notice *n);

/* What the others' notices leave at this
 * moment, in seconds: of those of long tasks, their lanes (parallel width),
 * until when the last of them runs and their CPU seconds; of those of short
 * tasks, their CPU seconds and until when; how many notices there are; and
 * how many job tokens are free right now (jobs_idle(): -1 unknown). The
 * others: every notice but those of this process and of its ancestors,
 * whose work includes this process's (a split step of a link's inner
 * build, whose front end posted a notice for the whole inner build). */
struct work_others {
	double held_lanes, held_until, held_work;
	double shared_work, shared_until;
	int count;
	int idle;
};
void workboard_read(struct work_others *w);

#endif
