/* mtpc_distribute.c: mtpc-distribute, MTPC's DTLTO distributor.
 *
 * With clang -fthinlto-distributor=mtpc-distribute (lld >= 21), lld does the
 * thin link in-process, writes a JSON list of backend jobs and runs
 * "mtpc-distribute [options] JSON". Each job compiles one module with its
 * index shard into one object (the command is common.args + job.args).
 * mtpc-distribute turns the jobs into the same inner Ninja build mtpc-link
 * writes (graph/): a small module is one backend edge, a large one is
 * split -> slots -> merge. The inner directory persists across links
 * (<linker output>.mtpc), keyed by each module's identity, not by lld's
 * per-link file names (they carry its pid), so an unchanged module stops at
 * Ninja's restat as with mtpc-link. After the build each module's native.o
 * is delivered to the job's output atomically. */
#define _POSIX_C_SOURCE 200809L
#include "graph.h"
#include "dist_jobs.h"
#include "inner.h"
#include "ninja_write.h"
#include "proc.h"
#include "steps.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* In pieces: C11 compilers need not take string literals over 4095 bytes. */
static const char *const usage[] = {
	"usage: mtpc-distribute [options] JOBS.json\n"
	"\n"
	"A ThinLTO distributor for lld's Distributed ThinLTO (DTLTO, lld >= 21):\n"
	"  clang -flto=thin -fuse-ld=lld -fthinlto-distributor=mtpc-distribute \\\n"
	"        [-Xthinlto-distributor=OPTION]... objects... -o app\n"
	"lld does the thin link, then runs mtpc-distribute on its job list. Small\n"
	"modules are compiled as lld asked; modules worth splitting are split by\n"
	"mtpc-split, their partitions compiled in parallel and merged back into\n"
	"the one object lld expects. The inner build is a Ninja build in\n"
	"<linker output>.mtpc/, kept between links: modules that did not change\n"
	"are not compiled again, and after an edit only the partitions it touched.\n"
	"\n"
	"Options (each also from the environment, for build systems that cannot\n"
	"add linker flags per target; an option wins over its variable):\n"
	"  --cost-threshold N  split modules costing at least N instructions\n"
	"                      (MTPC_SPLIT_COST; default 100000, about 6 s of\n"
	"                      backend on one core), when that shortens the\n"
	"                      predicted time of the backends on --jobs cores\n"
	INNER_RELAY_HELP("MTPC_RELAY_COST; ", " (MTPC_RELAY)"),
	INNER_BUSY_HELP(" (MTPC_BUSY)"),
	"  --threshold BYTES   choose by size instead: split modules with more\n"
	"                      bitcode bytes than this, 0 splits every module\n"
	"                      (MTPC_SPLIT_THRESHOLD)\n"
	"  --no-type-units     compile partitions without -fdebug-types-section:\n"
	"                      each partition then repeats the C++ types its code\n"
	"                      uses in its own debug info (MTPC_TYPE_UNITS=0;\n"
	"                      default: type units, which the link keeps once)\n"
	"  --partitions N      at most N partitions per split module, 1 disables\n"
	"                      splitting (MTPC_MAX_PARTITIONS; default: cores,\n"
	"                      16 with --executor slurm)\n"
	"  --jobs N            parallelism of the inner build (MTPC_JOBS;\n"
	"                      default/0: cores; with --executor slurm: the CPUs\n"
	"                      to ask for, default 16 or the idle ones)\n"
	"  --cache PATH        plan cache (MTPC_CACHE; default\n"
	"                      $XDG_CACHE_HOME/mtpc/plans.sqlite, else\n"
	"                      ~/.cache/mtpc/plans.sqlite)\n"
	"  --launcher WORD     prefix backend and partition compiles with WORD;\n"
	"                      repeat for more words (MTPC_LAUNCHER: words\n"
	"                      separated by spaces or ';')\n"
	"  --split-arg WORD    pass WORD to mtpc-split (MTPC_SPLIT_ARGS: words)\n"
	"  --min-cost C        passed to mtpc-split --min-cost\n"
	"  --split-tool PATH   mtpc-split to run (default: next to this tool)\n"
	"  --llvm-bin DIR      directory of ld.lld and llvm-objcopy (default: the\n"
	"                      compiler's directory, after symlinks)\n"
	"  --ninja PATH        ninja to run (default: ninja on PATH)\n"
	"  --dir DIR           inner build directory (default: <output>.mtpc)\n"
	INNER_EXECUTOR_HELP
	"                      (MTPC_EXECUTOR, MTPC_SLURM_ARGS, MTPC_SLURM_TRIES,\n"
	"                      MTPC_SLURM_WAIT)\n",
	"  --progress          show the inner build's [i/n] progress lines\n"
	"  --verbose           show the inner build's commands\n"
	"  --help              this text\n"
	"  --version           print the version\n"
	"With -Xthinlto-distributor= give an option and its value as one word:\n"
	"-Xthinlto-distributor=--jobs=4.\n"
	"\n"
	"Every link prints one line on stderr: 'mtpc-distribute: <output>: M\n"
	"modules, S split (<module>: N partitions, ...), T s; <why>'. A module\n"
	"the splitter cannot handle is compiled unsplit after one warning.\n"
	"Exit status 0 only when every output lld asked for exists; otherwise 1\n"
	"and one message naming the modules that failed (bad JSON, a missing\n"
	"input or an unwritable output directory: nothing runs); 2 for bad\n"
	"options.\n",
	NULL,
};

struct opts {
	struct inner_opts in; /* the options mtpc-link takes too */
	int progress;
	const char *json;     /* lld's job list */
};


/* Defaults, then the environment, then the options; one JSON path last.
 * Returns 0, or -1 after one error message. */
static int parse_opts(struct opts *o, int argc, char **argv)
{
	enum { O_PROGRESS = INNER_O_END };
	static const struct option longopts[] = {
		INNER_LONGOPTS,
		{"progress", no_argument, 0, O_PROGRESS},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	memset(o, 0, sizeof *o);
	struct inner_opts *in = &o->in;
	inner_opts_init(in);
	if (inner_opts_from_env(in) < 0)
		return -1;
	static const int refused[] = {INNER_O_MERGE_DWO, 0}; /* a compile's */
	int c;
	while ((c = inner_getopt(in, argc, argv, ":h", longopts, refused, "mtpc-distribute", usage)) >= 0)
		if (c == O_PROGRESS)
			o->progress = 1;
	if (c == -2)
		return -1;
	if (optind != argc - 1) {
		mtpc_error(optind == argc ? "no job list (JSON file) given (see --help)"
					  : "one job list (JSON file) expected, got %d arguments",
			   argc - optind);
		return -1;
	}
	o->json = argv[optind];
	return 0;
}

/* lld names an archive member it hands out as "<archive>(<member> at
 * <offset>).<task>.<pid in hex>.o": its identity across links is the part
 * up to the ')'. Other modules are their own path. Heap string, absolute. */
static char *module_id(const char *path, const char *cwd)
{
	char *id = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", cwd, path);
	char *paren = strrchr(id, ')');
	if (paren) {
		const char *s = paren + 1;
		int dots = 0, ok = 1;
		size_t n = strlen(s);
		if (n < 2 || strcmp(s + n - 2, ".o") != 0)
			ok = 0;
		for (size_t i = 0; ok && i + 2 < n; i++) {
			if (s[i] == '.')
				dots++;
			else if (!isxdigit((unsigned char)s[i]))
				ok = 0;
		}
		if (ok && dots == 2)
			paren[1] = 0;
	}
	return id;
}

/* The job's word naming its shard is "-fthinlto-index=<inputs[1]>", its
 * output "-o <outputs[0]>" and its module inputs[0]: a job of exactly that
 * shape (and nothing else in args) is a module MTPC may split. Others (a
 * future lld's extra outputs or options) run as lld wrote them. */
static int plain_module_job(const struct job *j)
{
	if (j->inputs.n < 2 || j->outputs.n != 1 || j->args.n != 4)
		return 0;
	char *idx = xasprintf("-fthinlto-index=%s", j->inputs.v[1]);
	int ok = !strcmp(j->args.v[0], j->inputs.v[0]) && !strcmp(j->args.v[1], idx) &&
		 !strcmp(j->args.v[2], "-o") && !strcmp(j->args.v[3], j->outputs.v[0]);
	free(idx);
	return ok;
}

/* The backends' compile from common.args: lld writes the compiler, the
 * words it must be followed by (--thinlto-remote-compiler-prepend-arg), "-c"
 * (the graph adds its own), then the options. Position independent unless
 * lld left out -fpic (a -no-pie or -static link). */
static void dist_codegen(const struct graph_conf *gc, const struct jobs *js, struct graph_codegen *cg)
{
	cg->driver = xstrdup(js->common.v[0]);
	/* lld does not pass its own options (a --gdb-index) to the distributor. */
	cg->type_units = gc->type_units;
	size_t i = 1;
	while (i < js->common.n && strcmp(js->common.v[i], "-c") != 0)
		i++;
	if (i == js->common.n)
		i = 1; /* no "-c": every word is an option */
	else
		for (size_t k = 1; k < i; k++)
			strv_add(&cg->driver_args, js->common.v[k]);
	for (; i < js->common.n; i++) {
		const char *w = js->common.v[i];
		if (!strcmp(w, "-c"))
			continue;
		if (!strcmp(w, "-fpic") || !strcmp(w, "-fPIC") || !strcmp(w, "-fpie") || !strcmp(w, "-fPIE"))
			cg->pic = 1;
		else if (!strcmp(w, "-fno-pic") || !strcmp(w, "-fno-pie"))
			cg->pic = 0;
		strv_add(&cg->flags, w);
	}
}

/* A job that is not a plain module: one edge running common.args +
 * job.args as they are (the launcher before them). */
static int emit_raw_job(struct buf *nj, const struct graph_conf *gc, const struct jobs *js,
			const struct job *j, size_t index)
{
	struct strv cmd = {0};
	strv_addv(&cmd, &gc->launcher);
	strv_addv(&cmd, &js->common);
	strv_addv(&cmd, &j->args);
	int r = nw_build(nj, j->outputs.v, "job", NULL, NULL, NULL);
	r |= nw_cmd_var(nj, "cmd", cmd.v);
	buf_printf(nj, "  desc = MTPC job %zu\n\n", index);
	strv_free(&cmd);
	return r;
}

/* The inner build of the jobs: modules (shards copied in) through graph/,
 * other jobs as they are; everything is a default target. */
static int dist_graph(const struct graph_conf *gc, struct jobs *js, struct graph *g,
		      struct graph_codegen *cg)
{
	memset(g, 0, sizeof *g);
	dist_codegen(gc, js, cg);
	char *idx = xasprintf("%s/index", gc->inner);
	if (mtpc_mkdir_p(idx) < 0) {
		mtpc_error("cannot create %s: %s", idx, strerror(errno));
		free(idx);
		return -1;
	}
	free(idx);
	int r = 0;
	for (size_t i = 0; i < js->n && r == 0; i++) {
		struct job *j = &js->v[i];
		if (!plain_module_job(j))
			continue;
		char *id = module_id(j->inputs.v[0], gc->outer_cwd), *key = graph_module_key(id);
		char *shard = xasprintf("%s/index/%s.thinlto.bc", gc->inner, key);
		size_t n = g->nmods;
		graph_add_module(g, gc, j->inputs.v[0], id, shard);
		j->mod = (long)n;
		if (g->nmods == n) {
			mtpc_error("%s is the module of two jobs", j->inputs.v[0]);
			r = -1;
		} else {
			/* Only if changed: restat stops at an unchanged shard. */
			r = mtpc_copy_file(j->inputs.v[1], shard, MTPC_WRITE_IF_CHANGED);
		}
		free(id);
		free(key);
		free(shard);
	}
	if (r < 0)
		return -1;
	struct buf *nj = &g->ninja;
	graph_rules(nj, "mtpc-distribute");
	/* Ninja runs in the link's directory (lld's paths are relative to it);
	 * its log stays in the inner dir. */
	buf_add(nj, "builddir = ");
	r |= nw_value(nj, gc->inner);
	buf_add(nj, "\n\n");
	if (g->nmods)
		r |= graph_emit_modules(gc, cg, g);
	struct strv targets = {0};
	for (size_t i = 0; i < g->nmods; i++)
		strv_addown(&targets, graph_native(&g->mods[i]));
	for (size_t i = 0; i < js->n; i++)
		if (js->v[i].mod < 0) {
			r |= emit_raw_job(nj, gc, js, &js->v[i], i);
			strv_addv(&targets, &js->v[i].outputs);
		}
	buf_add(nj, "default");
	for (size_t i = 0; i < targets.n; i++) {
		buf_addc(nj, ' ');
		r |= nw_path(nj, targets.v[i]);
	}
	buf_addc(nj, '\n');
	strv_free(&targets);
	if (r)
		mtpc_error("a path of this link cannot be written in a Ninja file (newline?)");
	return r ? -1 : 0;
}

/* Put the module's object where lld expects it: a hard link to a temporary
 * name renamed over the output (a copy where links are not possible), so
 * that lld never sees a half-written object. */
static int deliver(const char *from, const char *to)
{
	char *tmp = xasprintf("%s.mtpc-tmp", to);
	unlink(tmp);
	int r = link(from, tmp);
	if (r == 0 && rename(tmp, to) < 0) {
		unlink(tmp);
		r = -1;
	}
	free(tmp);
	return r == 0 ? 0 : mtpc_copy_file(from, to, 0);
}

/* After a failed inner build (run with -k 0: everything else was built):
 * the modules Ninja would still build, those that failed (a dry run; the
 * edges' descriptions name their module's key), in one error line. */
static void name_failures(const char *ninja, const char *manifest, const struct graph *g,
			  const char *json)
{
	struct buf out = {0}, list = {0};
	char *argv[] = {(char *)ninja, "-f", (char *)manifest, "-n", "-k", "0", NULL};
	struct proc_io io = {.out = &out, .err = &out};
	proc_spawn(argv, &io);
	for (size_t i = 0; i < g->nmods; i++) {
		char *pat = xasprintf(" %s", g->mods[i].key);
		const char *hit = out.s ? strstr(out.s, pat) : NULL;
		size_t n = strlen(pat);
		if (hit && (hit[n] == '\n' || hit[n] == ' '))
			buf_printf(&list, "%s%s", list.len ? ", " : "", g->mods[i].path);
		free(pat);
	}
	if (list.len)
		mtpc_error("%s: the backend of %s failed (the compiler's message is above)", json, list.s);
	else
		mtpc_error("%s: the inner build failed (its message is above)", json);
	buf_free(&out);
	buf_free(&list);
}

/* When no inner build can be made (no ninja, a path Ninja cannot express):
 * every job as lld wrote it, one after the other. */
static int run_jobs_as_is(const struct opts *o, const struct jobs *js)
{
	for (size_t i = 0; i < js->n; i++) {
		struct strv cmd = {0};
		strv_addv(&cmd, &o->in.launcher);
		strv_addv(&cmd, &js->common);
		strv_addv(&cmd, &js->v[i].args);
		int st = proc_run(cmd.v, NULL, NULL, NULL);
		strv_free(&cmd);
		if (st) {
			mtpc_error("%s: the backend of %s failed (exit status %d)", o->json,
				   js->v[i].inputs.v[0], st);
			return 1;
		}
	}
	return 0;
}

/* The inner directory: --dir, else <linker output>.mtpc, else the job
 * list's name without ".<pid>.dist-file.json" + ".mtpc". Absolute. */
static char *inner_dir(const struct opts *o, const struct jobs *js, const char *cwd)
{
	char *base;
	if (o->in.dir)
		base = xstrdup(o->in.dir);
	else if (js->linker_output)
		base = xasprintf("%s.mtpc", js->linker_output);
	else {
		base = xstrdup(o->json);
		char *suffix = strstr(base, ".dist-file.json");
		if (suffix) {
			*suffix = 0;
			char *dot = strrchr(base, '.');
			if (dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1))
				*dot = 0;
		}
		char *b = xasprintf("%s.mtpc", base);
		free(base);
		base = b;
	}
	if (base[0] == '/')
		return base;
	char *abs = xasprintf("%s/%s", cwd, base);
	free(base);
	return abs;
}

/* Run the inner build and deliver the objects. Returns the exit status. */
static int build_and_deliver(const struct opts *o, const struct graph_conf *gc, struct jobs *js,
			     const struct graph *g, const char *ninja)
{
	char *manifest = xasprintf("%s/build.ninja", gc->inner);
	/* -k 0: every module that can be built is, so that afterwards the
	 * modules left to build are exactly those that failed (name_failures).
	 * Quiet, Ninja prints only failures (the compiler's messages) and "no
	 * work to do": the first go to stderr with the link's other messages,
	 * the second nowhere. */
	struct buf out = {0};
	struct inner_build b = {
		.dir = gc->inner,
		.manifest = manifest,
		.name = mtpc_base_name(js->linker_output ? js->linker_output : o->json),
		.plan_jobs = gc->jobs,
		.quiet = !o->progress,
		.keep_going = 1,
		.out = o->progress || o->in.verbose ? NULL : &out,
		.graph = g,
	};
	int status = inner_run(&o->in, &b);
	if (out.len) {
		const char *idle = "ninja: no work to do.\n";
		if (strcmp(out.s, idle) != 0)
			fputs(out.s, stderr);
	}
	buf_free(&out);
	if (status) {
		name_failures(ninja, manifest, g, o->json);
		free(manifest);
		return 1;
	}
	free(manifest);
	for (size_t i = 0; i < js->n; i++) {
		struct job *j = &js->v[i];
		if (j->mod >= 0) {
			char *native = graph_native(&g->mods[j->mod]);
			int r = deliver(native, j->outputs.v[0]);
			free(native);
			if (r < 0)
				return 1;
		}
		for (size_t k = 0; k < j->outputs.n; k++)
			if (access(j->outputs.v[k], F_OK) < 0) {
				mtpc_error("%s: the backend of %s wrote no %s", o->json, j->inputs.v[0],
					   j->outputs.v[k]);
				return 1;
			}
	}
	return 0;
}

static int distribute(const struct opts *o, struct jobs *js, const char *argv0, double t0)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd)) {
		mtpc_error("cannot get the current directory: %s", strerror(errno));
		return 1;
	}
	char *self = proc_self_path();
	char *split = o->in.split_tool ? xstrdup(o->in.split_tool) : inner_find_split_tool(self ? self : argv0);
	char *llvm_bin = o->in.llvm_bin ? xstrdup(o->in.llvm_bin) : inner_find_llvm_bin(js->common.v[0]);
	char *inner = inner_dir(o, js, cwd), *prefix = xasprintf("%s/", inner);
	char *min_cost = o->in.min_cost ? xasprintf("%lld", o->in.min_cost) : NULL;
	char *ninja = proc_which(o->in.ninja ? o->in.ninja : "ninja");
	mtpc_cache *cache = NULL;
	struct graph_conf gc = {
		.self = self ? self : argv0,
		.split_tool = split,
		.llvm_bin = llvm_bin,
		.min_cost = min_cost,
		.inner = inner,
		.outer_cwd = cwd,
		.prefix = prefix,
	};
	inner_conf(&gc, &o->in);
	struct graph g = {0};
	struct graph_codegen cg = {0};
	int status;
	if (!ninja) {
		mtpc_warn("%s not found; running the %zu jobs one by one, unsplit",
			  o->in.ninja ? o->in.ninja : "ninja", js->n);
		status = run_jobs_as_is(o, js);
	} else if (mtpc_mkdir_p(inner) < 0) {
		mtpc_error("cannot create %s: %s", inner, strerror(errno));
		status = 1;
	} else {
		cache = inner_open_cache(o->in.cache, "link");
		gc.history = cache ? inner_cache_history : NULL;
		gc.history_ctx = cache;
		if (dist_graph(&gc, js, &g, &cg) < 0 || graph_write(&gc, &g) < 0) {
			mtpc_warn("cannot build through MTPC; running the %zu jobs one by one, unsplit", js->n);
			status = run_jobs_as_is(o, js);
		} else {
			mtpc_cache_close(cache);
			cache = NULL;
			status = build_and_deliver(o, &gc, js, &g, ninja);
			if (status == 0)
				inner_summary(stderr, &g, &gc,
					      js->linker_output ? js->linker_output : o->json,
					      mtpc_now() - t0);
		}
	}
	mtpc_cache_close(cache);
	graph_free(&g);
	free(cg.driver);
	strv_free(&cg.driver_args);
	strv_free(&cg.flags);
	free(self);
	free(split);
	free(llvm_bin);
	free(inner);
	free(prefix);
	free(min_cost);
	free(ninja);
	return status;
}

int main(int argc, char **argv)
{
	mtpc_set_progname("mtpc-distribute");
	if (argc > 1 && steps_is_step(argv[1]))
		return steps_main(argc, argv);
	double t0 = mtpc_now();
	struct opts o;
	if (parse_opts(&o, argc, argv) < 0) {
		inner_opts_free(&o.in);
		return 2;
	}
	struct jobs js;
	int status = 1;
	if (read_jobs(o.json, &js) == 0 && check_files(o.json, &js) == 0)
		status = js.n ? distribute(&o, &js, argv[0], t0) : 0;
	jobs_free(&js);
	inner_opts_free(&o.in);
	return status;
}
