/* slurm.h: the Slurm executor. With --executor slurm, a link holds one
 * Slurm allocation while its inner build runs, and every backend and slot
 * compile of that build runs as a job step of it (srun --jobid), on
 * whichever node has a free CPU. The import/split, the merge and the final
 * link stay on the machine that runs the link: each reads or writes whole
 * modules and indexes, is short and sits on the critical path, where a
 * dispatch would only add its overhead.
 *
 * Two halves:
 *   - the front end (mtpc-link, mtpc-distribute): slurm_begin() allocates
 *     and hands the job id to the inner build through the environment (so
 *     that no command in build.ninja changes from link to link), and
 *     slurm_end() cancels it, also after Ctrl-C;
 *   - the steps: slurm_run() runs one compile as a job step, retries it
 *     when the step (not the compile) failed, and compiles locally after the
 *     last try. On the node, the step is "<self> --node-step", which writes
 *     what happened to a status file in the shared build tree.
 * The build tree, MTPC and the compiler must be at the same paths on the
 * nodes (a shared filesystem): a step runs the same command line. */
#ifndef MTPC_NG_SLURM_H
#define MTPC_NG_SLURM_H

#include "buf.h"
#include "proc.h"

/* What the front end passes the steps (environment variables). */
#define SLURM_ENV_JOB "MTPC_SLURM_JOBID" /* the allocation */
#define SLURM_ENV_DIR "MTPC_SLURM_DIR"   /* <inner>/slurm: status files, edges.log */
#define SLURM_ENV_TRIES "MTPC_SLURM_TRIES"
/* One line per remote compile, for tests and the dispatch benchmark:
 * "<object> <node> <try> <ready> <start> <end> <back> <exit> <cpu>", the
 * times in seconds since the epoch: ready when the step asked srun, start
 * and end of the compile on the node, back when srun returned; cpu: the
 * compile's CPU seconds on the node (exit -1, cpu 0: it did not finish). */
#define SLURM_EDGES_LOG "edges.log"

/* Default tries of one compile on the cluster before it runs locally. */
#define SLURM_DEFAULT_TRIES 3
/* Default seconds to wait for the allocation (queue or unreachable
 * controller) before the link runs locally. */
#define SLURM_DEFAULT_WAIT 60

/* The executor settings of a link (options and environment). */
struct slurm_opts {
	int on;               /* --executor slurm */
	struct strv args;     /* --slurm-arg: extra salloc words (partition, time...) */
	int tries;            /* --slurm-tries */
	int wait;             /* --slurm-wait seconds */
};

/* A link's allocation. */
struct slurm {
	char *job;      /* its id; NULL: the link runs locally */
	int cpus;       /* its CPUs: the inner build's -j */
	char *job_file; /* <inner>/slurm.job, so that the next link cancels an
	                 * allocation a killed link left behind */
};

/* Steps: does this inner build run its compiles on a Slurm allocation
 * (the front end's environment says so)? */
int slurm_active(void);

/* Front end: parse "local" or "slurm" into *on. Returns 0, or -1 after an
 * error message. */
int slurm_parse_executor(const char *arg, int *on);

/* Front end: allocate want CPUs (fewer if fewer are idle; --slurm-arg
 * words may ask otherwise) for the inner build in inner. Returns 0 with
 * s->job set and the environment set for the steps, or -1 after one
 * warning: the link then runs locally. want 0 (the inner build is up to
 * date, inner_up_to_date()): -1 without a warning or an allocation. Either
 * way an allocation a killed link left in inner is cancelled first. Catches
 * SIGINT, SIGTERM and SIGHUP from here on, until slurm_end(). */
int slurm_begin(struct slurm *s, const struct slurm_opts *o, int want, const char *inner);

/* Front end: cancel the allocation (if any) and free s. Returns the signal
 * that interrupted the link (after which the caller should stop), or 0. */
int slurm_end(struct slurm *s);

/* Steps: run cmd like proc_spawn(cmd, io), as a job step of the
 * allocation in $MTPC_SLURM_JOBID when set (else locally: the calling step
 * holds a job token). A compile that falls back to this machine after its
 * last try takes a token of the machine's job budget first (jobs.h). what
 * names the compile in messages and in edges.log. io->cpu receives the CPU
 * seconds measured on the node. */
int slurm_run(char *const *cmd, const struct proc_io *io, const char *what);

/* "--node-step --status F -- <cmd>": the job step on the node. */
int slurm_node_step(const char *status_file, char *const *cmd);

#endif
