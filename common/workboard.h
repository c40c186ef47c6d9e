/* workboard.h: the work MTPC's processes on this machine have announced.
 *
 * The job budget (jobs.h) says how many processes may work at once, not for
 * how long. Whether splitting a module shortens anything depends on what
 * else keeps the cores busy meanwhile: a split that must share its cores
 * with other links' backends or other compiles costs its duplicated work
 * and its merge and ends no sooner. So every mtpc-compile and every inner
 * build of mtpc-link and mtpc-distribute posts a notice of the work it is
 * about to run, and a front end deciding a split reads the others' notices
 * (the graph's makespan prediction, graph.h graph_split_choice).
 *
 * A notice is the file <pool>/work.<pid> in the job pool's directory
 * (jobs_pool_dir()), written atomically, which its writer holds under a
 * shared flock for as long as it lives. A reader that can take an
 * exclusive lock on a notice knows its writer is gone (ended without
 * withdrawing it: killed, crashed) and removes it. Its one line:
 *
 *     POSTED WORK END
 *
 * POSTED and END are CLOCK_REALTIME seconds (when it was posted, when the
 * work is predicted to end: its longest chain, or its work spread over the
 * cores it may use, whichever is longer), WORK the predicted CPU seconds.
 * A reader counts what is left of it at the same rate: at time t,
 * WORK * (END - t) / (END - POSTED), and END - t of chain (nothing once END
 * has passed: the prediction was short, and the writer is about to end).
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
 * seconds. Returns 0, or -1 (nothing posted, n->fd == -1: the pool's
 * directory cannot be used). */
int workboard_post(struct work_notice *n, double work, double duration);

/* Remove n, if posted. */
void workboard_withdraw(struct work_notice *n);

/* What the others' notices (every one but this process's) leave at this
 * moment: their CPU seconds, the longest of their chains in seconds, and
 * how many there are. */
struct work_others {
	double work, longest;
	int count;
};
void workboard_read(struct work_others *w);

#endif
