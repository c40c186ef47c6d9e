/* makespan.h: whether splitting a module shortens anything, by the
 * predicted makespan of the work it shares the cores with.
 *
 * The one cost model of the split choice, used where the choice is made
 * (graph/choose.c at a link, compile/mtpc_compile.c at a compile) and where
 * it is made again (steps/split.c: the split step of a link's module
 * re-reads the work board when it runs, after the thin link, and compiles
 * the module unsplit when the cores have filled since; struct
 * split_recheck). Units are cost units (summary instructions, or measured
 * seconds turned into them) unless a name says seconds.
 *
 * With J lanes, backends take at least the longest one's time and at least
 * their total work over J (a list schedule comes within the longest task of
 * that bound). Split into k partitions, a module of cost c becomes a chain
 * of c/SPLIT_OVERHEAD (its import, split and merge) and one slot of c/k,
 * and adds c/SPLIT_OVERHEAD to the total: on cores the other work keeps
 * busy, the split shortens nothing and costs its overhead. A module whose
 * cost reaches the threshold is split when that shortens the prediction by
 * SPLIT_MIN_GAIN percent (one split last time: when it does not lengthen
 * it), into the fewest partitions that come within SPLIT_K_SLACK percent of
 * the shortest prediction (fewer partitions duplicate less work). */
#ifndef MTPC_NG_MAKESPAN_H
#define MTPC_NG_MAKESPAN_H

#include "buf.h"

#include <stddef.h>

#define SPLIT_OVERHEAD 10
#define SPLIT_MIN_GAIN 5
#define SPLIT_K_SLACK 2

/* A module of cost c split in k partitions (k >= 2; whole below 2): its
 * work (with the split's SPLIT_OVERHEAD), its chain (that overhead and one
 * slot) and its longest task (one slot), in cost units. */
struct split_cost {
	long long work, chain, task;
};
struct split_cost makespan_split_cost(long long c, int k);

struct split_choice {
	int parts;            /* partitions, 0: not split */
	long long split_span; /* predicted makespan split into the best k (or
	                       * into 2 when no k pays), in cost units */
	long long whole_span; /* predicted makespan unsplit */
};

/* The work outside the link (or compile) that shares its lanes: the other
 * MTPC processes' notices on the work board (workboard.h), in cost units
 * from now. All of it counts with the link's own work, spread over the
 * lanes, and the prediction is the makespan of everything. Job tokens are
 * never taken back, so work of long tasks (each as long as half of what
 * its notice has left, or longer: a whole compile, a split compile's
 * partitions) holds its lanes until it ends: with no lane free now (the
 * pool's idle tokens, where it can tell) and none left by that work, the
 * link's longest chain starts only when it ends. So a split pays beside a
 * busy machine where the lanes come free together and k slots use them
 * (two partitions end, both lanes idle), and not where a lane is free now
 * and the rest of the work fills the others for as long as the module
 * takes whole (another compile, another link's backends): it would only
 * add its overhead. */
struct outside_load {
	double held_lanes, held_until, held_work; /* long tasks: lanes, until when, work */
	double shared_work, shared_until;         /* short tasks: work, until when */
	double idle;                              /* lanes free now; -1: unknown */
	double outer_lanes; /* the outer build's other edges that ran beside
	                     * this link in its last run, in lanes (outer_log.h;
	                     * 0: none known): the outer build fills the lanes
	                     * its running edges free with edges the board does
	                     * not show yet, so at least that many lanes' worth
	                     * of work competes with the link's for as long as
	                     * its backends take unsplit (the shared work is at
	                     * least that) */
};

/* The predicted makespan of backends of total work (wide: how many can run
 * at once) on jobs lanes, the longest of which takes longest, beside the
 * load out (NULL: none), of everything: at least the longest chain
 * (started when a lane is free), the backends' work over the lanes they can
 * use, all the work over all lanes, and the end of out's work; rounded up. */
long long makespan_span(long long work, long long longest, size_t wide, int jobs, const struct outside_load *out);

/* The choice for a module of cost c, beside other backends of total work
 * others_work whose longest takes others_longest (nmods modules in all,
 * this one included), with jobs lanes shared with out (NULL: none) and at
 * most kmax partitions; was_split: it was split at its last build (1: the
 * lenient rule). */
struct split_choice makespan_split_choice(long long c, long long others_work, long long others_longest,
					  size_t nmods, int jobs, const struct outside_load *out, int kmax,
					  int was_split);

/* The board's load (workboard_read's, in seconds) in cost units at spc
 * seconds per unit. */
struct work_others;
struct outside_load makespan_outside_load(const struct work_others *w, double spc);

/* The lanes of jobs that out leaves free now: those its long tasks do not
 * hold, or more where the pool has more tokens idle right now. */
double makespan_free_lanes(const struct outside_load *out, int jobs);

/* Predicted seconds for a "%.*f" in the reasons: whole ones from 10 s,
 * tenths from 1 s, else hundredths. */
#define MAKESPAN_SECS(s) ((double)(s) >= 10 ? 0 : (double)(s) >= 1 ? 1 : 2), (double)(s)

/* Why a split was not made beside backends other backends of its own, jobs
 * other MTPC jobs and outer lanes of the outer build's other edges: "the
 * cores are busy with B other backends[ and J other MTPC jobs][ and the
 * outer build's other edges (L cores while it ran last time)] (predicted X
 * s split vs Y s unsplit)"; backends < 0: none named (a compile has no
 * backends of its own); spc: seconds per cost unit. Heap. */
char *makespan_busy_reason(int backends, int jobs, double outer, const struct split_choice *ch, double spc);

/* What a link's split choice of one module was made from, written by the
 * graph next to the module (MOD_RECHECK, common/inner_dir.h) for its split
 * step, which makes the choice again against the work board as it is when
 * the step runs (makespan_recheck). The choice reads the board when the
 * link starts; but the outer build starts its next links when lanes come
 * free, often a moment later, so the first links of a busy build would
 * split a module beside backends that fill every core. The thin link
 * before the split step gives the board that moment. Nothing here names a
 * time or a pid, and the file is no edge's input: a split step that does
 * not rerun keeps its choice. */
struct split_recheck {
	long long cost;           /* the module's */
	long long others_work;    /* the link's other backends (split ones with
	                           * their overhead), as the choice counted them */
	long long others_longest; /* and their longest chain */
	long long nmods;          /* modules in the link */
	int jobs;                 /* lanes of the inner build */
	int parts;                /* the partitions chosen (at least 2) */
	double spc;               /* seconds per cost unit, for the reason */
	double outer_lanes;       /* the outer build's lanes beside the link in
	                           * its last run (struct outside_load), which
	                           * count only while the board shows other work */
};

/* One line: "COST OTHERS_WORK OTHERS_LONGEST NMODS JOBS PARTS SPC OUTER\n". */
void makespan_recheck_format(struct buf *b, const struct split_recheck *r);

/* Parse that line; 0, or -1 when it is not one. */
int makespan_recheck_parse(const char *text, struct split_recheck *r);

/* The choice made again beside the board's load now (the lenient rule of a
 * module already split: it is held only where the split would lengthen
 * the prediction). Returns 1 when the split still pays (or the board is
 * empty), 0 when it does not, with *why (heap) the reason for people:
 * "the cores are busy with N other backends and M other MTPC jobs
 * (predicted X s split vs Y s unsplit)". */
int makespan_recheck(const struct split_recheck *r, char **why);

#endif
