/* mtpc_compile.c: mtpc-compile, the compile-side front end: a compiler
 * launcher (CMake's <LANG>_COMPILER_LAUNCHER of mtpc_enable()d targets, or
 * a prefix like ccache) that runs a huge translation unit's ThinLTO
 * pre-link pipeline in parallel partitions, one ThinLTO object out:
 *
 *   frontend (LLVM's passes off) -> front.bc
 *   inner build (<output>.mtpc/build.ninja, the graph's pre-link stage):
 *     split front.bc -> parts/p<i>.bc + dyndep
 *     slot i: the compile's own pre-link pipeline on p<i>.bc -> p<i>.o
 *     join: one module again, the split's promotions undone -> native.o
 *   native.o -> the compile's output (only if changed)
 *
 * Which compiles are split: those ThinLTO compiles of one C or C++ source
 * (compilecmd.h) whose cost (compile_cost() below: the previous output's summary,
 * else an estimate from the source's size) is at least the threshold; every
 * other compile runs exactly as given, and gives exactly its own bytes.
 * Any failure on the way compiles unsplit, with one warning.
 *
 * The options come from the command line or from @FILEs (mtpc_enable()
 * keeps them all in files, off the compile rule's command line). A compile
 * whose cost reaches the threshold adds the files that set the options
 * deciding its object to its depfile: changing MTPC_MAX_PARTITIONS reruns
 * the compiles it concerns, not every source of the target. */
#define _POSIX_C_SOURCE 200809L
#include "bitcode.h"
#include "bitcode_cost.h"
#include "compilecmd.h"
#include "debugfix.h"
#include "depfile.h"
#include "graph.h"
#include "inner.h"
#include "inner_dir.h"
#include "jobs.h"
#include "ninja_write.h"
#include "proc.h"
#include "rsp.h"
#include "steps.h"
#include "util.h"
#include "workboard.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* In pieces: C11 compilers need not take string literals over 4095 bytes. */
static const char *const usage[] = {
	"usage: mtpc-compile [options] [--] <compile command>\n"
	"\n"
	"Runs an optimizing compile (clang -O1..-O3/-Os/-Oz -c SRC -o OBJ) of a\n"
	"translation unit whose IR is costly in parallel partitions, as an inner\n"
	"Ninja build in OBJ.mtpc/: the frontend once with LLVM's passes off,\n"
	"mtpc-split of its module, then per partition the compile's own flags:\n"
	"  - a plain compile (no -flto): each partition is optimized and compiled\n"
	"    to native code (with mtpc-fold.so, beside mtpc-split, loaded: equal\n"
	"    copies of a static several partitions keep share one body), and the\n"
	"    objects are merged into OBJ with ld.lld -r (the symbols the split\n"
	"    promoted made local again): one native object with the plain\n"
	"    compile's global symbols;\n"
	"  - a ThinLTO compile (-flto=thin): each partition runs the pre-link\n"
	"    pipeline, and one module again (the split's promotions undone, what\n"
	"    must see the whole module run on it) is written to OBJ as one ThinLTO\n"
	"    object with its summary.\n"
	"Every other compile runs exactly as given (the same bytes). Any failure\n"
	"compiles the unit unsplit, with one warning. Used by CMake's\n"
	"mtpc_enable() as <LANG>_COMPILER_LAUNCHER, as a prefix like ccache\n"
	"(CC=\"mtpc-compile -- clang\"), or behind ccache (CCACHE_PREFIX=mtpc-compile:\n"
	"a cache hit runs nothing of MTPC).\n"
	"\n"
	"Which compiles are split: one C or C++ source compiled with optimization\n"
	"whose cost is at least --cost-threshold instructions. The cost is the\n"
	"previous output's ThinLTO summary when there is one (the instructions\n"
	"after the pre-link pipeline, as mtpc-link measures a module), else an\n"
	"estimate from the source's bytes (and those of the sources a unity file\n"
	"includes), counted twice for a plain compile (it does the ThinLTO\n"
	"compile's work and its backend's), whose cost is measured from its\n"
	"previous object's code bytes. Not split, whatever their cost: -O0,\n"
	"full LTO (-flto), compiles that instrument or use profiles in LLVM's\n"
	"pipeline, pipeline sanitizers (address, memory, thread, ...), CFI and\n"
	"-fsplit-lto-unit (two-module objects), split DWARF of a plain compile\n"
	"(without --merge-dwo; with it, split DWARF other than DWARF 5 in its own\n"
	"uncompressed file without macros: -gdwarf-4, =single, -gz, -g3),\n"
	"modules, optimization records, -save-temps. A precompiled header\n"
	"(-include-pch) is read by the frontend step only.\n"
	"\n",
	"options:\n"
	"  --cost-threshold N  split compiles costing at least N instructions\n"
	"                      (default 100000, as mtpc-link's)\n"
	"  --partitions N      at most N partitions (default: number of cores;\n"
	"                      1 disables splitting)\n"
	INNER_BUSY_HELP("")
	"  --merge-dwo         split a plain compile with -gsplit-dwarf too: each\n"
	"                      partition's split unit goes into the one .dwo the\n"
	"                      compile writes (one string offsets table and one\n"
	"                      list table each, shared, as gdb reads them); gdb and\n"
	"                      llvm-dwarfdump read it, but llvm-dwp -e of a program\n"
	"                      stops at a duplicate DWO id (it reads the .dwo once\n"
	"                      per unit): give llvm-dwp the .dwo files instead\n"
	"  --jobs N            parallelism of the inner build (default/0: cores);\n"
	"                      every compile of it takes a token of the machine's\n"
	"                      job budget (make's jobserver, else MTPC's pool)\n"
	"  --cache PATH        plan cache (default: mtpc-cache path)\n"
	"  --split-arg WORD    pass WORD to mtpc-split (repeat for several); its join\n"
	"                      gets them too: --split-arg --no-join-inline trades\n"
	"                      the join's inliner (docs/splitter.md) for a shorter\n"
	"                      join\n"
	"  --split-tool PATH   mtpc-split to run (default: next to mtpc-compile)\n"
	"  --ninja PATH        ninja to run (default: ninja on PATH)\n"
	"  --launcher WORD     command prefix of the partition compiles (repeat\n"
	"                      for several words)\n"
	INNER_EXECUTOR_HELP
	"  --verbose           show the inner build's commands\n"
	"  --quiet             no progress lines\n"
	"  @FILE               more of these options, read from FILE (before --).\n"
	"                      A compile the options concern (split, or costly\n"
	"                      enough but held whole) adds each FILE that sets\n"
	"                      --partitions, --cost-threshold, --busy, --merge-dwo,\n"
	"                      --split-tool or --split-arg to its depfile (-MD),\n"
	"                      so that changing FILE reruns those compiles and no\n"
	"                      other; mtpc_enable() keeps every MTPC option there\n"
	"                      (CMakeFiles/mtpc-compile*.rsp)\n"
	"  -h, --help          this help\n"
	"      --version       print the version\n"
	"\n"
	"environment (options given on the command line override it):\n"
	"  MTPC_COMPILE_OPTIONS  words taken as the first options (@FILE too): how\n"
	"                      ccache's CCACHE_PREFIX=mtpc-compile, which passes\n"
	"                      none, gets them\n"
	"  MTPC_SPLIT_COST, MTPC_MAX_PARTITIONS, MTPC_BUSY, MTPC_JOBS,\n"
	"  MTPC_CACHE, MTPC_LAUNCHER, MTPC_SPLIT_ARGS, MTPC_EXECUTOR,\n"
	"  MTPC_SLURM_ARGS     --cost-threshold, --partitions, --busy, --jobs,\n"
	"                      --cache, --launcher, --split-arg, --executor,\n"
	"                      --slurm-arg\n"
	"\n"
	"Exit status: the compile's.\n",
	NULL,
};

/* The shared options but the link's own, --quiet, and the compile command
 * (the first word that is not an option, or after "--"). Returns 0, or -1
 * after one error message. */
static int expand_words(int argc, char **argv, struct strv *args, struct strv *shaping);

static int parse_opts(struct inner_launcher_opts *o, int argc, char **argv)
{
	/* the link front ends' options that mean nothing to a compile */
	static const int refused[] = {INNER_O_THRESHOLD, INNER_O_RELAY, INNER_O_RELAY_MODE, INNER_O_MIN_COST,
				      INNER_O_LLVM_BIN, INNER_O_DIR, INNER_O_NO_TYPE_UNITS, 0};
	return inner_parse_launcher(o, argc, argv, refused, 0, 1, "mtpc-compile", "compile command", usage);
}

/* The options that decide whether a compile is split and what its split
 * writes; the others (jobs, cache, executor, launcher, ninja) change where
 * and how fast it runs, not its object. */
static const char *const shaping_opts[] = {"--partitions", "--cost-threshold", "--split-tool", "--split-arg",
					   "--busy", "--merge-dwo", NULL};

/* Whether the option words v set a shaping option ("--opt=V" or "--opt V"). */
static int sets_shaping_option(const struct strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		for (int k = 0; shaping_opts[k]; k++) {
			size_t l = strlen(shaping_opts[k]);
			if (!strncmp(v->v[i], shaping_opts[k], l) && (!v->v[i][l] || v->v[i][l] == '='))
				return 1;
		}
	return 0;
}

/* argv with the words of $MTPC_COMPILE_OPTIONS first among the options
 * (ccache's CCACHE_PREFIX runs "mtpc-compile <compile command>", with no
 * options of its own: they come from there and the MTPC_* variables), and
 * the "@FILE" words among mtpc-compile's own options (before "--") expanded,
 * into *args; the compile command's own "@FILE" words stay for the
 * compiler. Without "--" nothing is expanded (an option's value and the
 * compiler's first word could not be told apart). The FILEs that set a
 * shaping option are added to *shaping: the dependencies a compile they
 * concern adds to its depfile. Returns 0, or -1 after an error naming the
 * file. */
static int expand_own_options(int argc, char **argv, struct strv *args, struct strv *shaping)
{
	struct strv words = {0}, env = {0};
	const char *e = getenv("MTPC_COMPILE_OPTIONS");
	char *copy = xstrdup(e ? e : ""), *save = NULL;
	for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
		strv_add(&env, t);
	free(copy);
	int dashdash = 0;
	for (int i = 1; i < argc && !dashdash; i++)
		dashdash = !strcmp(argv[i], "--");
	strv_add(&words, argv[0]);
	strv_addv(&words, &env);
	/* "mtpc-compile clang ...": the compile command starts right away */
	if (env.n && !dashdash && argc > 1 && argv[1][0] != '-' && argv[1][0] != '@')
		strv_add(&words, "--");
	for (int i = 1; i < argc; i++)
		strv_add(&words, argv[i]);
	strv_free(&env);
	int r = expand_words((int)words.n, words.v, args, shaping);
	strv_free(&words);
	return r;
}

/* expand_own_options on the words in argv (its own and the environment's). */
static int expand_words(int argc, char **argv, struct strv *args, struct strv *shaping)
{
	int dd = 1;
	while (dd < argc && strcmp(argv[dd], "--") != 0)
		dd++;
	if (dd == argc)
		dd = 1; /* no "--": argv[0] alone */
	for (int i = 1; i < dd; i++)
		if (argv[i][0] == '@' && access(argv[i] + 1, R_OK) < 0) {
			mtpc_error("cannot read options file %s: %s", argv[i] + 1, strerror(errno));
			return -1;
		}
	if (rsp_expand(args, dd, argv) < 0)
		return -1;
	for (int i = 1; i < dd; i++) {
		struct strv words = {0};
		if (argv[i][0] == '@' && rsp_expand(&words, 1, argv + i) == 0 && sets_shaping_option(&words))
			strv_add(shaping, argv[i] + 1);
		strv_free(&words);
	}
	for (int i = dd; i < argc; i++)
		strv_add(args, argv[i]);
	return 0;
}

/* Whether ccache runs this process (CCACHE_PREFIX=mtpc-compile): ccache
 * stores a compile's output with its object and replays it on every hit,
 * where a progress line or "N partitions, 8.2 s" would describe a split
 * that did not run. Then mtpc-compile prints only what the compile and
 * its warnings print. */
static int under_ccache(void)
{
	char *path = xasprintf("/proc/%ld/comm", (long)getppid()), *comm = NULL;
	size_t len;
	int yes = mtpc_read_file(path, &comm, &len) == 0 && !strncmp(comm, "ccache", 6) &&
		  (comm[6] == '\n' || comm[6] == 0);
	free(comm);
	free(path);
	return yes;
}

/* The compile as given, within the machine's job budget. */
static int run_plain(char *const *cmd)
{
	struct job_token token;
	jobs_acquire(&token);
	int st = proc_run(cmd, NULL, NULL, NULL);
	jobs_release(&token);
	return st;
}

/* The partition compile of the graph's pre-link stage (graph_codegen). */
static void partition_cmd(void *ctx, const char *in, const char *out, const char *dwo_out, struct strv *cmd)
{
	compilecmd_partition(ctx, in, out, dwo_out, cmd);
}

/* Bytes of the file, 0 if none. */
static long long size_of(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long long)st.st_size : 0;
}

/* The file named by a line `#include "name"` that starts at l (spaces
 * allowed around '#'), copied into name[cap]; 0 if the line is not one.
 * By hand, not sscanf: glibc's sscanf measures the whole rest of the
 * buffer on each call, which made this scan quadratic (10 s on SQLite's
 * 8.7 MB amalgamation, longer than its compile). */
static int quoted_include(const char *l, char *name, size_t cap)
{
	while (*l == ' ' || *l == '\t')
		l++;
	if (*l++ != '#')
		return 0;
	while (*l == ' ' || *l == '\t')
		l++;
	if (strncmp(l, "include", 7) != 0)
		return 0;
	l += 7;
	while (*l == ' ' || *l == '\t')
		l++;
	if (*l++ != '"')
		return 0;
	size_t n = 0;
	while (l[n] && l[n] != '"' && l[n] != '\n')
		n++;
	if (l[n] != '"' || n == 0 || n >= cap)
		return 0;
	memcpy(name, l, n);
	name[n] = 0;
	return 1;
}

/* Whether the file at path starts like bitcode. */
static int looks_like_bitcode(const char *path)
{
	unsigned char head[4];
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(head, 1, sizeof head, f) : 0;
	if (f)
		fclose(f);
	return mtpc_is_bitcode(head, n);
}

/* The compile's cost in summary instructions, and whether it was measured:
 * the ThinLTO summary of the previous output (what the pre-link pipeline
 * made of this source last time, as mtpc-link counts a module) or a plain
 * compile's previous object's code (CODE_BYTES_PER_INST), else the
 * source's bytes, with those of the C/C++ files it includes by a quoted
 * path (a unity build's source is a list of includes), at about
 * SOURCE_BYTES_PER_INST bytes an instruction (SQLite's amalgamation: 8.7 MB,
 * 221k instructions). Headers are not counted: a first compile whose work
 * is in its headers (C++ templates) is estimated low and runs unsplit; its
 * next compile is measured from its object (a ThinLTO one's: a plain
 * compile's object has no summary).
 *
 * A plain compile does the ThinLTO compile's work and its backend's: its
 * cost is counted NATIVE_COST_FACTOR times, so that the one threshold means
 * the same time in both modes (sqlite3.c, pinned: plain -O2 -c 34.6 s CPU,
 * -O2 -flto=thin -c 16.3 s). */
#define SOURCE_BYTES_PER_INST 40
#define NATIVE_COST_FACTOR 2
/* A plain compile's previous object measures it instead: its code bytes
 * at about CODE_BYTES_PER_INST an instruction of the ThinLTO summary's count
 * (sqlite3.c: 890 KB of .text at -O2, 221k instructions), which counts the
 * code its headers gave too (googletest's unit test: 220 KB of source,
 * estimated at 5.5k instructions; 502 KB of code, 125k). */
#define CODE_BYTES_PER_INST 4
static long long compile_cost(const struct compilecmd *cc, const char *split_tool, int *measured)
{
	*measured = 0;
	const char *out = compilecmd_output(cc), *src = compilecmd_source(cc);
	/* A plain compile's object is native code: its code bytes. */
	long long code = cc->native ? elf_code_bytes(out) : -1;
	if (code > 0) {
		*measured = 1;
		return code / CODE_BYTES_PER_INST * NATIVE_COST_FACTOR;
	}
	long long insts = -1, funcs;
	int r = !cc->native && size_of(out) > 0 ? mtpc_bitcode_file_cost(out, &insts, &funcs) : 1;
	if (r == 0) {
		*measured = 1;
		return insts;
	}
	/* Bitcode the C reader cannot follow: LLVM's (bitcode_cost.h). */
	if (r < 0 && looks_like_bitcode(out)) {
		char *cmd[] = {(char *)split_tool, "--print-cost", (char *)out, NULL};
		struct buf o = {0}, err = {0};
		struct proc_io io = {.out = &o, .err = &err};
		if (proc_spawn(cmd, &io) == 0 && o.s && sscanf(o.s, "%lld", &insts) == 1 && insts >= 0)
			*measured = 1;
		buf_free(&o);
		buf_free(&err);
		if (*measured)
			return insts;
	}
	long long bytes = size_of(src);
	char *text;
	size_t len;
	if (mtpc_read_file(src, &text, &len) == 0) {
		/* #include "x.cpp" lines (CMake's unity files, amalgamation drivers) */
		char *dir = xstrdup(src), *slash = strrchr(dir, '/');
		if (slash)
			slash[1] = 0;
		else
			dir[0] = 0;
		for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			char name[PATH_MAX];
			if (quoted_include(l, name, sizeof name) &&
			    (strstr(name, ".c") || strstr(name, ".cpp") || strstr(name, ".cc") || strstr(name, ".cxx"))) {
				char *p = name[0] == '/' ? xstrdup(name) : xasprintf("%s%s", dir, name);
				bytes += size_of(p);
				free(p);
			}
		}
		free(dir);
		free(text);
	}
	return bytes / SOURCE_BYTES_PER_INST * (cc->native ? NATIVE_COST_FACTOR : 1);
}

/* How a costly compile is run: in how many partitions at most (0: whole,
 * as given), the prediction behind it (makespan_split_choice, with the work
 * other MTPC processes announced on the machine's work board), and the
 * notice this compile posts of its own predicted work. */
struct compile_plan {
	int parts;
	int cores; /* beside a busy board: the lanes it leaves (mtpc-split --cores), else 0 */
	char *why; /* "not split: ..." when held whole by the board, else NULL */
	double work_secs, span_secs, task_secs;
};

/* p split in k (k >= 2) or whole: its predicted work, span and longest task. */
static void plan_parts(struct compile_plan *p, long long cost, int k, double spc)
{
	struct split_cost sc = makespan_split_cost(cost, k);
	p->parts = k;
	p->work_secs = (double)sc.work * spc;
	p->span_secs = (double)sc.chain * spc;
	p->task_secs = (double)sc.task * spc;
}

/* The plan of a compile of this cost whose output is out; whole: it must
 * run as given whatever its cost (split DWARF without --merge-dwo). */
static struct compile_plan plan_compile(const struct inner_opts *in, const char *out, long long cost, int whole)
{
	struct compile_plan p = {0, 0, NULL, 0, 0, 0};
	double spc = GRAPH_DEFAULT_SECONDS_PER_COST;
	plan_parts(&p, cost, 0, spc);
	if (cost < in->cost_threshold || in->partitions == 1 || whole)
		return p;
	int lanes = in->slurm.on ? INNER_SLURM_PLAN_JOBS : inner_cores();
	int kmax = in->partitions > 0 ? in->partitions : lanes, jobs = in->jobs > 0 ? in->jobs : lanes;
	struct work_others board = {0};
	if (in->busy == GRAPH_BUSY_AUTO && !in->slurm.on)
		workboard_read(&board);
	/* Alone on the machine, a compile that reaches the threshold is its
	 * own long pole: split in kmax, whatever --jobs (the object must not
	 * depend on it: docs/build-integration.md, "Determinism"). */
	if (!board.count) {
		plan_parts(&p, cost, kmax, spc);
		return p;
	}
	/* Split last time: it stays split unless that lengthens the prediction
	 * (makespan_split_choice), so that small changes of the load do not flip
	 * the object's form at every build. */
	char *last = xasprintf("%s.mtpc/build.ninja", out);
	int was_split = access(last, F_OK) == 0;
	free(last);
	struct outside_load load = makespan_outside_load(&board, spc);
	struct split_choice ch = makespan_split_choice(cost, 0, 0, 1, jobs, &load, kmax, was_split);
	plan_parts(&p, cost, ch.parts, spc);
	/* the whole lanes the load leaves it, at least one */
	p.cores = (int)makespan_free_lanes(&load, jobs);
	p.cores = p.cores < 1 ? 1 : p.cores;
	if (ch.parts < 2) {
		char *busy = makespan_busy_reason(-1, board.count, 0, &ch, spc);
		p.why = xasprintf("not split: %s", busy);
		free(busy);
	}
	return p;
}

/* The frontend into <inner>/front.bc, written only if changed. Returns the
 * compile's status (its messages are the user's: shown as they come). */
static int run_frontend(const struct compilecmd *cc, const char *inner, const char *front)
{
	char *tmp = xasprintf("%s.tmp", front);
	struct strv cmd = {0};
	compilecmd_frontend(cc, tmp, &cmd);
	struct job_token token;
	jobs_acquire(&token);
	int st = proc_run(cmd.v, NULL, NULL, NULL);
	jobs_release(&token);
	if (st == 0 && mtpc_copy_file(tmp, front, MTPC_WRITE_IF_CHANGED) < 0)
		st = 1;
	unlink(tmp);
	strv_free(&cmd);
	free(tmp);
	(void)inner;
	return st;
}

/* Split this compile (cores: graph_conf.split_cores): returns its exit
 * status, or -1 when it cannot go through MTPC (after one warning: the
 * caller compiles unsplit). */
static int run_split(const struct inner_launcher_opts *o, const struct compilecmd *cc, const char *self, const char *split_tool,
		     long long cost, int measured, double t0, int silent, int cores)
{
	const char *out = compilecmd_output(cc);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return -1;
	char *inner = out[0] == '/' ? xasprintf("%s.mtpc", out) : xasprintf("%s/%s.mtpc", cwd, out);
	char *front = xasprintf("%s/front.bc", inner);
	int status = -1;
	if (mtpc_mkdir_p(inner) < 0) {
		mtpc_warn("cannot create %s (%s); compiling %s unsplit", inner, strerror(errno), out);
		goto done;
	}
	/* The frontend's errors are the compile's own: no fallback then. */
	double front_start = mtpc_now();
	int st = run_frontend(cc, inner, front);
	double front_end = mtpc_now();
	if (st != 0) {
		status = st;
		goto done;
	}
	struct graph_conf gc = {.self = self, .split_tool = split_tool, .inner = inner, .outer_cwd = cwd};
	inner_conf(&gc, &o->in);
	gc.prefix = "";
	gc.split_cores = cores;
	struct graph g = {0};
	struct module *m = graph_add_module(&g, &gc, front, front, NULL);
	free(m->name); /* named for people by the compile's output */
	m->name = xstrdup(mtpc_base_name(out));
	m->split = 1;
	m->cost = cost;
	m->measured = measured;
	m->why = xasprintf("split: cost %lld instructions (%s) >= %lld", cost, measured ? "measured" : "estimated",
			   gc.cost_threshold);
	struct graph_codegen cg = {.stage = cc->native ? STAGE_NATIVE : STAGE_PRELINK,
				   .partition_cmd = partition_cmd, .partition_ctx = (void *)cc, .gz = cc->gz,
				   .split_dwarf = cc->split_dwarf};
	/* The join's or merge's fallback: the plain compile into its output
	 * (the frontend wrote the depfile already). */
	char *native = graph_native(m);
	char *native_abs = xasprintf("%s/%s", inner, native);
	/* With split DWARF its units go to native.dwo beside it, named by the
	 * skeleton as the compile's own .dwo (the merge's result, too). */
	char *native_dwo = cc->split_dwarf ? xasprintf("%.*s.dwo", (int)strlen(native_abs) - 2, native_abs) : NULL;
	char *dwo = compilecmd_dwo(cc);
	for (size_t i = 0; i < cc->args.n; i++) {
		if ((int)i == cc->out)
			strv_addown(&cg.fallback, cc->out_joined ? xasprintf("-o%s", native_abs) : xstrdup(native_abs));
		else
			strv_add(&cg.fallback, cc->args.v[i]);
	}
	compilecmd_split_dwarf_flags(cc, native_dwo, &cg.fallback);
	/* Its depfile names the real output too, as the frontend's does. */
	if (cc->deps && !cc->deps_target)
		strv_addl(&cg.fallback, "-MT", out, NULL);
	graph_rules(&g.ninja, "mtpc-compile");
	int r = graph_emit_split(&g.ninja, &gc, &cg, m, gc.kmax, NULL);
	buf_printf(&g.ninja, "\ndefault ");
	r |= nw_path(&g.ninja, native);
	buf_addc(&g.ninja, '\n');
	/* Opened once here for its one warning: the steps then keep quiet. */
	mtpc_cache_close(inner_open_cache(o->in.cache, "compile"));
	if (r == 0 && graph_write(&gc, &g) == 0) {
		struct inner_build b = {.dir = inner, .name = mtpc_base_name(out), .plan_jobs = gc.jobs,
					.quiet = o->quiet || silent, .graph = &g, .pre_kind = "frontend",
					.pre_key = m->key, .pre_start = front_start, .pre_end = front_end};
		/* The .dwo before the object that names it. */
		if (inner_run(&o->in, &b) == 0 &&
		    (!dwo || access(native_dwo, F_OK) != 0 || mtpc_copy_file(native_dwo, dwo, MTPC_WRITE_IF_CHANGED) == 0) &&
		    mtpc_copy_file(native_abs, out, MTPC_WRITE_IF_CHANGED) == 0) {
			/* Written only if changed, but the outer build must see that
			 * the compile ran: else it reruns it at every build. */
			utimensat(AT_FDCWD, out, NULL, 0);
			int n = graph_split_result(gc.inner, m, NULL);
			char parts[32];
			snprintf(parts, sizeof parts, "%d partition%s", n, n == 1 ? "" : "s");
			if (!silent)
				printf("mtpc-compile: %s: %s, cost %lld instructions%s, %.2f s\n",
				       mtpc_base_name(out), n > 0 ? parts : "unsplit (fallback)", cost,
				       measured ? " (measured)" : " (estimated)", mtpc_now() - t0);
			fflush(stdout);
			status = 0;
		} else {
			mtpc_warn("the split compile of %s failed; compiling it unsplit", out);
		}
	}
	free(native);
	free(native_abs);
	free(native_dwo);
	free(dwo);
	strv_free(&cg.fallback);
	graph_free(&g);
done:
	free(front);
	free(inner);
	return status;
}

int main(int argc, char **argv)
{
	mtpc_set_progname("mtpc-compile");
	if (argc > 1 && steps_is_step(argv[1]))
		return steps_main(argc, argv);
	double t0 = mtpc_now();
	struct strv args = {0}, shaping = {0};
	struct inner_launcher_opts o = {0};
	if (expand_own_options(argc, argv, &args, &shaping) < 0 || parse_opts(&o, (int)args.n, args.v) < 0) {
		inner_opts_free(&o.in);
		strv_free(&args);
		strv_free(&shaping);
		return 2;
	}
	struct compilecmd cc;
	struct work_notice notice = WORK_NOTICE_INIT;
	int status = -1, concerned = 0;
	int parsed = compilecmd_parse(&cc, o.ncmd, o.cmd) == 0;
	if (parsed && !cc.why_not) {
		char *self = proc_self_path();
		char *split = o.in.split_tool ? xstrdup(o.in.split_tool) : inner_find_split_tool(self ? self : argv[0]);
		int measured;
		long long cost = compile_cost(&cc, split, &measured);
		/* Costly enough: the options decide this compile's object (split,
		 * in how many, or held whole by --partitions 1, busy cores, or
		 * split DWARF without --merge-dwo). */
		concerned = cost >= o.in.cost_threshold;
		/* A -gsplit-dwarf compile's split gives one unit per partition in
		 * its .dwo, which gdb reads but llvm-dwp -e does not (docs: "Plain
		 * compiles"): as given unless asked, and then quietly. */
		int dwo_held = cc.split_dwarf && !o.in.merge_dwo;
		struct compile_plan plan = plan_compile(&o.in, compilecmd_output(&cc), cost, dwo_held);
		int silent = under_ccache();
		/* Announced for the other links and compiles' choices. */
		if (o.in.busy == GRAPH_BUSY_AUTO)
			workboard_post(&notice, plan.work_secs, plan.span_secs, plan.task_secs);
		if (plan.why && !o.quiet && !silent) {
			printf("mtpc-compile: %s: %s\n", mtpc_base_name(compilecmd_output(&cc)), plan.why);
			fflush(stdout);
		}
		if (plan.parts >= 2) {
			o.in.partitions = plan.parts;
			char *plugin = inner_find_fold_plugin(split);
			cc.fold_plugin = plugin;
			status = run_split(&o, &cc, self ? self : argv[0], split, cost, measured, t0, silent,
					   plan.cores);
			cc.fold_plugin = NULL;
			free(plugin);
		}
		free(plan.why);
		free(self);
		free(split);
	}
	if (status < 0)
		status = run_plain(o.cmd); /* exactly the compile as given */
	workboard_withdraw(&notice);
	/* The options files become this compile's dependencies: the outer build
	 * reruns it, and no compile they do not concern, when they change. */
	char *depfile = concerned && status == 0 && shaping.n ? compilecmd_depfile(&cc) : NULL;
	if (depfile)
		depfile_add(depfile, shaping.v);
	free(depfile);
	compilecmd_free(&cc);
	inner_opts_free(&o.in);
	strv_free(&args);
	strv_free(&shaping);
	return status;
}
