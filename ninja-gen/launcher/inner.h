/* inner.h: what the three launchers (mtpc-link, mtpc-distribute,
 * mtpc-compile; the folder ninja-gen/launcher/) share around their inner
 * build: the options, finding the tools, the plan cache checked once per
 * link, running the build, and the one summary line a link prints. */
#ifndef MTPC_NG_INNER_H
#define MTPC_NG_INNER_H

#include "graph.h"
#include "mtpc_cache.h"
#include "slurm.h"

#include <getopt.h>
#include <stdio.h>

/* The options every front end takes (mtpc-link, mtpc-distribute, mtpc-compile) (their --help texts say what each does). */
struct inner_opts {
	long long threshold;      /* --threshold BYTES; -1: choose by cost */
	long long cost_threshold; /* --cost-threshold N */
	long long relay_cost;     /* --relay-cost N; -1: cost_threshold / RELAY_FRACTION */
	int relay;                /* --relay: GRAPH_RELAY_* */
	int busy;                 /* --busy: GRAPH_BUSY_* */
	long long min_cost;       /* --min-cost C; 0: not given */
	int partitions, jobs;     /* --partitions, --jobs; 0: cores */
	int verbose;              /* --verbose */
	int no_type_units;        /* --no-type-units */
	int merge_dwo;            /* --merge-dwo (mtpc-compile) */
	const char *cache, *split_tool, *llvm_bin, *ninja, *dir;
	struct strv launcher;     /* --launcher WORD... */
	struct strv split_args;   /* --split-arg WORD... */
	struct slurm_opts slurm;  /* --executor, --slurm-arg, --slurm-tries, --slurm-wait */
	/* The lists hold words from the environment (mtpc-distribute): the
	 * first option of the kind replaces them rather than adding to them. */
	int launcher_from_env, split_args_from_env, slurm_args_from_env;
};

/* getopt_long values and entries of the shared options. */
enum { INNER_O_THRESHOLD = 256, INNER_O_COST, INNER_O_PARTS, INNER_O_JOBS, INNER_O_CACHE,
       INNER_O_LAUNCHER, INNER_O_MIN_COST, INNER_O_SPLIT_ARG, INNER_O_SPLIT_TOOL,
       INNER_O_LLVM_BIN, INNER_O_NINJA, INNER_O_DIR, INNER_O_VERBOSE, INNER_O_EXECUTOR,
       INNER_O_SLURM_ARG, INNER_O_SLURM_TRIES, INNER_O_SLURM_WAIT, INNER_O_RELAY, INNER_O_RELAY_MODE,
       INNER_O_NO_TYPE_UNITS, INNER_O_BUSY, INNER_O_VERSION, INNER_O_MERGE_DWO, INNER_O_END };
#define INNER_LONGOPTS                                                       \
	{"threshold", required_argument, 0, INNER_O_THRESHOLD},              \
	{"cost-threshold", required_argument, 0, INNER_O_COST},              \
	{"relay-cost", required_argument, 0, INNER_O_RELAY},                 \
	{"relay", required_argument, 0, INNER_O_RELAY_MODE},                 \
	{"no-type-units", no_argument, 0, INNER_O_NO_TYPE_UNITS},            \
	{"merge-dwo", no_argument, 0, INNER_O_MERGE_DWO},                    \
	{"busy", required_argument, 0, INNER_O_BUSY},                        \
	{"partitions", required_argument, 0, INNER_O_PARTS},                 \
	{"jobs", required_argument, 0, INNER_O_JOBS},                        \
	{"cache", required_argument, 0, INNER_O_CACHE},                      \
	{"launcher", required_argument, 0, INNER_O_LAUNCHER},                \
	{"min-cost", required_argument, 0, INNER_O_MIN_COST},                \
	{"split-arg", required_argument, 0, INNER_O_SPLIT_ARG},              \
	{"split-tool", required_argument, 0, INNER_O_SPLIT_TOOL},            \
	{"llvm-bin", required_argument, 0, INNER_O_LLVM_BIN},                \
	{"ninja", required_argument, 0, INNER_O_NINJA},                      \
	{"dir", required_argument, 0, INNER_O_DIR},                          \
	{"verbose", no_argument, 0, INNER_O_VERBOSE},                        \
	{"executor", required_argument, 0, INNER_O_EXECUTOR},                \
	{"slurm-arg", required_argument, 0, INNER_O_SLURM_ARG},              \
	{"slurm-tries", required_argument, 0, INNER_O_SLURM_TRIES},          \
	{"slurm-wait", required_argument, 0, INNER_O_SLURM_WAIT},            \
	{"version", no_argument, 0, INNER_O_VERSION}

/* The options of a launcher (mtpc-link, mtpc-compile): the shared ones,
 * --quiet, and the command it runs, the words after its options. */
struct inner_launcher_opts {
	struct inner_opts in;
	int quiet;   /* --quiet: no progress lines */
	char **cmd;  /* the command (argv's own words) */
	int ncmd;
};

/* The defaults: by cost at GRAPH_DEFAULT_COST_THRESHOLD, cores, no lists. */
void inner_opts_init(struct inner_opts *o);
/* Apply the shared option c (an INNER_O_ value) with its argument. Returns
 * 0, -1 after one error message (a bad number), or 1 if c is not one. */
int inner_opt(struct inner_opts *o, int c, const char *arg);
void inner_opts_free(struct inner_opts *o);
/* One step of a front end's getopt_long loop over longopts (INNER_LONGOPTS
 * and its own options; opterr is turned off): -h/--help prints usage and
 * exits 0; a missing value or an unknown option is reported; a shared
 * option is applied (inner_opt) unless it is in refused (0-terminated
 * INNER_O_ codes, or NULL), which is an error naming tool. Returns the
 * code of an option of the front end's own (its value in optarg), -1 at
 * the end of the options, or -2 after one error message. */
int inner_getopt(struct inner_opts *o, int argc, char **argv, const char *shortopts,
		 const struct option *longopts, const int *refused, const char *tool,
		 const char *const *usage);
/* The MTPC_* environment variables into o (mtpc-distribute, whose options
 * lld passes, and mtpc-compile, which ccache runs as CCACHE_PREFIX with no
 * options): MTPC_SPLIT_THRESHOLD, MTPC_SPLIT_COST, MTPC_RELAY_COST,
 * MTPC_RELAY, MTPC_BUSY, MTPC_TYPE_UNITS, MTPC_MAX_PARTITIONS, MTPC_JOBS, MTPC_CACHE,
 * MTPC_LAUNCHER, MTPC_SPLIT_ARGS, MTPC_EXECUTOR, MTPC_SLURM_ARGS,
 * MTPC_SLURM_TRIES, MTPC_SLURM_WAIT; options given after override them.
 * Returns 0, or -1 after one error message naming the variable. */
int inner_opts_from_env(struct inner_opts *o);
/* A launcher's command line into o (inner_getopt's rules, refused as
 * there), after the environment's values when env (inner_opts_from_env).
 * The options stop at the first word that is not one; with dashdash that
 * must be "--" (mtpc-link, whose link command may start with anything),
 * else "--" is optional. what names the command in errors ("link
 * command"). Returns 0, or -1 after one error message (free o->in either
 * way). */
int inner_parse_launcher(struct inner_launcher_opts *o, int argc, char **argv, const int *refused, int dashdash,
			 int env, const char *tool, const char *what, const char *const *usage);
/* The fields of gc that come from the options alone (the cache path, lists,
 * thresholds, partitions and jobs; lists are shared, not copied). */
void inner_conf(struct graph_conf *gc, const struct inner_opts *o);

/* Parse "auto", "always" or "never" into *mode (GRAPH_RELAY_*). Returns 0,
 * or -1 after an error message naming what (an option or variable). */
int inner_parse_relay(const char *what, const char *arg, int *mode);

/* Parse "auto" or "ignore" into *mode (GRAPH_BUSY_*). Returns 0, or -1
 * after an error message naming what (an option or variable). */
int inner_parse_busy(const char *what, const char *arg, int *mode);

/* The option text of --busy, for every --help text (env: ", MTPC_BUSY" or ""). */
#define INNER_BUSY_HELP(env)                                                                  \
	"  --busy MODE         auto (default): a split must also pay beside the\n"            \
	"                      work other MTPC links and compiles on this machine\n"           \
	"                      announced (their predicted remaining seconds) and,\n"         \
	"                      at a link, the other cores the outer build kept busy\n"       \
	"                      while it ran last time (its .ninja_log): one\n"               \
	"                      that would only share busy cores is not made, so the\n"        \
	"                      object depends on what else ran; ignore: decide by\n"           \
	"                      this command's inputs alone (reproducible objects)" env "\n"

/* The option texts of relaying, for both --help texts (env: the variables'
 * names, or "" for mtpc-link). */
#define INNER_RELAY_HELP(cost_env, mode_env)                                                  \
	"  --relay-cost N      modules not split that cost at least N may be\n"               \
	"                      relayed: compiled as one partition behind an import\n"          \
	"                      step, so that an edit of a module they import from\n"           \
	"                      recompiles them only if the code they import changed\n"         \
	"                      (" cost_env "default: 1/8 of the split threshold; none\n"       \
	"                      with --threshold)\n"                                             \
	"  --relay MODE        auto (default): relay such a module only once the\n"          \
	"                      plan cache saw other modules' changes force at least\n"         \
	"                      half of its last rebuilds (and two), since a relay\n"          \
	"                      costs an import step and saves nothing on a full\n"            \
	"                      build; always: every such module; never. With auto\n"        \
	"                      and always, a module not split for speed that costs\n"       \
	"                      at least 1/4 of the threshold, and whose own edits\n"        \
	"                      caused two of its last rebuilds and half, is split\n"       \
	"                      for its edits: an edit then recompiles only the\n"           \
	"                      partitions it changed (never: neither)" mode_env "\n"

/* The option texts of the executor, for both --help texts. */
#define INNER_EXECUTOR_HELP                                                                   \
	"  --executor local|slurm  where backends and partitions compile: here\n"              \
	"                      (default) or as job steps of one Slurm allocation\n"             \
	"                      per link (docs/distributed.md)\n"                                \
	"  --slurm-arg WORD    extra salloc word (partition, account, time limit,\n"           \
	"                      -N/-n to size it); repeat for more words\n"                      \
	"  --slurm-tries N     tries of a compile on the cluster before it runs\n"             \
	"                      here (default 3)\n"                                              \
	"  --slurm-wait S      seconds to wait for the allocation before building\n"           \
	"                      here (default 60)\n"

/* Default partitions and planned parallelism with the Slurm executor (the
 * allocation's size varies between links; the plan must not). */
#define INNER_SLURM_PLAN_JOBS 16

/* -j of the inner build: the allocation's CPUs when the link has one,
 * else --jobs, else the cores here. */
int inner_run_jobs(const struct inner_opts *o, const struct slurm *s);

/* Whether the inner build that ninja_cmd (a NULL-terminated argv: ninja
 * and its -C or -f words) runs has nothing to do, by a dry run (ninja -n).
 * With the Slurm executor, an up-to-date link then takes no allocation:
 * salloc costs 0.2 s on an idle cluster and can wait in a busy one's queue.
 * Unsure (the dry run fails): 0. */
int inner_up_to_date(char *const *ninja_cmd);

/* How a front end runs its inner build (inner_run). */
struct inner_build {
	const char *dir;      /* the inner directory */
	const char *manifest; /* its build.ninja as ninja -f names it (relative to
	                       * the current directory), or NULL: ninja runs in dir */
	const char *name;     /* progress lines read "[<name> i/n] <what>" */
	int plan_jobs;        /* the -j the graph was planned for (graph_conf.jobs):
	                       * what a Slurm allocation is asked for */
	int quiet;            /* no progress lines (ninja --quiet) */
	int keep_going;       /* -k 0: every edge that can be built is */
	struct buf *out;      /* if non-NULL: ninja's stdout captured here */
	const struct graph *graph; /* if non-NULL: the build's modules, and a trace
	                            * of the build is written (trace.h) */
	const char *pre_kind, *pre_key; /* the front end's own step before the
	                            * build, for the trace (mtpc-compile's
	                            * "frontend"; NULL: none), its module's key */
	double pre_start, pre_end; /* and when it ran (mtpc_now()) */
};

/* Run the inner build with the front end's options: the Slurm allocation
 * taken and cancelled around it (an up-to-date build takes none), the make
 * jobserver's token shared with its steps (jobs.h: one step at a time uses
 * it, <dir>/jobs.implicit), -j from inner_run_jobs. Progress lines: when our
 * stdout is not a terminal (a link or compile run by Ninja, which shows an
 * edge's output only when it ends) but there is one, straight to it as they
 * come, each on a line of its own above the outer build's status line, and
 * only the rest (compiler messages) to stdout. After Ctrl-C it raises the
 * signal again once the allocation is gone. With b->graph, the build's trace
 * goes to <dir>/trace.json (each module's reason from its why), named in
 * the plan cache's directory as the last one. Returns ninja's exit status. */
int inner_run(const struct inner_opts *o, const struct inner_build *b);

/* Online cores (at least 1): the default of --jobs and --partitions. */
int inner_cores(void);

/* mtpc-split next to the running tool (installed layout), else in the build
 * tree, else "mtpc-split" on PATH; heap string. self: the tool's path. */
char *inner_find_split_tool(const char *self);

/* The pass plugin mtpc-fold.so beside split_tool (common/fold_names.h), or
 * NULL when it is not there (the partitions then keep every copy of a
 * carried static, as without it); heap string. */
char *inner_find_fold_plugin(const char *split_tool);

/* The directory of the real driver binary: /usr/bin/clang-19 resolves to
 * /usr/lib/llvm-19/bin, where ld.lld, llvm-objcopy and llvm-dwp live too
 * (else the bin directory of the LLVM MTPC was built against); heap string. */
char *inner_find_llvm_bin(const char *driver);

/* The plan cache (cache: its path or NULL for the default), opened once per
 * link or compile (what: "link", "compile") for the module history.
 * Unusable: NULL, one warning and $MTPC_CACHE_QUIET set for the inner
 * build, whose steps would otherwise repeat the warning once each. */
mtpc_cache *inner_open_cache(const char *cache, const char *what);

/* graph_history_fn over an open plan cache. */
void inner_cache_history(void *ctx, const char *module_id, struct module_history *h);

/* Print "<prog>: <output>: M modules, S split (<module>: N partitions, ...)
 * [, U unused][, K native objects][, A native archives], T s; <reasons>"
 * on f. S counts the split modules the link uses (a fallback among them is
 * listed as such), U the archive members it does not pull in; the reasons
 * say which rule chose and name the costs of the modules near it. */
void inner_summary(FILE *f, const struct graph *g, const struct graph_conf *gc, const char *output,
		   double secs);

#endif
