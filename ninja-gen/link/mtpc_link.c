/* mtpc_link.c: mtpc-link, the link launcher of MTPC.
 *
 * CMake runs "mtpc-link [options] -- <link command>" instead of the link
 * command of an mtpc_enable()d target. mtpc-link parses the command
 * (linkcmd.c), writes the inner Ninja graph <output>.mtpc/build.ninja only if
 * it changed (link_graph.c, graph/) and runs Ninja on it, which does the thin link, the
 * backends, the splits, partition compiles, merges and the final link
 * (steps.c). Whenever the MTPC path cannot be taken (no bitcode inputs, an
 * unparsable command, a path Ninja cannot express) the original command runs
 * unchanged, so an enabled target never breaks a build that worked before. */
#define _POSIX_C_SOURCE 200809L
#include "inner_dir.h"
#include "link_graph.h"
#include "inner.h"
#include "jobs.h"
#include "linkcmd.h"
#include "mtpc_cache.h"
#include "proc.h"
#include "steps.h"
#include "util.h"
#include "workboard.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* In pieces: C11 compilers need not take string literals over 4095 bytes. */
static const char *const usage[] = {
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
	"rate of the link's measured modules). Such a module is split only when\n"
	"that shortens the predicted time of the link's backends on --jobs cores\n"
	"(not when the other backends keep the cores busy anyway), into the\n"
	"fewest partitions that do; the summary line says why not. --threshold\n"
	"chooses by bitcode size instead.\n"
	"\n"
	"options:\n"
	"  --cost-threshold N  split modules costing at least N instructions\n"
	"                      (default 100000, about 6 s of backend on one core)\n"
	INNER_RELAY_HELP("", ""),
	INNER_BUSY_HELP(""),
	"  --threshold BYTES   choose by size instead: split modules with more\n"
	"                      bitcode bytes than this (0 splits every module)\n"
	"  --no-type-units     compile partitions without -fdebug-types-section:\n"
	"                      each partition then repeats the C++ types its code\n"
	"                      uses in its own debug info (default: type units,\n"
	"                      which the final link keeps once; none when the\n"
	"                      link has --gdb-index, whose index misses them)\n"
	"  --partitions N      at most N partitions (slots) per split module\n"
	"                      (default: number of cores, 16 with --executor\n"
	"                      slurm; 1 disables splitting)\n"
	"  --jobs N            parallelism of the inner build (default/0: cores;\n"
	"                      with --executor slurm: the CPUs to ask for,\n"
	"                      default 16 or the idle ones)\n"
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
	INNER_EXECUTOR_HELP,
	"  --verbose           show the inner build's commands too\n"
	"  --quiet             hide the inner build's [i/n] progress lines\n"
	"  --help              this text\n"
	"  --version           print the version\n"
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
	"link MTPC cannot take runs unchanged.\n",
	NULL,
};

/* Parse the options before "--" (the shared ones, which mtpc-distribute
 * takes too, and --quiet); the link command is what follows "--", never
 * looked at here. Returns 0, or -1 after one error message. */
static int parse_opts(struct inner_launcher_opts *o, int argc, char **argv)
{
	static const int refused[] = {INNER_O_MERGE_DWO, 0}; /* a compile's */
	return inner_parse_launcher(o, argc, argv, refused, 1, 0, "mtpc-link", "link command", usage);
}

static int run_original(const struct inner_launcher_opts *o)
{
	return proc_run(o->cmd, NULL, NULL, NULL);
}

/* Whether the link's own words set a ThinLTO cache (lld's, or the gold
 * plugin's spelling that clang forwards). */
static int has_thinlto_cache(const struct linkcmd *lc)
{
	for (size_t i = 0; i < lc->args.n; i++)
		if (strstr(lc->args.v[i], "thinlto-cache-dir") || strstr(lc->args.v[i], "cache_path_lto") ||
		    strstr(lc->args.v[i], "cache-dir="))
			return 1;
	return 0;
}

/* The link as plain ThinLTO does it, for a link that splits and relays
 * nothing: lld's backends in-process. The inner build would run the same
 * backends as one process each, which costs their start-up (a clang and a
 * step, about 50 ms a module) for nothing. When the link relinks an output
 * (relink, as in needs_inner_build), lld's ThinLTO cache in the inner
 * directory (unless the link has its own) keeps the next relinks
 * incremental, as the inner build's per-module edges would; an output's
 * first link runs the command exactly as given, because writing the cache
 * costs about 5% of the link's CPU (libuv's test runner, 209 modules,
 * measured pinned) that only a relink pays back. Within one token of the
 * job budget, as a link. */
static int run_plain_thinlto(const struct inner_launcher_opts *o, const struct linkcmd *lc, const char *inner,
			     int relink)
{
	struct strv cmd = {0};
	for (int i = 0; i < o->ncmd; i++)
		strv_add(&cmd, o->cmd[i]);
	int cached = relink && !has_thinlto_cache(lc);
	if (cached)
		strv_addown(&cmd, xasprintf("-Wl,--thinlto-cache-dir=%s/" INNER_THINLTO_CACHE, inner));
	struct job_token token;
	jobs_acquire(&token);
	/* The link's messages are held until it ends (as Ninja shows them). */
	struct buf err = {0};
	int st = proc_run(cmd.v, NULL, NULL, &err);
	if (cached && st != 0 && err.s &&
	    (st >= 128 || strstr(err.s, "due to signal") || strstr(err.s, "PLEASE submit a bug report"))) {
		/* lld 19 and 22 crash computing the cache key of some modules
		 * (an ifunc whose resolver is external) that they link without
		 * a cache. */
		mtpc_warn("linking %s without lld's ThinLTO cache (the link with it crashed the linker)",
			  linkcmd_output(lc));
		st = proc_run(o->cmd, NULL, NULL, NULL);
	} else if (err.len) {
		fwrite(err.s, 1, err.len, stderr);
	}
	buf_free(&err);
	jobs_release(&token);
	strv_free(&cmd);
	return st;
}

/* Whether the inner build would do anything plain ThinLTO does not: split
 * or relay a module, record the history that could make it do so (struct
 * module's watch) when this link relinks an output (relink: its inner
 * directory is there from an earlier link; a full build's first links thus
 * pay nothing for history, googletest's 45 about 5% of their work), pack
 * the .dwo files of -gsplit-dwarf into a .dwp, or run the backends on a
 * Slurm cluster instead of this machine. */
static int needs_inner_build(const struct inner_launcher_opts *o, const struct graph *g, int relink)
{
	if (g->dwp || o->in.slurm.on)
		return 1;
	for (size_t i = 0; i < g->nmods; i++)
		if (g->mods[i].split || g->mods[i].relay || (relink && g->mods[i].watch))
			return 1;
	return 0;
}

/* Write the inner build of this link and run it. Returns the exit status,
 * or -1 when the link cannot go through MTPC (after one warning). */
static int run_inner(const struct inner_launcher_opts *o, const struct linkcmd *lc, const char *cwd,
		     const char *argv0, double t0)
{
	const char *out = linkcmd_output(lc);
	char *self = proc_self_path();
	char *split = o->in.split_tool ? xstrdup(o->in.split_tool) : inner_find_split_tool(self ? self : argv0);
	char *llvm_bin = o->in.llvm_bin ? xstrdup(o->in.llvm_bin) : inner_find_llvm_bin(lc->args.v[0]);
	char *inner;
	if (o->in.dir)
		inner = o->in.dir[0] == '/' ? xstrdup(o->in.dir) : xasprintf("%s/%s", cwd, o->in.dir);
	else
		inner = out[0] == '/' ? xasprintf("%s.mtpc", out) : xasprintf("%s/%s.mtpc", cwd, out);
	char *min_cost = o->in.min_cost ? xasprintf("%lld", o->in.min_cost) : NULL;
	mtpc_cache *cache = inner_open_cache(o->in.cache, "link");
	struct graph_conf gc = {
		.self = self ? self : argv0,
		.split_tool = split,
		.llvm_bin = llvm_bin,
		.min_cost = min_cost,
		.history = cache ? inner_cache_history : NULL,
		.history_ctx = cache,
		.inner = inner,
		.outer_cwd = cwd,
	};
	inner_conf(&gc, &o->in);
	struct link_graph lg = {0};
	struct graph *g = &lg.g;
	int status = -1;
	int relink = access(inner, F_OK) == 0;
	if (mtpc_mkdir_p(inner) < 0)
		mtpc_error("cannot create %s: %s", inner, strerror(errno));
	else if (link_graph_build(&gc, lc, &lg) == 0 && (!needs_inner_build(o, g, relink) || link_graph_write(&gc, &lg) == 0))
		status = 0;
	mtpc_cache_close(cache);
	if (status == 0 && !needs_inner_build(o, g, relink)) {
		/* lld's backends are work the other links' and compiles' choices
		 * must see as much as an inner build's (workboard.h). */
		struct work_notice notice = WORK_NOTICE_INIT;
		if (gc.busy == GRAPH_BUSY_AUTO && g->work_secs > 0)
			workboard_post(&notice, g->work_secs, g->span_secs, g->task_secs);
		status = run_plain_thinlto(o, lc, inner, relink);
		workboard_withdraw(&notice);
		if (status == 0)
			inner_summary(stdout, g, &gc, g->output, mtpc_now() - t0);
		status = status ? 1 : 0;
	} else if (status == 0) {
		struct inner_build b = {.dir = inner, .name = mtpc_base_name(out), .plan_jobs = gc.jobs,
					.quiet = o->quiet, .graph = g};
		status = inner_run(&o->in, &b);
		char *crashed = xasprintf("%s/" INNER_THINLINK_CRASHED, inner);
		if (status && access(crashed, F_OK) == 0) {
			mtpc_warn("linking %s without MTPC (its thin link crashed the linker)", out);
			status = -1;
		} else if (status) {
			mtpc_error("inner build %s/build.ninja failed", inner);
		} else {
			/* The outer Ninja sees the link edge ran: give the output a new
			 * mtime even when the inner build found it up to date. */
			utimensat(AT_FDCWD, g->output, NULL, 0);
			inner_summary(stdout, g, &gc, g->output, mtpc_now() - t0);
		}
		free(crashed);
	} else {
		mtpc_warn("cannot build %s through MTPC; running the link as is", out);
	}
	link_graph_free(&lg);
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
	struct inner_launcher_opts o;
	if (parse_opts(&o, argc, argv) < 0) {
		inner_opts_free(&o.in);
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
		inner_opts_free(&o.in);
		return status;
	}
	inner_opts_free(&o.in);
	return status ? 1 : 0;
}
