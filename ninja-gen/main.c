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
#include "linkcmd.h"
#include "proc.h"
#include "steps.h"
#include "util.h"

#include <fcntl.h>
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
	"then per module either the plain ThinLTO backend or (for modules larger\n"
	"than the threshold) mtpc-split + one compile per partition + merge, then\n"
	"the original link command on the native objects. Used by CMake's\n"
	"mtpc_enable() as <LANG>_LINKER_LAUNCHER.\n"
	"\n"
	"options:\n"
	"  --threshold BYTES   split modules with more bitcode bytes than this\n"
	"                      (default 1048576; 0 splits every module)\n"
	"  --partitions N      at most N partitions (slots) per split module\n"
	"                      (default: number of cores; 1 disables splitting)\n"
	"  --jobs N            parallelism of the inner build (default/0: cores)\n"
	"  --cache PATH        plan cache database for mtpc-split and slot timings\n"
	"                      (default: mtpc_cache's default, $MTPC_CACHE or\n"
	"                      ~/.cache/mtpc/plans.sqlite)\n"
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
	"Debug info: -g needs nothing special. With -gsplit-dwarf on the link\n"
	"command (which makes lld's in-process ThinLTO write .dwo files), every\n"
	"backend and partition compile writes its .dwo next to its object in the\n"
	"inner directory (the skeleton CU names it by absolute path), and llvm-dwp\n"
	"(from --llvm-bin) packs every .dwo the output names into <output>.dwp,\n"
	"next to the output, where gdb looks for it.\n"
	"\n"
	"Each link prints one line: 'mtpc-link: <output>: M modules, S split\n"
	"(<module>: N partitions, ...)[, U unused][, K native objects]\n"
	"[, A native archives], T s'; unused: archive members the link does not\n"
	"pull in (nothing to split).\n"
	"Native objects and archives without bitcode pass through unsplit: to split\n"
	"a large source among them, compile it with -flto=thin (mtpc_enable() its\n"
	"static or object library).\n"
	"\n"
	"The link command must be a clang/clang++ driver invocation with -o; inputs\n"
	"may be bitcode objects, static archives of bitcode (extracted and passed\n"
	"between --start-lib/--end-lib), native objects and libraries, @rsp files.\n";

struct opts {
	long long threshold;
	int partitions, jobs, verbose, quiet;
	const char *cache, *min_cost, *split_tool, *llvm_bin, *ninja, *dir;
	struct strv launcher;
	struct strv split_args;
	char **cmd;
	int ncmd;
};

static int cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

static void opts_free(struct opts *o)
{
	strv_free(&o->launcher);
	strv_free(&o->split_args);
}

static int parse_opts(struct opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof *o);
	o->threshold = 1048576;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			o->cmd = argv + i + 1;
			o->ncmd = argc - i - 1;
			return 0;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			exit(0);
		}
		if (!strcmp(a, "--verbose")) {
			o->verbose = 1;
			continue;
		}
		if (!strcmp(a, "--quiet")) {
			o->quiet = 1;
			continue;
		}
		if (i + 1 >= argc) {
			mtpc_error("%s: missing value (see --help)", a);
			return -1;
		}
		const char *v = argv[++i];
		if (!strcmp(a, "--threshold"))
			o->threshold = atoll(v);
		else if (!strcmp(a, "--partitions"))
			o->partitions = atoi(v);
		else if (!strcmp(a, "--jobs"))
			o->jobs = atoi(v);
		else if (!strcmp(a, "--cache"))
			o->cache = *v ? v : NULL;
		else if (!strcmp(a, "--launcher")) {
			if (*v)
				strv_add(&o->launcher, v);
		} else if (!strcmp(a, "--split-arg"))
			strv_add(&o->split_args, v);
		else if (!strcmp(a, "--min-cost"))
			o->min_cost = *v ? v : NULL;
		else if (!strcmp(a, "--split-tool"))
			o->split_tool = v;
		else if (!strcmp(a, "--llvm-bin"))
			o->llvm_bin = v;
		else if (!strcmp(a, "--ninja"))
			o->ninja = v;
		else if (!strcmp(a, "--dir"))
			o->dir = v;
		else {
			mtpc_error("unknown option %s (see --help)", a);
			return -1;
		}
	}
	mtpc_error("missing \"--\" before the link command (see --help)");
	return -1;
}

static char *dir_of(const char *path)
{
	char *d = xstrdup(path);
	char *slash = strrchr(d, '/');
	if (slash)
		*slash = 0;
	return d;
}

static int exists(const char *p)
{
	return access(p, X_OK) == 0;
}

/* mtpc-split next to mtpc-link (installed layout), else in the build tree. */
static char *find_split_tool(const char *self)
{
	char *d = dir_of(self);
	char *p = xasprintf("%s/mtpc-split", d);
	if (!exists(p)) {
		free(p);
		p = xasprintf("%s/../splitter/mtpc-split", d);
		if (!exists(p)) {
			free(p);
			p = xstrdup("mtpc-split");
		}
	}
	free(d);
	return p;
}

/* The directory of the real driver binary: /usr/bin/clang-19 resolves to
 * /usr/lib/llvm-19/bin, where ld.lld and llvm-objcopy live too (else the
 * bin directory of the LLVM MTPC was built against). */
static char *find_llvm_bin(const char *driver)
{
	char *w = proc_which(driver), *real = w ? realpath(w, NULL) : NULL;
	free(w);
	char *d = NULL;
	if (real) {
		d = dir_of(real);
		char *lld = xasprintf("%s/ld.lld", d);
		if (!exists(lld)) {
			free(d);
			d = NULL;
		}
		free(lld);
	}
	free(real);
	return d ? d : xstrdup(MTPC_LLVM_BIN_DIR);
}

static int run_original(const struct opts *o)
{
	return proc_run(o->cmd, NULL, NULL, NULL);
}

/* "mtpc-link: <output>: M modules, S split (<module>: N partitions, ...)
 * [, U unused][, K native objects][, A native archives], T s": S counts the
 * modules above the threshold that the link uses (a fallback among them is
 * listed as such), U the archive members it does not pull in. */
static void summary(const struct graph *g, const char *inner, double secs)
{
	struct buf list = {0}, b = {0};
	int nsplit = 0, nunused = 0;
	const char *sep = " (";
	for (size_t i = 0; i < g->nmods; i++) {
		if (!g->mods[i].split)
			continue;
		char *np = xasprintf("%s/mod/%s/split.n", inner, g->mods[i].key), *text;
		size_t len;
		int n = -1, unused = 0;
		if (mtpc_read_file(np, &text, &len) == 0) {
			n = atoi(text);
			unused = strstr(text, "unused") != NULL;
			free(text);
		}
		free(np);
		if (unused) {
			nunused++;
			continue;
		}
		nsplit++;
		const char *name = strrchr(g->mods[i].path, '/');
		name = name ? name + 1 : g->mods[i].path;
		if (n > 0)
			buf_printf(&list, "%s%s: %d partition%s", sep, name, n, n == 1 ? "" : "s");
		else
			buf_printf(&list, "%s%s: unsplit (fallback)", sep, name);
		sep = ", ";
	}
	const char *base = strrchr(g->output, '/');
	buf_printf(&b, "mtpc-link: %s: %zu module%s, %d split%s%s", base ? base + 1 : g->output,
		   g->nmods, g->nmods == 1 ? "" : "s", nsplit, list.len ? list.s : "", list.len ? ")" : "");
	if (nunused)
		buf_printf(&b, ", %d unused", nunused);
	if (g->nnative_objects)
		buf_printf(&b, ", %d native object%s", g->nnative_objects, g->nnative_objects == 1 ? "" : "s");
	if (g->nnative_archives)
		buf_printf(&b, ", %d native archive%s", g->nnative_archives, g->nnative_archives == 1 ? "" : "s");
	buf_printf(&b, ", %.2f s\n", secs);
	fputs(b.s, stdout);
	fflush(stdout);
	buf_free(&list);
	buf_free(&b);
}

int main(int argc, char **argv)
{
	mtpc_set_progname("mtpc-link");
	if (argc > 1 && steps_is_step(argv[1]))
		return steps_main(argc, argv);
	double t0 = mtpc_now();
	struct opts o;
	if (parse_opts(&o, argc, argv) < 0)
		return 2;
	if (o.ncmd < 1) {
		mtpc_error("no link command after --");
		return 2;
	}
	struct linkcmd lc;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd) || linkcmd_parse(&lc, o.ncmd, o.cmd) < 0) {
		opts_free(&o);
		return run_original(&o);
	}
	int nbitcode = 0;
	for (size_t i = 0; i < lc.args.n; i++)
		nbitcode += lc.kind[i] == IN_BITCODE || lc.kind[i] == IN_ARCHIVE;
	const char *out = linkcmd_output(&lc);
	if (!nbitcode || !out) {
		/* Nothing for MTPC to do: the link is an ordinary one. */
		linkcmd_free(&lc);
		opts_free(&o);
		return run_original(&o);
	}
	char *self = proc_self_path();
	char *split = o.split_tool ? xstrdup(o.split_tool) : find_split_tool(self ? self : argv[0]);
	char *llvm_bin = o.llvm_bin ? xstrdup(o.llvm_bin) : find_llvm_bin(lc.args.v[0]);
	char *inner;
	if (o.dir)
		inner = o.dir[0] == '/' ? xstrdup(o.dir) : xasprintf("%s/%s", cwd, o.dir);
	else
		inner = out[0] == '/' ? xasprintf("%s.mtpc", out) : xasprintf("%s/%s.mtpc", cwd, out);
	struct graph_conf gc = {
		.self = self ? self : argv[0],
		.split_tool = split,
		.llvm_bin = llvm_bin,
		.cache = o.cache,
		.min_cost = o.min_cost,
		.launcher = o.launcher,
		.split_args = o.split_args,
		.threshold = o.threshold,
		.kmax = o.partitions > 0 ? o.partitions : cores(),
		.jobs = o.jobs > 0 ? o.jobs : cores(),
		.inner = inner,
		.outer_cwd = cwd,
	};
	struct graph g;
	int status;
	if (mtpc_mkdir_p(inner) < 0 || graph_build(&gc, &lc, &g) < 0 || graph_write(&gc, &g) < 0) {
		mtpc_warn("cannot build %s through MTPC; running the link as is", out);
		status = run_original(&o);
	} else {
		char jobs[32];
		snprintf(jobs, sizeof jobs, "%d", o.jobs > 0 ? o.jobs : cores());
		char *nargv[] = {(char *)(o.ninja ? o.ninja : "ninja"), "-C", inner, "-j", jobs,
				 o.verbose ? "-v" : o.quiet ? "--quiet" : NULL, NULL};
		/* Progress lines name the target: the outer build prints them under
		 * the link edge, between other targets' output. */
		if (!o.quiet) {
			const char *slash = strrchr(out, '/');
			char *status_fmt = xasprintf("[%s %%f/%%t] ", slash ? slash + 1 : out);
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
			summary(&g, inner, mtpc_now() - t0);
		}
	}
	graph_free(&g);
	linkcmd_free(&lc);
	opts_free(&o);
	free(self);
	free(split);
	free(llvm_bin);
	free(inner);
	return status ? 1 : 0;
}
