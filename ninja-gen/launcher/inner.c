/* inner.c: see inner.h. */
#define _GNU_SOURCE /* realpath */
#include "inner.h"
#include "inner_dir.h"
#include "jobs.h"
#include "proc.h"
#include "trace.h"
#include "util.h"
#include "workboard.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void inner_opts_init(struct inner_opts *o)
{
	memset(o, 0, sizeof *o);
	o->threshold = -1;
	o->cost_threshold = GRAPH_DEFAULT_COST_THRESHOLD;
	o->relay_cost = -1;
	o->slurm.tries = SLURM_DEFAULT_TRIES;
	o->slurm.wait = SLURM_DEFAULT_WAIT;
}

void inner_opts_free(struct inner_opts *o)
{
	strv_free(&o->launcher);
	strv_free(&o->split_args);
	strv_free(&o->slurm.args);
}

/* Add a word to a list, replacing the environment's words first. */
static void list_word(struct strv *v, int *from_env, const char *w)
{
	if (*from_env) {
		strv_free(v);
		*from_env = 0;
	}
	if (*w)
		strv_add(v, w);
}

int inner_getopt(struct inner_opts *o, int argc, char **argv, const char *shortopts,
		 const struct option *longopts, const int *refused, const char *tool,
		 const char *const *usage)
{
	int c, li = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, &li)) != -1) {
		if (c == 'h') {
			for (const char *const *u = usage; *u; u++)
				fputs(*u, stdout);
			exit(0);
		}
		if (c == ':') {
			mtpc_error("%s: missing value (see --help)", argv[optind - 1]);
			return -2;
		}
		if (c == '?') {
			mtpc_error("unknown option %s (see --help)", argv[optind - 1]);
			return -2;
		}
		if (c < INNER_O_THRESHOLD || c >= INNER_O_END)
			return c;
		for (const int *r = refused; r && *r; r++)
			if (*r == c) {
				mtpc_error("--%s is not an option of %s (see --help)", longopts[li].name, tool);
				return -2;
			}
		if (inner_opt(o, c, optarg) != 0)
			return -2;
	}
	return -1;
}

/* Append the words of an environment value (separated by blanks or ';',
 * the form of a CMake list). */
static void env_words(struct strv *v, const char *name)
{
	const char *s = getenv(name);
	if (!s)
		return;
	char *copy = xstrdup(s), *save = NULL;
	for (char *t = strtok_r(copy, " \t\n;", &save); t; t = strtok_r(NULL, " \t\n;", &save))
		strv_add(v, t);
	free(copy);
}

/* An integer variable of the environment, if set and not empty. */
static int env_ll(const char *name, long long lo, long long hi, long long *out)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return 0;
	return mtpc_parse_ll(name, s, lo, hi, out);
}

int inner_opts_from_env(struct inner_opts *in)
{
	long long parts = in->partitions, jobs = in->jobs, type_units = !in->no_type_units;
	if (env_ll("MTPC_SPLIT_THRESHOLD", 0, LLONG_MAX, &in->threshold) ||
	    env_ll("MTPC_TYPE_UNITS", 0, 1, &type_units) ||
	    env_ll("MTPC_SPLIT_COST", 0, LLONG_MAX, &in->cost_threshold) ||
	    env_ll("MTPC_RELAY_COST", 0, LLONG_MAX, &in->relay_cost) ||
	    env_ll("MTPC_MAX_PARTITIONS", 0, 4096, &parts) || env_ll("MTPC_JOBS", 0, 4096, &jobs))
		return -1;
	const char *relay = getenv("MTPC_RELAY"), *busy = getenv("MTPC_BUSY");
	if ((relay && *relay && inner_parse_relay("MTPC_RELAY", relay, &in->relay) < 0) ||
	    (busy && *busy && inner_parse_busy("MTPC_BUSY", busy, &in->busy) < 0))
		return -1;
	in->partitions = (int)parts;
	in->jobs = (int)jobs;
	in->no_type_units = !type_units;
	const char *cache = getenv("MTPC_CACHE");
	in->cache = cache && *cache ? cache : NULL;
	env_words(&in->launcher, "MTPC_LAUNCHER");
	env_words(&in->split_args, "MTPC_SPLIT_ARGS");
	env_words(&in->slurm.args, "MTPC_SLURM_ARGS");
	in->launcher_from_env = in->split_args_from_env = in->slurm_args_from_env = 1;
	const char *executor = getenv("MTPC_EXECUTOR");
	long long tries = in->slurm.tries, wait = in->slurm.wait;
	if ((executor && *executor && slurm_parse_executor(executor, &in->slurm.on) < 0) ||
	    env_ll("MTPC_SLURM_TRIES", 1, 100, &tries) || env_ll("MTPC_SLURM_WAIT", 1, 86400, &wait))
		return -1;
	in->slurm.tries = (int)tries;
	in->slurm.wait = (int)wait;
	return 0;
}

int inner_parse_launcher(struct inner_launcher_opts *o, int argc, char **argv, const int *refused, int dashdash,
			 int env, const char *tool, const char *what, const char *const *usage)
{
	enum { O_QUIET = INNER_O_END };
	static const struct option longopts[] = {
		INNER_LONGOPTS,
		{"quiet", no_argument, 0, O_QUIET},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	memset(o, 0, sizeof *o);
	inner_opts_init(&o->in);
	if (env && inner_opts_from_env(&o->in) < 0)
		return -1;
	int c;
	/* "+": POSIX mode, stop at the first word that is not an option (or
	 * after "--"): the command's own options are never looked at. */
	while ((c = inner_getopt(&o->in, argc, argv, "+:h", longopts, refused, tool, usage)) >= 0)
		if (c == O_QUIET)
			o->quiet = 1;
	if (c == -2)
		return -1;
	if (dashdash && (optind < 1 || optind > argc || strcmp(argv[optind - 1], "--") != 0)) {
		mtpc_error("missing \"--\" before the %s (see --help)", what);
		return -1;
	}
	if (optind >= argc) {
		mtpc_error("no %s (see --help)", what);
		return -1;
	}
	o->cmd = argv + optind;
	o->ncmd = argc - optind;
	return 0;
}

int inner_opt(struct inner_opts *o, int c, const char *arg)
{
	long long v = 0;
	int bad = 0;
	switch (c) {
	case INNER_O_THRESHOLD: bad = mtpc_parse_ll("--threshold", arg, 0, LLONG_MAX, &o->threshold); break;
	case INNER_O_COST: bad = mtpc_parse_ll("--cost-threshold", arg, 0, LLONG_MAX, &o->cost_threshold); break;
	case INNER_O_RELAY: bad = mtpc_parse_ll("--relay-cost", arg, 0, LLONG_MAX, &o->relay_cost); break;
	case INNER_O_RELAY_MODE: bad = inner_parse_relay("--relay", arg, &o->relay); break;
	case INNER_O_BUSY: bad = inner_parse_busy("--busy", arg, &o->busy); break;
	case INNER_O_VERSION: mtpc_print_version(); exit(0);
	case INNER_O_PARTS:
		bad = mtpc_parse_ll("--partitions", arg, 0, 4096, &v);
		o->partitions = (int)v;
		break;
	case INNER_O_JOBS:
		bad = mtpc_parse_ll("--jobs", arg, 0, 4096, &v);
		o->jobs = (int)v;
		break;
	case INNER_O_MIN_COST: bad = *arg && mtpc_parse_ll("--min-cost", arg, 0, 1LL << 40, &o->min_cost); break;
	case INNER_O_CACHE: o->cache = *arg ? arg : NULL; break;
	case INNER_O_LAUNCHER: list_word(&o->launcher, &o->launcher_from_env, arg); break;
	case INNER_O_SPLIT_ARG: list_word(&o->split_args, &o->split_args_from_env, arg); break;
	case INNER_O_SPLIT_TOOL: o->split_tool = arg; break;
	case INNER_O_LLVM_BIN: o->llvm_bin = arg; break;
	case INNER_O_NINJA: o->ninja = arg; break;
	case INNER_O_DIR: o->dir = arg; break;
	case INNER_O_VERBOSE: o->verbose = 1; break;
	case INNER_O_NO_TYPE_UNITS: o->no_type_units = 1; break;
	case INNER_O_MERGE_DWO: o->merge_dwo = 1; break;
	case INNER_O_EXECUTOR: bad = slurm_parse_executor(arg, &o->slurm.on); break;
	case INNER_O_SLURM_ARG: list_word(&o->slurm.args, &o->slurm_args_from_env, arg); break;
	case INNER_O_SLURM_TRIES:
		bad = mtpc_parse_ll("--slurm-tries", arg, 1, 100, &v);
		o->slurm.tries = (int)v;
		break;
	case INNER_O_SLURM_WAIT:
		bad = mtpc_parse_ll("--slurm-wait", arg, 1, 86400, &v);
		o->slurm.wait = (int)v;
		break;
	default: return 1;
	}
	return bad ? -1 : 0;
}

void inner_conf(struct graph_conf *gc, const struct inner_opts *o)
{
	gc->cache = o->cache;
	gc->launcher = o->launcher;
	gc->split_args = o->split_args;
	gc->threshold = o->threshold;
	gc->cost_threshold = o->cost_threshold;
	gc->relay_cost = o->relay_cost >= 0 ? o->relay_cost : o->cost_threshold / RELAY_FRACTION;
	gc->relay = o->relay;
	/* A Slurm allocation's cores are the cluster's, not this machine's. */
	gc->busy = o->slurm.on ? GRAPH_BUSY_IGNORE : o->busy;
	gc->type_units = !o->no_type_units;
	int plan = o->slurm.on ? INNER_SLURM_PLAN_JOBS : inner_cores();
	gc->kmax = o->partitions > 0 ? o->partitions : plan;
	gc->jobs = o->jobs > 0 ? o->jobs : plan;
}

int inner_run_jobs(const struct inner_opts *o, const struct slurm *s)
{
	if (s->job)
		return s->cpus;
	return o->jobs > 0 ? o->jobs : inner_cores();
}

int inner_up_to_date(char *const *ninja_cmd)
{
	struct strv argv = {0};
	for (char *const *a = ninja_cmd; *a; a++)
		strv_add(&argv, *a);
	strv_add(&argv, "-n");
	struct buf out = {0}, err = {0};
	int st = proc_spawn(argv.v, &(struct proc_io){.out = &out, .err = &err});
	int done = st == 0 && out.s && strstr(out.s, "ninja: no work to do.");
	buf_free(&out);
	buf_free(&err);
	strv_free(&argv);
	return done;
}

int inner_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
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

char *inner_find_split_tool(const char *self)
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

char *inner_find_fold_plugin(const char *split_tool)
{
	if (!strchr(split_tool, '/'))
		return NULL;
	char *d = dir_of(split_tool), *p = xasprintf("%s/mtpc-fold.so", d);
	/* absolute: the partitions compile in the inner directory */
	char *abs = access(p, R_OK) == 0 ? realpath(p, NULL) : NULL;
	free(d);
	free(p);
	return abs;
}

char *inner_find_llvm_bin(const char *driver)
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

/* Cost in a few digits: 221348 -> "221k". */
static void human(struct buf *b, long long n)
{
	if (n >= 10000000)
		buf_printf(b, "%lldM", (n + 500000) / 1000000);
	else if (n >= 10000)
		buf_printf(b, "%lldk", (n + 500) / 1000);
	else
		buf_printf(b, "%lld", n);
}

/* Unsplit modules named in the summary: the costliest few that came within
 * a quarter of the threshold. */
#define SUMMARY_UNSPLIT 3

static int cmp_cost_desc(const void *a, const void *b)
{
	const struct module *x = *(const struct module *const *)a, *y = *(const struct module *const *)b;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* "<sep><module> <cost>[ measured][ relayed][ (for its edits)...]"; held:
 * why its split step held it whole, or NULL; then *sep becomes ", ". */
static void module_cost(struct buf *b, const char **sep, const struct module *m, const struct graph_conf *gc,
			const char *held)
{
	buf_printf(b, "%s%s ", *sep, m->name);
	human(b, m->cost);
	if (m->measured)
		buf_add(b, " measured");
	if (m->relay)
		buf_add(b, " relayed");
	if (m->for_edits)
		buf_add(b, " (for its edits)");
	else if (!m->split && !m->relay && m->wide_edits && gc->relay != GRAPH_RELAY_NEVER)
		buf_add(b, " (not for its edits: they rewrite most of its partitions)");
	if (m->split && !held && !m->for_edits && m->was_split == 1 && m->cost < gc->cost_threshold)
		buf_add(b, " (kept split: split last time, it stays split down to 3/4 of the threshold)");
	if (m->held && m->why && !strncmp(m->why, "not split: ", 11)) /* "...; cost N..." (choose.c) */
		buf_printf(b, ": %.*s", (int)strcspn(m->why + 11, ";"), m->why + 11);
	if (held)
		buf_printf(b, ": when its split step ran, %s", held);
	*sep = ", ";
}

/* "; <rule>: <module> <cost>...; not split: <module> <cost>...": why each
 * large module was or was not split; held[i]: why module i's split step
 * held it whole, or NULL. */
static void summary_reasons(struct buf *b, const struct graph *g, const struct graph_conf *gc, char **held)
{
	if (gc->kmax < 2) {
		buf_add(b, "; splitting off (1 partition)");
		return;
	}
	if (gc->threshold >= 0) {
		buf_printf(b, "; split by size: more than %lld bitcode bytes", gc->threshold);
		return;
	}
	const struct module **v = xmalloc((g->nmods + 1) * sizeof *v);
	for (size_t i = 0; i < g->nmods; i++)
		v[i] = &g->mods[i];
	qsort(v, g->nmods, sizeof *v, cmp_cost_desc);
	buf_add(b, "; split by cost >= ");
	human(b, gc->cost_threshold);
	buf_add(b, " instructions");
	const char *sep = ": ";
	for (size_t i = 0; i < g->nmods; i++)
		if (v[i]->split && !held[v[i] - g->mods])
			module_cost(b, &sep, v[i], gc, NULL);
	sep = "; not split: ";
	int shown = 0;
	for (size_t i = 0; i < g->nmods; i++) {
		const char *h = held[v[i] - g->mods];
		if (h || (!v[i]->split && v[i]->cost * 4 >= gc->cost_threshold && shown < SUMMARY_UNSPLIT)) {
			module_cost(b, &sep, v[i], gc, h);
			shown += !h;
		}
	}
	free(v);
}

void inner_summary(FILE *f, const struct graph *g, const struct graph_conf *gc, const char *output,
		   double secs)
{
	struct buf list = {0}, b = {0};
	int nsplit = 0, nunused = 0;
	const char *sep = " (";
	char **held = xcalloc(g->nmods + 1, sizeof *held);
	for (size_t i = 0; i < g->nmods; i++) {
		if (!g->mods[i].split)
			continue;
		int n = graph_split_result(gc->inner, &g->mods[i], &held[i]);
		if (n < 0) {
			nunused++;
			continue;
		}
		if (held[i])
			continue; /* with the modules not split */
		nsplit++;
		const char *name = g->mods[i].name;
		if (n > 0)
			buf_printf(&list, "%s%s: %d partition%s", sep, name, n, n == 1 ? "" : "s");
		else
			buf_printf(&list, "%s%s: unsplit (fallback)", sep, name);
		sep = ", ";
	}
	buf_printf(&b, "%s: %s: %zu module%s, %d split%s%s", mtpc_progname(), mtpc_base_name(output),
		   g->nmods, g->nmods == 1 ? "" : "s", nsplit, list.len ? list.s : "", list.len ? ")" : "");
	if (nunused)
		buf_printf(&b, ", %d unused", nunused);
	if (g->nnative_objects)
		buf_printf(&b, ", %d native object%s", g->nnative_objects, g->nnative_objects == 1 ? "" : "s");
	if (g->nnative_archives)
		buf_printf(&b, ", %d native archive%s", g->nnative_archives, g->nnative_archives == 1 ? "" : "s");
	buf_printf(&b, ", %.2f s", secs);
	summary_reasons(&b, g, gc, held);
	buf_addc(&b, '\n');
	fputs(b.s, f);
	fflush(f);
	for (size_t i = 0; i < g->nmods; i++)
		free(held[i]);
	free(held);
	buf_free(&list);
	buf_free(&b);
}

void inner_cache_history(void *ctx, const char *module_path, struct module_history *h)
{
	h->seconds = mtpc_cache_module_seconds(ctx, module_path, &h->was_split);
	struct mtpc_rebuilds r;
	h->rebuilds = mtpc_cache_module_rebuilds(ctx, module_path, &r);
	h->forced = r.forced;
	h->parted = r.parted;
	h->wide = r.wide;
	/* While fewer than the kept number were recorded, the oldest is the
	 * first ever: a build, not a change. */
	h->changed = h->rebuilds > 0 ? h->rebuilds - h->forced - (h->rebuilds < MTPC_CACHE_REBUILDS_KEPT) : 0;
}

mtpc_cache *inner_open_cache(const char *cache, const char *what)
{
	char *path = mtpc_cache_resolve_path(cache, NULL), *msg = NULL;
	mtpc_cache *c = mtpc_cache_open_ex(path, 0, &msg);
	if (!c) {
		mtpc_warn("plan cache %s; this %s goes on without it", msg ? msg : path, what);
		setenv("MTPC_CACHE_QUIET", "1", 1);
	}
	free(msg);
	free(path);
	return c;
}


/* Where the inner build's progress lines go while it runs (inner_run). */
struct progress {
	char *prefix; /* "[<name> ": how the inner build's lines start */
	int tty;      /* /dev/tty */
};

static void relay_progress(void *arg, struct buf *out)
{
	struct progress *pr = arg;
	size_t plen = strlen(pr->prefix), i = 0;
	while (i < out->len) {
		char *nl = memchr(out->s + i, '\n', out->len - i);
		if (!nl)
			break; /* an unfinished line waits for its end */
		size_t end = (size_t)(nl - out->s) + 1;
		if (end - i > plen && !strncmp(out->s + i, pr->prefix, plen)) {
			/* One write, so that concurrent links' lines do not mix. */
			struct buf line = {0};
			buf_printf(&line, "\r\033[K%.*s", (int)(end - i), out->s + i);
			if (write(pr->tty, line.s, line.len) < 0) {
				/* the terminal went away: nobody to show it to */
			}
			buf_free(&line);
		} else {
			fwrite(out->s + i, 1, end - i, stdout);
		}
		i = end;
	}
	fflush(stdout);
	if (i) {
		memmove(out->s, out->s + i, out->len - i);
		out->len -= i;
		out->s[out->len] = 0;
	}
}

/* The trace of the build that ran since mark (trace.h). */
static void write_trace(const struct inner_opts *o, const struct inner_build *b, const struct trace_mark *mark,
			int jobs, double start)
{
	const struct graph *g = b->graph;
	struct trace_module *mods = xcalloc(g->nmods + 1, sizeof *mods);
	char **why = xcalloc(g->nmods + 1, sizeof *why);
	for (size_t i = 0; i < g->nmods; i++) {
		/* A module its split step held whole: why, rather than the
		 * choice's reason to split it. */
		char *held = NULL;
		if (g->mods[i].split)
			graph_split_result(b->dir, &g->mods[i], &held);
		why[i] = held ? xasprintf("not split: when its split step ran, %s", held) : NULL;
		free(held);
		mods[i] = (struct trace_module){g->mods[i].key, g->mods[i].name, why[i] ? why[i] : g->mods[i].why};
	}
	struct trace_info info = {.tool = mtpc_progname(), .output = g->output ? g->output : b->name,
				  .jobs = jobs, .mods = mods, .nmods = g->nmods};
	if (b->pre_kind) {
		info.pre_kind = b->pre_kind;
		info.pre_key = b->pre_key;
		info.pre_end_ms = (long long)((b->pre_end - b->pre_start) * 1000 + 0.5);
		info.start_ms = (long long)((start - b->pre_start) * 1000 + 0.5);
	}
	char *db = mtpc_cache_resolve_path(o->cache, NULL), *last = trace_last_path(db);
	trace_write(b->dir, b->manifest, mark, &info, last);
	free(last);
	free(db);
	for (size_t i = 0; i < g->nmods; i++)
		free(why[i]);
	free(why);
	free(mods);
}

/* Post b's predicted work on the work board (workboard.h) for the other
 * links' and compiles' choices: the graph's prediction, times the share of
 * its edges that ninja -n would run (an incremental link reruns few; the
 * edges after a dyndep file's are not counted until it exists). */
static void post_work(const struct inner_opts *o, const struct inner_build *b, const char *ninja,
		      struct work_notice *n)
{
	const struct graph *g = b->graph;
	if (!g || g->work_secs <= 0 || o->busy != GRAPH_BUSY_AUTO || o->slurm.on)
		return;
	size_t edges = 0;
	for (const char *l = g->ninja.s; l && (l = strstr(l, "\nbuild ")); l++)
		edges++;
	char *dry[] = {(char *)ninja, b->manifest ? "-f" : "-C", (char *)(b->manifest ? b->manifest : b->dir), "-n",
		       NULL};
	struct buf out = {0}, err = {0};
	const char *status = getenv("NINJA_STATUS");
	char *saved = status ? xstrdup(status) : NULL;
	setenv("NINJA_STATUS", "@ ", 1); /* one line per edge it would run */
	/* A dry run fails where a dyndep file is not written yet (a build from
	 * scratch): all of it then. */
	size_t dirty = edges;
	if (proc_spawn(dry, &(struct proc_io){.out = &out, .err = &err}) == 0) {
		dirty = 0;
		for (const char *l = out.s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			dirty += l[0] == '@' && l[1] == ' ';
	}
	if (saved)
		setenv("NINJA_STATUS", saved, 1);
	else
		unsetenv("NINJA_STATUS");
	free(saved);
	buf_free(&out);
	buf_free(&err);
	double share = edges && dirty < edges ? (double)dirty / (double)edges : 1.0;
	if (dirty)
		workboard_post(n, g->work_secs * share, g->span_secs * share, g->task_secs);
}

int inner_run(const struct inner_opts *o, const struct inner_build *b)
{
	const char *ninja = o->ninja ? o->ninja : "ninja";
	char *dry[] = {(char *)ninja, b->manifest ? "-f" : "-C", (char *)(b->manifest ? b->manifest : b->dir), NULL};
	struct slurm sl;
	slurm_begin(&sl, &o->slurm, o->slurm.on && inner_up_to_date(dry) ? 0 : b->plan_jobs, b->dir);
	char jobs_s[32];
	snprintf(jobs_s, sizeof jobs_s, "%d", inner_run_jobs(o, &sl));
	/* Run in the inner directory rather than with -C: no "Entering
	 * directory" line among the link's output. */
	struct strv argv = {0};
	strv_add(&argv, ninja);
	if (b->manifest)
		strv_addl(&argv, "-f", b->manifest, NULL);
	strv_addl(&argv, "-j", jobs_s, NULL);
	if (b->keep_going)
		strv_addl(&argv, "-k", "0", NULL);
	if (o->verbose)
		strv_add(&argv, "-v");
	else if (b->quiet)
		strv_add(&argv, "--quiet");
	struct progress pr = {.prefix = NULL, .tty = -1};
	if (!b->quiet || o->verbose) {
		char *fmt = xasprintf("[%s %%f/%%t] ", b->name);
		setenv("NINJA_STATUS", fmt, 1);
		pr.prefix = xasprintf("[%s ", b->name);
		free(fmt);
	}
	char *lock = xasprintf("%s/" INNER_JOBS_IMPLICIT, b->dir);
	jobs_share_implicit(lock);
	free(lock);
	struct buf pout = {0};
	struct proc_io io = {.cwd = b->manifest ? NULL : b->dir, .out = b->out};
	if (!b->out && pr.prefix && !o->verbose && !isatty(STDOUT_FILENO) &&
	    (pr.tty = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)) >= 0) {
		io.out = &pout;
		io.on_out = relay_progress;
		io.on_out_arg = &pr;
	}
	struct trace_mark mark;
	trace_mark(b->dir, &mark);
	struct work_notice notice = WORK_NOTICE_INIT;
	post_work(o, b, ninja, &notice);
	double start = mtpc_now();
	int status = proc_spawn(argv.v, &io);
	workboard_withdraw(&notice);
	if (b->graph)
		write_trace(o, b, &mark, atoi(jobs_s), start);
	if (pr.tty >= 0) {
		relay_progress(&pr, &pout);
		fwrite(pout.s ? pout.s : "", 1, pout.len, stdout); /* an unfinished last line */
		fflush(stdout);
		close(pr.tty);
	}
	buf_free(&pout);
	free(pr.prefix);
	strv_free(&argv);
	int sig = slurm_end(&sl);
	if (sig)
		raise(sig); /* Ctrl-C: the allocation is gone, now stop as asked */
	return status;
}

int inner_parse_busy(const char *what, const char *arg, int *mode)
{
	if (!strcmp(arg, "auto") || !strcmp(arg, "ignore")) {
		*mode = !strcmp(arg, "auto") ? GRAPH_BUSY_AUTO : GRAPH_BUSY_IGNORE;
		return 0;
	}
	mtpc_error("%s: expected auto or ignore, got '%s'", what, arg);
	return -1;
}

int inner_parse_relay(const char *what, const char *arg, int *mode)
{
	static const char *const names[] = {"auto", "always", "never"};
	for (int i = 0; i < 3; i++)
		if (!strcmp(arg, names[i])) {
			*mode = i; /* GRAPH_RELAY_AUTO, _ALWAYS, _NEVER */
			return 0;
		}
	mtpc_error("%s: expected auto, always or never, got '%s'", what, arg);
	return -1;
}
