/* main.c: mtpc-link, the link launcher of MTPC.
 *
 * CMake runs "mtpc-link [options] -- <link command>" instead of the link
 * command of an mtpc_enable()d target. mtpc-link parses the command
 * (linkcmd.c), writes the inner Ninja graph <output>.mtpc/build.ninja only if
 * it changed (graph.c) and runs Ninja on it, which does the thin link, the
 * backends, the splits, partition compiles, merges and the final link
 * (steps.c). Whenever the MTPC path cannot be taken (no bitcode inputs, an
 * unparsable command, a path Ninja cannot express) the original command runs
 * unchanged, so an enabled target never breaks a build that worked before. */
#define _POSIX_C_SOURCE 200809L
#include "graph.h"
#include "inner.h"
#include "linkcmd.h"
#include "mtpc_cache.h"
#include "proc.h"
#include "steps.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
	"usage: mtpc-link [options] -- <link command>\n"
	"\n"
	"Runs a ThinLTO link as an inner Ninja build in <output>.mtpc/: thin link,\n"
	"then per module either the plain ThinLTO backend or, for modules worth\n"
	"splitting, mtpc-split + one compile per partition + merge, then the\n"
	"original link command on the native objects. Used by CMake's\n"
	"mtpc_enable() as <LANG>_LINKER_LAUNCHER.\n"
	"\n"
	"Which modules are split: by default those whose estimated backend cost\n"
	"is at least --cost-threshold instructions. The estimate is the module's\n"
	"ThinLTO summary (instruction count); once the plan cache holds measured\n"
	"backend times of at least two of the link's modules, a module whose\n"
	"measured time disagrees with its estimate by more than a quarter is\n"
	"judged by the measurement instead (converted to instructions at the\n"
	"rate of the link's measured modules). --threshold chooses by bitcode\n"
	"size instead.\n"
	"\n"
	"options:\n"
	"  --cost-threshold N  split modules costing at least N instructions\n"
	"                      (default 50000, about 3 s of backend on one core)\n"
	"  --threshold BYTES   choose by size instead: split modules with more\n"
	"                      bitcode bytes than this (0 splits every module)\n"
	"  --partitions N      at most N partitions (slots) per split module\n"
	"                      (default: number of cores; 1 disables splitting)\n"
	"  --jobs N            parallelism of the inner build (default/0: cores)\n"
	"  --cache PATH        plan cache database for mtpc-split, slot timings and\n"
	"                      module history (default: $MTPC_CACHE, else\n"
	"                      $XDG_CACHE_HOME/mtpc/plans.sqlite, else\n"
	"                      ~/.cache/mtpc/plans.sqlite; `mtpc-cache path`)\n"
	"  --launcher WORD     prefix backend and partition compiles with WORD;\n"
	"                      repeat for a multi-word prefix (remote execution)\n"
	"  --min-cost C        passed to mtpc-split --min-cost\n"
	"  --split-arg WORD    pass WORD to mtpc-split (repeat for several, e.g.\n"
	"                      --split-arg --copy-budget --split-arg 0.05)\n"
	"  --split-tool PATH   mtpc-split to run (default: next to mtpc-link)\n"
	"  --llvm-bin DIR      directory of ld.lld, llvm-objcopy and llvm-dwp\n"
	"                      (default: the directory of the link driver, after\n"
	"                      symlinks)\n"
	"  --ninja PATH        ninja to run (default: ninja on PATH)\n"
	"  --dir DIR           inner build directory (default: <output>.mtpc)\n"
	"  --verbose           show the inner build's commands too\n"
	"  --quiet             hide the inner build's [i/n] progress lines\n"
	"  --help              this text\n"
	"\n"
	"The plan cache is checked once per link: if it is unusable, one warning\n"
	"and the link goes on without it (its steps stay silent about it).\n"
	"\n"
	"Debug info: -g needs nothing special. With -gsplit-dwarf on the link\n"
	"command (which makes lld's in-process ThinLTO write .dwo files), every\n"
	"backend and partition compile writes its .dwo next to its object in the\n"
	"inner directory (the skeleton CU names it by absolute path), and llvm-dwp\n"
	"(from --llvm-bin) packs every .dwo the output names into <output>.dwp,\n"
	"next to the output, where gdb looks for it.\n"
	"\n"
	"Each link prints one line: 'mtpc-link: <output>: M modules, S split\n"
	"(<module>: N partitions, ...)[, U unused][, K native objects]\n"
	"[, A native archives], T s; <rule>: <module> <cost>...[; not split:\n"
	"<module> <cost>...]': the rule that chose, the cost of each split module\n"
	"and of the largest modules left unsplit ('measured' where the history\n"
	"decided). unused: archive members the link does not pull in.\n"
	"Native objects and archives without bitcode pass through unsplit: to split\n"
	"a large source among them, compile it with -flto=thin (mtpc_enable() its\n"
	"static or object library).\n"
	"\n"
	"Exit status: the link's. Bad options: 2, nothing run. The link command\n"
	"must be a clang/clang++ driver invocation with -o; inputs may be bitcode\n"
	"objects, static archives of bitcode (extracted and passed between\n"
	"--start-lib/--end-lib), native objects and libraries, @rsp files. Any\n"
	"link MTPC cannot take runs unchanged.\n";

struct opts {
	long long threshold, cost_threshold, min_cost;
	int partitions, jobs, verbose, quiet;
	const char *cache, *split_tool, *llvm_bin, *ninja, *dir;
	struct strv launcher;
	struct strv split_args;
	char **cmd;
	int ncmd;
};

static void opts_free(struct opts *o)
{
	strv_free(&o->launcher);
	strv_free(&o->split_args);
}

/* Parse the options before "--" (getopt_long in POSIX mode: it stops at
 * "--", and never looks at the link command after it). Returns 0, or -1
 * after one error message. */
static int parse_opts(struct opts *o, int argc, char **argv)
{
	enum { O_THRESHOLD = 256, O_COST, O_PARTS, O_JOBS, O_CACHE, O_LAUNCHER, O_MIN_COST,
	       O_SPLIT_ARG, O_SPLIT_TOOL, O_LLVM_BIN, O_NINJA, O_DIR, O_VERBOSE, O_QUIET };
	static const struct option longopts[] = {
		{"threshold", required_argument, 0, O_THRESHOLD},
		{"cost-threshold", required_argument, 0, O_COST},
		{"partitions", required_argument, 0, O_PARTS},
		{"jobs", required_argument, 0, O_JOBS},
		{"cache", required_argument, 0, O_CACHE},
		{"launcher", required_argument, 0, O_LAUNCHER},
		{"min-cost", required_argument, 0, O_MIN_COST},
		{"split-arg", required_argument, 0, O_SPLIT_ARG},
		{"split-tool", required_argument, 0, O_SPLIT_TOOL},
		{"llvm-bin", required_argument, 0, O_LLVM_BIN},
		{"ninja", required_argument, 0, O_NINJA},
		{"dir", required_argument, 0, O_DIR},
		{"verbose", no_argument, 0, O_VERBOSE},
		{"quiet", no_argument, 0, O_QUIET},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	memset(o, 0, sizeof *o);
	o->threshold = -1;
	o->cost_threshold = GRAPH_DEFAULT_COST_THRESHOLD;
	long long v;
	int c, bad = 0;
	opterr = 0;
	while (!bad && (c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(usage, stdout); exit(0);
		case O_THRESHOLD: bad = mtpc_parse_ll("--threshold", optarg, 0, LLONG_MAX, &o->threshold); break;
		case O_COST: bad = mtpc_parse_ll("--cost-threshold", optarg, 0, LLONG_MAX, &o->cost_threshold); break;
		case O_PARTS:
			bad = mtpc_parse_ll("--partitions", optarg, 0, 4096, &v);
			o->partitions = (int)v;
			break;
		case O_JOBS:
			bad = mtpc_parse_ll("--jobs", optarg, 0, 4096, &v);
			o->jobs = (int)v;
			break;
		case O_MIN_COST: bad = *optarg && mtpc_parse_ll("--min-cost", optarg, 0, 1LL << 40, &o->min_cost); break;
		case O_CACHE: o->cache = *optarg ? optarg : NULL; break;
		case O_LAUNCHER:
			if (*optarg)
				strv_add(&o->launcher, optarg);
			break;
		case O_SPLIT_ARG: strv_add(&o->split_args, optarg); break;
		case O_SPLIT_TOOL: o->split_tool = optarg; break;
		case O_LLVM_BIN: o->llvm_bin = optarg; break;
		case O_NINJA: o->ninja = optarg; break;
		case O_DIR: o->dir = optarg; break;
		case O_VERBOSE: o->verbose = 1; break;
		case O_QUIET: o->quiet = 1; break;
		case ':': mtpc_error("%s: missing value (see --help)", argv[optind - 1]); return -1;
		default: mtpc_error("unknown option %s (see --help)", argv[optind - 1]); return -1;
		}
	}
	if (bad)
		return -1;
	if (optind < 1 || optind > argc || strcmp(argv[optind - 1], "--") != 0) {
		mtpc_error("missing \"--\" before the link command (see --help)");
		return -1;
	}
	o->cmd = argv + optind;
	o->ncmd = argc - optind;
	if (o->ncmd < 1) {
		mtpc_error("no link command after --");
		return -1;
	}
	return 0;
}

static int run_original(const struct opts *o)
{
	return proc_run(o->cmd, NULL, NULL, NULL);
}

/* Write the inner build of this link and run it. Returns the exit status,
 * or -1 when the link cannot go through MTPC (after one warning). */
static int run_inner(const struct opts *o, const struct linkcmd *lc, const char *cwd,
		     const char *argv0, double t0)
{
	const char *out = linkcmd_output(lc);
	char *self = proc_self_path();
	char *split = o->split_tool ? xstrdup(o->split_tool) : inner_find_split_tool(self ? self : argv0);
	char *llvm_bin = o->llvm_bin ? xstrdup(o->llvm_bin) : inner_find_llvm_bin(lc->args.v[0]);
	char *inner;
	if (o->dir)
		inner = o->dir[0] == '/' ? xstrdup(o->dir) : xasprintf("%s/%s", cwd, o->dir);
	else
		inner = out[0] == '/' ? xasprintf("%s.mtpc", out) : xasprintf("%s/%s.mtpc", cwd, out);
	char *min_cost = o->min_cost ? xasprintf("%lld", o->min_cost) : NULL;
	mtpc_cache *cache = inner_open_cache(o->cache);
	int jobs = o->jobs > 0 ? o->jobs : inner_cores();
	struct graph_conf gc = {
		.self = self ? self : argv0,
		.split_tool = split,
		.llvm_bin = llvm_bin,
		.cache = o->cache,
		.min_cost = min_cost,
		.launcher = o->launcher,
		.split_args = o->split_args,
		.threshold = o->threshold,
		.cost_threshold = o->cost_threshold,
		.history = cache ? inner_cache_history : NULL,
		.history_ctx = cache,
		.kmax = o->partitions > 0 ? o->partitions : inner_cores(),
		.jobs = jobs,
		.inner = inner,
		.outer_cwd = cwd,
	};
	struct graph g = {0};
	int status = -1;
	if (mtpc_mkdir_p(inner) < 0)
		mtpc_error("cannot create %s: %s", inner, strerror(errno));
	else if (graph_build(&gc, lc, &g) == 0 && graph_write(&gc, &g) == 0)
		status = 0;
	mtpc_cache_close(cache);
	if (status == 0) {
		char jobs_s[32];
		snprintf(jobs_s, sizeof jobs_s, "%d", jobs);
		char *nargv[] = {(char *)(o->ninja ? o->ninja : "ninja"), "-C", inner, "-j", jobs_s,
				 o->verbose ? "-v" : o->quiet ? "--quiet" : NULL, NULL};
		/* Progress lines name the target: the outer build prints them under
		 * the link edge, between other targets' output. */
		if (!o->quiet) {
			char *status_fmt = xasprintf("[%s %%f/%%t] ", mtpc_base_name(out));
			setenv("NINJA_STATUS", status_fmt, 1);
			free(status_fmt);
		}
		status = proc_run(nargv, NULL, NULL, NULL);
		if (status) {
			mtpc_error("inner build %s/build.ninja failed", inner);
		} else {
			/* The outer Ninja sees the link edge ran: give the output a new
			 * mtime even when the inner build found it up to date. */
			utimensat(AT_FDCWD, g.output, NULL, 0);
			inner_summary(stdout, &g, &gc, g.output, mtpc_now() - t0);
		}
	} else {
		mtpc_warn("cannot build %s through MTPC; running the link as is", out);
	}
	graph_free(&g);
	free(self);
	free(split);
	free(llvm_bin);
	free(inner);
	free(min_cost);
	return status;
}

int main(int argc, char **argv)
{
	mtpc_set_progname("mtpc-link");
	if (argc > 1 && steps_is_step(argv[1]))
		return steps_main(argc, argv);
	double t0 = mtpc_now();
	struct opts o;
	if (parse_opts(&o, argc, argv) < 0) {
		opts_free(&o);
		return 2;
	}
	struct linkcmd lc;
	char cwd[PATH_MAX];
	int status = -1;
	if (getcwd(cwd, sizeof cwd) && linkcmd_parse(&lc, o.ncmd, o.cmd) == 0) {
		int nbitcode = 0;
		for (size_t i = 0; i < lc.args.n; i++)
			nbitcode += lc.kind[i] == IN_BITCODE || lc.kind[i] == IN_ARCHIVE;
		/* Without bitcode or -o the link is an ordinary one: run it as is. */
		if (nbitcode && linkcmd_output(&lc))
			status = run_inner(&o, &lc, cwd, argv[0], t0);
		linkcmd_free(&lc);
	}
	if (status < 0) {
		/* The original command's own exit status, as if run directly. */
		status = run_original(&o);
		opts_free(&o);
		return status;
	}
	opts_free(&o);
	return status ? 1 : 0;
}
