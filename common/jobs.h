/* jobs.h: one budget of jobs for the whole machine.
 *
 * Every MTPC process that is about to run real work here (an inner edge of a
 * link: a backend, a partition, a split, a merge, the final link) first
 * takes a token and gives it back when done, so that concurrent links (and
 * the compile launchers of the same build) together never run more work
 * than the budget, and a link never waits for another while cores are idle.
 * Where the tokens come from:
 *
 *   1. The outer build's GNU make jobserver, when MAKEFLAGS names one
 *      (--jobserver-auth=fifo:PATH, or R,W pipe descriptors this process
 *      inherited). The front end holds make's implicit token for its whole
 *      inner build: it exports JOBS_ENV_IMPLICIT, a lock file that one of
 *      its steps at a time holds instead of a pipe token (make -j1 would
 *      otherwise deadlock: the front end waits for steps that wait for a
 *      token nobody returns).
 *   2. Otherwise MTPC's own pool: JOBS_ENV_SLOTS (default: the cores) lock
 *      files in JOBS_ENV_DIR (default $XDG_RUNTIME_DIR/mtpc-jobs, else
 *      /tmp/mtpc-jobs-<uid>). A token is an flock on one of them, which the
 *      kernel drops when the process ends: a killed step never loses one.
 *
 * Tokens are never required for correctness: if the pool cannot be used
 * (no writable directory), jobs_acquire() says so once and lets the work
 * run (the build must not break because of MTPC). */
#ifndef MTPC_JOBS_H
#define MTPC_JOBS_H

#define JOBS_ENV_DIR "MTPC_JOBS_DIR"           /* the pool's directory */
#define JOBS_ENV_SLOTS "MTPC_JOB_SLOTS"        /* the pool's size */
#define JOBS_ENV_IMPLICIT "MTPC_JOBS_IMPLICIT" /* lock file of the front end's make token */
#define JOBS_ENV_OFF "MTPC_JOBS_OFF"           /* "1": no budget (each process runs at once) */
#define JOBS_ENV_HELD "MTPC_JOB_HELD"          /* "1": a parent holds our token (a step that
                                                  runs another step: the merge's fallback
                                                  backend must not wait for a second one) */

/* A token held. */
struct job_token {
	int fd;        /* the flocked slot or implicit file, or the jobserver's write end; -1: none */
	int pipe;      /* a byte taken from the jobserver (give it back on release) */
	char byte;     /* that byte */
	int own;       /* fd is ours to close after writing the byte back (a fifo) */
};

/* Take a token, waiting as long as it takes, and mark it held for the
 * processes this one starts (JOBS_ENV_HELD): a child never takes a second
 * one, which with all tokens held by parents would wait forever. Returns 0;
 * never fails (see above: without a usable budget, or when a parent holds
 * the token, t holds nothing and the work runs). */
int jobs_acquire(struct job_token *t);

/* Give t back (no-op for an empty token) and clear the mark. */
void jobs_release(struct job_token *t);

/* The pool's size: JOBS_ENV_SLOTS, else the online cores. */
int jobs_slots(void);

/* The pool's directory (JOBS_ENV_DIR, else the default above), created if
 * need be; NULL when it is not a directory of this user's. Heap string. */
char *jobs_pool_dir(void);

/* How many tokens are free at this moment: the pool's slots nobody holds
 * (each tried without waiting, and let go at once); -1 when the tokens are
 * make's (a jobserver's pipe cannot be counted) or the pool cannot be used. */
int jobs_idle(void);

/* For a front end: when this process holds a jobserver token of make's
 * (MAKEFLAGS names a usable jobserver), create the lock file path (inside the
 * front end's own directory) and set JOBS_ENV_IMPLICIT to it for the steps
 * it starts. Returns 0, or -1 when no jobserver is in use (nothing set). */
int jobs_share_implicit(const char *path);

#endif
