/* mtpc-split: split one (post-import) LLVM module into call-graph partitions.
 * See usage() and docs/splitter.md. */
#define _POSIX_C_SOURCE 200809L
#include "analyze.h"
#include "bitcode.h"
#include "buf.h"
#include "emit.h"
#include "hash.h"
#include "ipo.h"
#include "mtpc_cache.h"
#include "llvm_shim.h"
#include "partition.h"
#include "plan.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Support.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VERSION "0.1.0"
/* The major version of the LLVM MTPC is built against (CMake: MTPC_LLVM_VERSION). */
#define STR_(x) #x
#define STR(x) STR_(x)
#define LLVM_MAJOR STR(MTPC_LLVM_MAJOR)
/* Bumped whenever the partitioning or the partitions' content changes, so that
 * earlier plans and outputs are not reused (20: whole-module interprocedural
 * passes before the split, ipo.h; --join-growth 0.1 by default; 21: units of
 * variables only go where the code that reads them is, partition.c; 22: users
 * of several names of one object live with them, analyze.c). */
#define ALGORITHM 22

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mtpc-split INPUT.bc -o OUTDIR [options]\n"
		"       mtpc-split --print-cost FILE.o...\n"
		"       mtpc-split --print-visibility FILE.o... [-o LIST]\n"
		"\n"
		"Split an LLVM " LLVM_MAJOR " bitcode module into call-graph partitions that can be\n"
		"optimized and compiled separately and merged back with `ld.lld -r`.\n"
		"Writes OUTDIR/p0.bc .. p<n-1>.bc (n <= N), OUTDIR/plan.json and\n"
		"OUTDIR/localize.txt (symbols to make local after the merge, for\n"
		"`llvm-objcopy --localize-symbols`) and OUTDIR/rename.txt (their original\n"
		"names, for `--redefine-syms`). Files are replaced atomically and only\n"
		"when their content changes.\n"
		"\n"
		"options:\n"
		"  -o, --output DIR          output directory (created if missing)\n"
		"  -n, --partitions N        at most N partitions (default: number of CPUs)\n"
		"      --min-cost C          use fewer partitions if each would cost less than\n"
		"                            C instructions (default 0: as many as allowed)\n"
		"      --thinlto-index FILE  INPUT is a ThinLTO object and FILE its index from\n"
		"                            `--thinlto-index-only`: run the ThinLTO import\n"
		"                            in-process first, then split the result\n"
		"      --relocation-model M  static or pic: the final link's model, used by\n"
		"                            the import (-shared/-pie links are pic; default static)\n"
		"      --emit-imported FILE  also write the post-import module to FILE\n"
		"      --copy-limit I        largest function, in instructions, that a partition\n"
		"                            may get an available_externally copy of (default 60)\n"
		"      --copy-budget F       copies per partition as a fraction of its own cost\n"
		"                            (default 0.10)\n"
		"      --critical-copy-budget F\n"
		"                            the same for the costliest partition, the critical\n"
		"                            path; no other partition's copies take it past that\n"
		"                            one (default 0.04)\n"
		"      --dup-limit I         largest linkonce_odr comdat, in instructions, that\n"
		"                            every partition using it carries (default 200)\n"
		"      --const-dup-limit B   largest static constant, in bytes, that every\n"
		"                            partition reading it carries; a bigger one is\n"
		"                            defined once and the others get an\n"
		"                            available_externally copy, so loads from it still\n"
		"                            fold but its data is not duplicated (default 64)\n"
		"      --local-dup-limit I   largest static function, in instructions, that every\n"
		"                            partition calling it carries instead of a promoted\n"
		"                            symbol, so each can inline it (default 0: off;\n"
		"                            see docs/splitter.md for why)\n"
		"      --local-dup-budget F  extra work those duplicates may add, as a fraction\n"
		"                            of the module; smallest first, the rest are promoted\n"
		"                            (default 0.03)\n"
		"      --join-limit I        largest static function, in instructions, kept with\n"
		"                            its only caller while that caller's unit stays under\n"
		"                            1/16 of the module (default 300)\n"
		"      --join-growth F       past that, a unit may still take its single-caller\n"
		"                            statics up to F times its own cost: the inlining of\n"
		"                            the unsplit build, at the price of a bigger critical\n"
		"                            partition (default 0.1; see docs/splitter.md)\n"
		"      --scc-cut F           a call-graph cycle (SCC) costing more than F times a\n"
		"                            partition's share (module / N) is cut into its\n"
		"                            functions, so that it cannot hold up the balance;\n"
		"                            the rest stay whole (default 1; 0: never cut)\n"
		"      --no-ipo              do not run the whole-module interprocedural passes\n"
		"                            first (constants propagated into internal\n"
		"                            functions, nounwind and memory effects inferred,\n"
		"                            dead arguments removed): partitions then lose what\n"
		"                            the unsplit backend derives from the whole module\n"
		"                            (mtpc-link passes it for -O0 links)\n"
		"      --weights W,W,...     relative target sizes of the partitions, the first the\n"
		"                            largest (e.g. 57,43: mtpc-link gives a partition\n"
		"                            that will start behind another module's backend\n"
		"                            less work); default: equal\n"
		"      --balance-slack F     allowed overshoot of the ideal partition cost\n"
		"                            (default 0.02)\n"
		"      --seed-plan FILE      keep functions where this earlier plan put them\n"
		"                            (default: OUTDIR/plan.json if its options match)\n"
		"      --no-seed             ignore earlier plans\n"
		"      --cache FILE          plan cache (SQLite); default: $MTPC_CACHE, else\n"
		"                            $XDG_CACHE_HOME/mtpc/plans.sqlite, else\n"
		"                            ~/.cache/mtpc/plans.sqlite (`mtpc-cache path`).\n"
		"                            An exact hit reuses the stored assignment; a miss\n"
		"                            is seeded from the module's previous plan and its\n"
		"                            measured partition times\n"
		"      --no-cache            do not use the plan cache\n"
		"      --module-path NAME    the module's name in the cache (default: INPUT)\n"
		"  -j, --jobs J              partitions built at once (default: number of CPUs)\n"
		"      --emit-with W         how: 'threads' (the module is written to bitcode\n"
		"                            once and each thread reads what its partition\n"
		"                            needs: least CPU), 'processes' (one forked\n"
		"                            process per partition copies its part of the\n"
		"                            module: more CPU in all, but nothing left serial),\n"
		"                            or 'auto' (default): processes from -j 4 on.\n"
		"                            A module with a blockaddress, and from LLVM 21 on\n"
		"                            one with debug info, always uses threads\n"
		"      --placeholder-checksums  give source files in the partitions a\n"
		"                            placeholder checksum that no edit changes and\n"
		"                            write OUTDIR/checksums.txt ('PLACEHOLDER REAL'\n"
		"                            hex MD5s, one file a line) to restore the real\n"
		"                            ones in the compiled objects (mtpc-link's merge)\n"
		"      --virtual-lines       number the source lines in each partition so that\n"
		"                            lines added or removed outside its own functions\n"
		"                            and types do not change it, and write\n"
		"                            OUTDIR/lines.txt ('P VIRTUAL FIRST COUNT': in\n"
		"                            partition P, virtual lines VIRTUAL.. are real\n"
		"                            lines FIRST..FIRST+COUNT-1) to restore the real\n"
		"                            ones in the compiled objects (mtpc-link's merge)\n"
		"      --verify              run the LLVM verifier on each partition (default)\n"
		"      --no-verify           skip the verifier\n"
		"      --stats               print a summary on stderr: one line with the time\n"
		"                            of each phase, one with the serial time (all but\n"
		"                            the emission, with the time spent starting\n"
		"                            processes), the emission's wall time and its\n"
		"                            threads or processes, and each partition's\n"
		"                            emission CPU time ('serial S s + emit E s wall on\n"
		"                            T threads|processes; emit CPU by partition (s):\n"
		"                            C0 C1 ...')\n"
		"  -h, --help                this help\n"
		"      --version             print the version\n"
		"      --print-visibility    do not split: for the FILEs (bitcode, or @LIST:\n"
		"                            the paths in file LIST, one a line), print\n"
		"                            'hidden NAME' or 'protected NAME' for each symbol\n"
		"                            their symbol tables give that visibility (the\n"
		"                            most constraining when they disagree), sorted,\n"
		"                            on stdout or into the file -o names; mtpc-link\n"
		"                            uses it for the final link's visibilities\n"
		"      --print-cost          do not split: for each FILE (ThinLTO objects),\n"
		"                            print 'INSTRUCTIONS FUNCTIONS FILE' from its\n"
		"                            summary ('- - FILE' without one), on stdout or\n"
		"                            into the file -o names; mtpc-link uses it to\n"
		"                            choose which modules to split\n"
		"\n"
		"Exit status: 0 on success; 1 on any error, reported in one line naming the\n"
		"file; 3 when --thinlto-index is an empty index (lld writes one for an\n"
		"archive member the link does not pull in): nothing to split. On error\n"
		"and on 3 the output directory keeps what it had.\n");
}

/* --emit-with: how partitions are built (emit.h has both ways). */
enum { EMIT_WITH_AUTO, EMIT_WITH_THREADS, EMIT_WITH_PROCESSES };

struct options {
	const char *input, *outdir, *index, *imported, *seed_plan, *cache, *module_path;
	int partitions, jobs, verify, pic, use_seed, stats, no_cache, print_cost, print_visibility;
	int debug; /* EMIT_* */
	int ipo; /* run the whole-module interprocedural passes first (ipo.h) */
	int emit_with; /* EMIT_WITH_*: how the partitions are built */
	char **inputs; /* --print-cost, --print-visibility: every operand */
	int ninputs;
	char **input_list, *input_text; /* the inputs read from @LIST (heap), or NULL */
	long min_cost, copy_limit, dup_limit, join_limit, local_dup_limit, const_dup_limit;
	double join_growth, scc_cut;
	double copy_budget, crit_copy_budget, slack, local_dup_budget;
	double *weights; /* --weights, or NULL */
	int nweights;
};

static long parse_long(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi)
		mtpc_fatal("%s: expected an integer in [%ld, %ld], got '%s'", opt, lo, hi, s);
	return v;
}

static double parse_double(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || end == s || !(v >= lo && v <= hi))
		mtpc_fatal("%s: expected a number in [%g, %g], got '%s'", opt, lo, hi, s);
	return v;
}

/* --weights: positive numbers separated by commas. */
static void parse_weights(const char *s, struct options *o)
{
	free(o->weights);
	o->weights = NULL;
	o->nweights = 0;
	for (const char *p = s;;) {
		char *end;
		errno = 0;
		double w = strtod(p, &end);
		if (end == p || errno || !(w > 0 && w < 1e9) || (*end && *end != ','))
			mtpc_fatal("--weights: expected positive numbers separated by commas, got '%s'", s);
		if (o->nweights == 4096)
			mtpc_fatal("--weights: more than 4096 weights");
		o->weights = xrealloc(o->weights, (o->nweights + 1) * sizeof *o->weights);
		o->weights[o->nweights++] = w;
		if (!*end)
			break;
		p = end + 1;
	}
}

static int ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* The operands of --print-cost/--print-visibility from @LIST: one path a
 * line (a link's module list can be longer than a command line). The list's
 * text stays allocated until exit, like argv. */
static void read_input_list(const char *path, struct options *o)
{
	char *text;
	size_t len;
	if (mtpc_read_file(path, &text, &len) < 0)
		mtpc_fatal("%s: cannot read: %s", path, strerror(errno));
	o->inputs = NULL;
	o->ninputs = 0;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!*line)
			continue;
		o->inputs = xrealloc(o->inputs, (o->ninputs + 1) * sizeof *o->inputs);
		o->inputs[o->ninputs++] = line;
	}
	o->input_list = o->inputs;
	o->input_text = text;
}

static void parse_args(int argc, char **argv, struct options *o)
{
	enum { O_MIN_COST = 256, O_INDEX, O_RELOC, O_IMPORTED, O_COPY_LIMIT, O_COPY_BUDGET, O_CRIT_COPY_BUDGET, O_DUP_LIMIT,
	       O_SLACK, O_JOIN_LIMIT, O_JOIN_GROWTH, O_SCC_CUT, O_LOCAL_DUP_LIMIT, O_LOCAL_DUP_BUDGET, O_CONST_DUP_LIMIT, O_WEIGHTS, O_SEED_PLAN, O_NO_SEED, O_VERIFY, O_NO_VERIFY, O_STATS, O_CACHE, O_NO_CACHE, O_MODULE_PATH, O_VERSION, O_PRINT_COST, O_PRINT_VISIBILITY, O_PLACEHOLDERS, O_VIRTUAL_LINES, O_NO_IPO, O_EMIT_WITH };
	static const struct option longopts[] = {
		{"output", required_argument, 0, 'o'},
		{"partitions", required_argument, 0, 'n'},
		{"jobs", required_argument, 0, 'j'},
		{"help", no_argument, 0, 'h'},
		{"min-cost", required_argument, 0, O_MIN_COST},
		{"thinlto-index", required_argument, 0, O_INDEX},
		{"relocation-model", required_argument, 0, O_RELOC},
		{"emit-imported", required_argument, 0, O_IMPORTED},
		{"copy-limit", required_argument, 0, O_COPY_LIMIT},
		{"copy-budget", required_argument, 0, O_COPY_BUDGET},
		{"critical-copy-budget", required_argument, 0, O_CRIT_COPY_BUDGET},
		{"dup-limit", required_argument, 0, O_DUP_LIMIT},
		{"balance-slack", required_argument, 0, O_SLACK},
		{"join-limit", required_argument, 0, O_JOIN_LIMIT},
		{"scc-cut", required_argument, 0, O_SCC_CUT},
		{"join-growth", required_argument, 0, O_JOIN_GROWTH},
		{"local-dup-limit", required_argument, 0, O_LOCAL_DUP_LIMIT},
		{"local-dup-budget", required_argument, 0, O_LOCAL_DUP_BUDGET},
		{"const-dup-limit", required_argument, 0, O_CONST_DUP_LIMIT},
		{"weights", required_argument, 0, O_WEIGHTS},
		{"seed-plan", required_argument, 0, O_SEED_PLAN},
		{"no-seed", no_argument, 0, O_NO_SEED},
		{"verify", no_argument, 0, O_VERIFY},
		{"no-verify", no_argument, 0, O_NO_VERIFY},
		{"stats", no_argument, 0, O_STATS},
		{"cache", required_argument, 0, O_CACHE},
		{"no-cache", no_argument, 0, O_NO_CACHE},
		{"module-path", required_argument, 0, O_MODULE_PATH},
		{"version", no_argument, 0, O_VERSION},
		{"print-cost", no_argument, 0, O_PRINT_COST},
		{"print-visibility", no_argument, 0, O_PRINT_VISIBILITY},
		{"placeholder-checksums", no_argument, 0, O_PLACEHOLDERS},
		{"virtual-lines", no_argument, 0, O_VIRTUAL_LINES},
		{"no-ipo", no_argument, 0, O_NO_IPO},
		{"emit-with", required_argument, 0, O_EMIT_WITH},
		{0, 0, 0, 0},
	};
	*o = (struct options){.partitions = ncpus(), .jobs = ncpus(), .verify = 1, .use_seed = 1, .ipo = 1,
			      .copy_limit = 60, .dup_limit = 200, .join_limit = 300, .local_dup_limit = 0, .const_dup_limit = 64, .join_growth = 0.1, .copy_budget = 0.10, .crit_copy_budget = 0.04, .slack = 0.02, .scc_cut = 1.0,
			      .local_dup_budget = 0.03};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:n:j:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->outdir = optarg; break;
		case 'n': o->partitions = (int)parse_long("--partitions", optarg, 1, 4096); break;
		case 'j': o->jobs = (int)parse_long("--jobs", optarg, 1, 4096); break;
		case 'h': usage(stdout); exit(0);
		case O_MIN_COST: o->min_cost = parse_long("--min-cost", optarg, 0, 1L << 40); break;
		case O_INDEX: o->index = optarg; break;
		case O_RELOC:
			if (strcmp(optarg, "pic") && strcmp(optarg, "static"))
				mtpc_fatal("--relocation-model: expected 'static' or 'pic', got '%s'", optarg);
			o->pic = strcmp(optarg, "pic") == 0;
			break;
		case O_IMPORTED: o->imported = optarg; break;
		case O_COPY_LIMIT: o->copy_limit = parse_long("--copy-limit", optarg, 0, 1L << 30); break;
		case O_COPY_BUDGET: o->copy_budget = parse_double("--copy-budget", optarg, 0, 10); break;
		case O_CRIT_COPY_BUDGET:
			o->crit_copy_budget = parse_double("--critical-copy-budget", optarg, 0, 10);
			break;
		case O_DUP_LIMIT: o->dup_limit = parse_long("--dup-limit", optarg, 0, 1L << 30); break;
		case O_SLACK: o->slack = parse_double("--balance-slack", optarg, 0, 10); break;
		case O_JOIN_LIMIT: o->join_limit = parse_long("--join-limit", optarg, 0, 1L << 30); break;
		case O_JOIN_GROWTH: o->join_growth = parse_double("--join-growth", optarg, 0, 100); break;
		case O_SCC_CUT: o->scc_cut = parse_double("--scc-cut", optarg, 0, 1000); break;
		case O_LOCAL_DUP_BUDGET:
			o->local_dup_budget = parse_double("--local-dup-budget", optarg, 0, 10);
			break;
		case O_LOCAL_DUP_LIMIT:
			o->local_dup_limit = parse_long("--local-dup-limit", optarg, 0, 1L << 30);
			break;
		case O_CONST_DUP_LIMIT:
			o->const_dup_limit = parse_long("--const-dup-limit", optarg, 0, 1L << 40);
			break;
		case O_WEIGHTS: parse_weights(optarg, o); break;
		case O_SEED_PLAN: o->seed_plan = optarg; break;
		case O_NO_SEED: o->use_seed = 0; break;
		case O_VERIFY: o->verify = 1; break;
		case O_NO_VERIFY: o->verify = 0; break;
		case O_STATS: o->stats = 1; break;
		case O_CACHE: o->cache = optarg; break;
		case O_NO_CACHE: o->no_cache = 1; break;
		case O_MODULE_PATH: o->module_path = optarg; break;
		case O_PRINT_COST: o->print_cost = 1; break;
		case O_PRINT_VISIBILITY: o->print_visibility = 1; break;
		case O_PLACEHOLDERS: o->debug |= EMIT_PLACEHOLDER_CHECKSUMS; break;
		case O_VIRTUAL_LINES: o->debug |= EMIT_VIRTUAL_LINES; break;
		case O_NO_IPO: o->ipo = 0; break;
		case O_EMIT_WITH:
			if (!strcmp(optarg, "auto"))
				o->emit_with = EMIT_WITH_AUTO;
			else if (!strcmp(optarg, "threads"))
				o->emit_with = EMIT_WITH_THREADS;
			else if (!strcmp(optarg, "processes"))
				o->emit_with = EMIT_WITH_PROCESSES;
			else
				mtpc_fatal("--emit-with: expected 'auto', 'threads' or 'processes', got '%s'", optarg);
			break;
		case O_VERSION: printf("mtpc-split " VERSION " (LLVM " LLVM_MAJOR ")\n"); exit(0);
		case ':': mtpc_fatal("option '%s' needs an argument (see --help)", argv[optind - 1]);
		default: mtpc_fatal("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	o->inputs = argv + optind;
	o->ninputs = argc - optind;
	if (o->print_cost && o->print_visibility)
		mtpc_fatal("--print-cost and --print-visibility: choose one");
	if (o->print_cost || o->print_visibility) {
		if (o->ninputs == 1 && o->inputs[0][0] == '@')
			read_input_list(o->inputs[0] + 1, o);
		if (!o->ninputs)
			mtpc_fatal("%s: no input file (see --help)", o->print_cost ? "--print-cost" : "--print-visibility");
		return;
	}
	if (optind < argc)
		o->input = argv[optind++];
	if (optind < argc)
		mtpc_fatal("unexpected argument '%s' (one input only; see --help)", argv[optind]);
	if (!o->input)
		mtpc_fatal("no input file (see --help)");
	if (!o->outdir)
		mtpc_fatal("no output directory: use -o DIR (see --help)");
}

/* The module being split and, once something asks for them, its bitcode
 * bytes: only the thread emission (each thread reads its partition back from
 * them) and a one-partition split that is the module itself need them. */
struct module_bytes {
	LLVMModuleRef m;
	char *bc;   /* heap: the input file's bytes, then m's bitcode once serialized */
	size_t len;
	int valid;  /* bc is m's bitcode (no import or pass changed m since) */
};

/* Serialize mb->m unless mb->bc is its bitcode already. */
static void module_bitcode(struct module_bytes *mb)
{
	if (mb->valid)
		return;
	LLVMMemoryBufferRef buf = LLVMWriteBitcodeToMemoryBuffer(mb->m);
	free(mb->bc);
	mb->len = LLVMGetBufferSize(buf);
	mb->bc = xmalloc(mb->len);
	memcpy(mb->bc, LLVMGetBufferStart(buf), mb->len);
	LLVMDisposeMemoryBuffer(buf);
	mb->valid = 1;
}

/* Read the input file into *bc / *len (heap), or exit with an error. */
static void read_input(const struct options *o, char **bc, size_t *len)
{
	if (mtpc_read_file(o->input, bc, len) < 0)
		mtpc_fatal("%s: cannot read: %s", o->input, strerror(errno));
	if (!mtpc_is_bitcode(*bc, *len))
		mtpc_fatal("%s: not an LLVM bitcode file", o->input);
}

/* Hash one piece, prefixed by its length so that pieces cannot run together. */
static void hash_piece(mtpc_hasher *h, const void *data, size_t len)
{
	uint64_t n = len;
	mtpc_hasher_update(h, &n, sizeof n);
	mtpc_hasher_update(h, data, len);
}

/* The key of the split's input, taken before anything is parsed, so that a
 * rerun whose outputs are current stops at once: the LLVM version (whose
 * import and passes make the module), the input's bytes and, with
 * --thinlto-index, the index's bytes. Those hold the content hash of every
 * module the import reads; a module listed without one (hash 0) adds its
 * own bytes. The same key thus means the same module to split. */
static void input_key(const struct options *o, const char *bc, size_t len, char hex[MTPC_HASH_HEX_LEN + 1])
{
	unsigned major, minor, patch;
	LLVMGetVersion(&major, &minor, &patch);
	char *tag = xasprintf("mtpc-split input key 1, LLVM %u.%u.%u", major, minor, patch);
	mtpc_hasher *h = mtpc_hasher_new();
	hash_piece(h, tag, strlen(tag));
	free(tag);
	hash_piece(h, bc, len);
	if (o->index) {
		char *ib, **unhashed, *err = NULL;
		size_t ilen;
		if (mtpc_read_file(o->index, &ib, &ilen) < 0)
			mtpc_fatal("%s: cannot read: %s", o->index, strerror(errno));
		hash_piece(h, ib, ilen);
		free(ib);
		if (mtpc_index_unhashed_modules(o->index, &unhashed, &err) < 0)
			mtpc_fatal("%s", err);
		for (char **p = unhashed; *p; p++) {
			char *mb;
			size_t mlen;
			hash_piece(h, *p, strlen(*p));
			/* One the import cannot read either: it fails with the reason. */
			if (strcmp(*p, o->input) != 0 && mtpc_read_file(*p, &mb, &mlen) == 0) {
				hash_piece(h, mb, mlen);
				free(mb);
			}
			free(*p);
		}
		free(unhashed);
	}
	mtpc_hasher_finish(h, hex);
}

/* Load mb->m from the input file's bytes (mb->bc), run the import
 * (--thinlto-index) and the whole-module passes unless --no-ipo (*ipo_secs:
 * their time). mb->valid stays set while mb->bc is still its bitcode. */
static void load_input(const struct options *o, LLVMContextRef ctx, char **diag, struct module_bytes *mb,
		       double *ipo_secs)
{
	if (o->index) {
		char *err = NULL;
		int st = mtpc_thin_import(ctx, o->input, o->index, o->pic, &mb->m, &err);
		if (st < 0)
			mtpc_fatal("%s", err ? err : "ThinLTO import failed");
		if (st > 0) {
			/* Not an error, but nothing to split: say so in the exit status. */
			fprintf(stderr, "mtpc-split: %s: not used by the link (%s holds no module); nothing written\n",
				o->input, o->index);
			free(mb->bc);
			exit(3);
		}
		/* The bitcode writer keeps global order, so the imported module can
		 * be analysed as is; each partition thread checks that its copy
		 * enumerates the same names (emit.c). */
		mb->valid = 0;
		if (o->imported) {
			module_bitcode(mb);
			if (mtpc_write_file(o->imported, mb->bc, mb->len, MTPC_WRITE_IF_CHANGED) < 0)
				mtpc_fatal("%s: cannot write: %s", o->imported, strerror(errno));
		}
	} else {
		LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(mb->bc, mb->len, o->input, 0);
		int bad = LLVMParseBitcodeInContext2(ctx, buf, &mb->m);
		LLVMDisposeMemoryBuffer(buf);
		if (bad)
			mtpc_fatal("%s: invalid or unsupported bitcode (LLVM " LLVM_MAJOR " expected): %s", o->input,
				   *diag ? *diag : "unknown error");
	}
	if (o->ipo) {
		double t0 = mtpc_now();
		char *err = NULL;
		if (ipo_run(mb->m, &err) < 0)
			mtpc_fatal("%s: %s", o->input, err);
		mb->valid = 0;
		*ipo_secs = mtpc_now() - t0;
	}
}

static char *path_in(const char *dir, const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static void write_or_die(const char *path, const void *data, size_t len);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* OUTDIR/checksums.txt: the sorted union of the partitions' placeholder
 * lines (each partition lists the files it refers to). */
static void write_checksums(const char *outdir, struct emitted *parts, int n)
{
	struct strv lines = {0};
	for (int p = 0; p < n; p++) {
		char *save = NULL;
		for (char *l = parts[p].checksums ? strtok_r(parts[p].checksums, "\n", &save) : NULL; l;
		     l = strtok_r(NULL, "\n", &save))
			strv_add(&lines, l);
		free(parts[p].checksums);
		parts[p].checksums = NULL;
	}
	if (lines.n)
		qsort(lines.v, lines.n, sizeof *lines.v, cmp_str);
	struct buf b = {0};
	for (size_t i = 0; i < lines.n; i++)
		if (i == 0 || strcmp(lines.v[i], lines.v[i - 1]) != 0)
			buf_printf(&b, "%s\n", lines.v[i]);
	char *path = path_in(outdir, "checksums.txt");
	write_or_die(path, b.s ? b.s : "", b.len);
	free(path);
	buf_free(&b);
	strv_free(&lines);
}

/* OUTDIR/lines.txt: each partition's map of virtual to real lines, its
 * lines prefixed with its number. */
static void write_lines(const char *outdir, struct emitted *parts, int n)
{
	struct buf b = {0};
	for (int p = 0; p < n; p++) {
		char *save = NULL;
		for (char *l = parts[p].lines ? strtok_r(parts[p].lines, "\n", &save) : NULL; l;
		     l = strtok_r(NULL, "\n", &save))
			buf_printf(&b, "%d %s\n", p, l);
		free(parts[p].lines);
		parts[p].lines = NULL;
	}
	char *path = path_in(outdir, "lines.txt");
	write_or_die(path, b.s ? b.s : "", b.len);
	free(path);
	buf_free(&b);
}

/* The debug-info maps (checksums.txt, lines.txt) and the EMIT_* flag that
 * asks for each: a map is there exactly when its flag is set. */
static const struct {
	const char *name;
	int flag;
} debug_maps[] = {{"checksums.txt", EMIT_PLACEHOLDER_CHECKSUMS}, {"lines.txt", EMIT_VIRTUAL_LINES}};

/* True if dir already holds the outputs for exactly this input and options. */
static int outputs_current(const char *dir, const char *input_hash, const char *options_hash,
			   int debug)
{
	char *pp = path_in(dir, "plan.json"), *text;
	size_t len;
	int ok = 0;
	if (mtpc_read_file(pp, &text, &len) == 0) {
		struct plan_seed s;
		char *err = NULL;
		if (plan_seed_parse(text, &s, &err) == 0) {
			ok = strcmp(s.input_hash, input_hash) == 0 && strcmp(s.options_hash, options_hash) == 0;
			for (int p = 0; ok && p < s.npartitions; p++) {
				char *name = xasprintf("%s/p%d.bc", dir, p);
				ok = access(name, R_OK) == 0;
				free(name);
			}
			char *lp = path_in(dir, "localize.txt");
			ok = ok && access(lp, R_OK) == 0;
			free(lp);
			for (size_t i = 0; ok && i < sizeof debug_maps / sizeof *debug_maps; i++) {
				char *mp = path_in(dir, debug_maps[i].name);
				ok = (access(mp, R_OK) == 0) == !!(debug & debug_maps[i].flag);
				free(mp);
			}
			plan_seed_free(&s);
		}
		free(err);
		free(text);
	}
	free(pp);
	return ok;
}

static int load_seed(const char *path, const char *options_hash, struct plan_seed *seed, int explicit)
{
	char *text, *err = NULL;
	size_t len;
	if (mtpc_read_file(path, &text, &len) < 0) {
		if (explicit)
			mtpc_fatal("%s: cannot read: %s", path, strerror(errno));
		return 0;
	}
	int ok = plan_seed_parse(text, seed, &err) == 0;
	free(text);
	if (!ok) {
		if (explicit)
			mtpc_fatal("%s: %s", path, err);
		mtpc_warn("%s: ignoring earlier plan: %s", path, err);
		free(err);
		return 0;
	}
	if (strcmp(seed->options_hash, options_hash) != 0 && !explicit) {
		plan_seed_free(seed);
		return 0;
	}
	return 1;
}

static void write_or_die(const char *path, const void *data, size_t len)
{
	if (mtpc_write_file(path, data, len, MTPC_WRITE_IF_CHANGED) < 0)
		mtpc_fatal("%s: cannot write: %s", path, strerror(errno));
}

/* --print-cost: the summary's instruction count of each file, on stdout or
 * (-o FILE) written atomically to FILE. Exit 1 if a file could not be read
 * (after listing the others). */
static int print_costs(const struct options *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		mtpc_fatal("--print-cost: %s", strerror(errno));
	int status = 0;
	for (int i = 0; i < o->ninputs; i++) {
		long long insts, funcs;
		char *err = NULL;
		int r = mtpc_summary_cost(o->inputs[i], &insts, &funcs, &err);
		if (r < 0) {
			mtpc_error("%s", err);
			free(err);
			status = 1;
		} else if (r > 0) {
			fprintf(f, "- - %s\n", o->inputs[i]);
		} else {
			fprintf(f, "%lld %lld %s\n", insts, funcs, o->inputs[i]);
		}
	}
	fclose(f);
	if (!o->outdir)
		fwrite(text, 1, len, stdout);
	else if (mtpc_write_file(o->outdir, text, len, 0) < 0)
		mtpc_fatal("%s: cannot write: %s", o->outdir, strerror(errno));
	free(text);
	return status;
}

struct vis_entry {
	char *name;
	int vis; /* 1 hidden, 2 protected */
};

struct vis_list {
	struct vis_entry *v;
	size_t n, cap;
};

static void add_visibility(void *arg, const char *name, size_t len, int vis)
{
	struct vis_list *l = arg;
	if (l->n == l->cap)
		l->v = xrealloc(l->v, (l->cap = l->cap ? 2 * l->cap : 256) * sizeof *l->v);
	l->v[l->n++] = (struct vis_entry){xasprintf("%.*s", (int)len, name), vis};
}

static int cmp_vis(const void *a, const void *b)
{
	const struct vis_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->vis - y->vis;
}

/* --print-visibility: `hidden NAME` or `protected NAME` for every symbol that
 * a bitcode file's symbol table gives that visibility, the most constraining
 * one (hidden) when files disagree, sorted by name. */
static int print_visibility(const struct options *o)
{
	struct vis_list l = {0};
	int status = 0;
	for (int i = 0; i < o->ninputs; i++) {
		char *err = NULL;
		if (mtpc_bitcode_visibility(o->inputs[i], add_visibility, &l, &err) < 0) {
			mtpc_error("%s", err);
			free(err);
			status = 1;
		}
	}
	if (l.n)
		qsort(l.v, l.n, sizeof *l.v, cmp_vis);
	struct buf out = {0};
	for (size_t i = 0; i < l.n; i++) {
		if (i == 0 || strcmp(l.v[i].name, l.v[i - 1].name))
			buf_printf(&out, "%s %s\n", l.v[i].vis == 1 ? "hidden" : "protected", l.v[i].name);
		free(l.v[i].name);
	}
	free(l.v);
	if (!o->outdir)
		fwrite(out.s ? out.s : "", 1, out.len, stdout);
	else if (mtpc_write_file(o->outdir, out.s ? out.s : "", out.len, 0) < 0)
		mtpc_fatal("%s: cannot write: %s", o->outdir, strerror(errno));
	buf_free(&out);
	return status;
}

/* The text and hash of the options that change a split (the plan cache's
 * second key); weights only when given, so that plans made without them
 * keep their key. */
static char *options_key(const struct options *o, char hash[MTPC_HASH_HEX_LEN + 1])
{
	char *text = xasprintf("algorithm=%d partitions=%d min-cost=%ld copy-limit=%ld copy-budget=%g "
			       "critical-copy-budget=%g dup-limit=%ld balance-slack=%g join-limit=%ld "
			       "join-growth=%g local-dup-limit=%ld local-dup-budget=%g const-dup-limit=%ld "
			       "scc-cut=%g ipo=%d",
			       ALGORITHM, o->partitions, o->min_cost, o->copy_limit, o->copy_budget,
			       o->crit_copy_budget, o->dup_limit, o->slack, o->join_limit, o->join_growth,
			       o->local_dup_limit, o->local_dup_budget, o->const_dup_limit, o->scc_cut, o->ipo);
	for (int i = 0; i < o->nweights; i++) {
		char *t = xasprintf("%s%s%g", text, i ? "," : " weights=", o->weights[i]);
		free(text);
		text = t;
	}
	mtpc_hash_hex(text, strlen(text), hash);
	return text;
}

/* Where a split starts from: the plan cache (an exact hit, else the
 * module's previous plan), else --seed-plan, else OUTDIR/plan.json. Returns
 * whether *seed was filled; *exact: it is the exact hit. The cache stays
 * open in *cache (NULL without one) for the store after the split. */
static int find_seed(const struct options *o, const char *input_hash, const char *options_hash,
		     const char *cache_path, mtpc_cache **cache, struct plan_seed *seed, int *exact)
{
	const char *module_path = o->module_path ? o->module_path : o->input;
	int have_seed = 0;
	*exact = 0;
	*cache = cache_path ? mtpc_cache_open(cache_path, 0) : NULL; /* NULL: one warning, uncached */
	if (*cache && !o->seed_plan) {
		char *text = mtpc_cache_lookup(*cache, input_hash, options_hash), *err = NULL;
		*exact = text != NULL;
		if (!text)
			text = mtpc_cache_lookup_previous(*cache, module_path, options_hash);
		if (text && plan_seed_parse(text, seed, &err) == 0)
			have_seed = 1;
		else if (text)
			mtpc_warn("%s: ignoring a corrupt cached plan for %s: %s", cache_path, module_path, err);
		*exact = *exact && have_seed;
		free(err);
		free(text);
	}
	if (have_seed)
		return 1;
	if (o->seed_plan)
		return load_seed(o->seed_plan, options_hash, seed, 1);
	if (o->use_seed) {
		char *pp = path_in(o->outdir, "plan.json");
		have_seed = load_seed(pp, options_hash, seed, 0);
		free(pp);
	}
	return have_seed;
}

/* Analyze the module and partition it, from the seed when there is one. An
 * exact cache hit that does not fit the module is never trusted: split
 * afresh. Returns whether the plan is the exact hit. */
static int make_plan(const struct options *o, LLVMModuleRef m, struct plan_seed *seed, int exact,
		     const char *cache_path, struct module_info *mi, struct split_plan *plan)
{
	if (seed)
		plan_seed_weigh(seed, o->weights, o->nweights);
	char *suffixes = NULL, *err = NULL;
	if (o->index && !(suffixes = mtpc_index_suffixes(o->index, &err)))
		mtpc_fatal("%s", err);
	struct analyze_opts aopt = {o->dup_limit, o->join_limit, o->local_dup_limit, o->join_growth,
				    o->const_dup_limit, o->scc_cut, o->partitions, suffixes};
	analyze_module(m, &aopt, mi);
	free(suffixes);
	struct partition_opts popt = {
		.max_partitions = o->partitions, .min_cost = o->min_cost, .copy_limit = o->copy_limit,
		.copy_budget = o->copy_budget, .critical_copy_budget = o->crit_copy_budget,
		.balance_slack = o->slack, .local_dup_budget = o->local_dup_budget,
		.seed = seed ? plan_seed_lookup : NULL, .seed_ctx = seed,
		.seed_copy = seed ? plan_seed_had_copy : NULL,
		.scale = seed && seed->rebalance ? plan_seed_scale : NULL, .scale_ctx = seed,
		.weights = o->weights, .nweights = o->nweights};
	/* Without a real measured imbalance, every seeded unit keeps its partition. */
	popt.seed_keep = seed && !seed->rebalance;
	popt.seed_exact = exact;
	partition_module(mi, &popt, plan);
	if (exact && plan->nunseeded) {
		mtpc_warn("%s: cached plan for %s does not match the module; splitting afresh", cache_path,
			  o->module_path ? o->module_path : o->input);
		split_plan_free(plan);
		popt.seed = NULL;
		popt.seed_copy = NULL;
		popt.scale = NULL;
		popt.seed_exact = 0;
		partition_module(mi, &popt, plan);
		exact = 0;
	}
	return exact;
}

/* Whether the one partition is the module itself, byte for byte: unless its
 * names and debug info are made edit-stable (o->debug; a build always asks). */
static int verbatim(const struct options *o, const struct split_plan *plan)
{
	return plan->n == 1 && !o->debug;
}

/* How the partitions get built (--emit-with): processes from 4 jobs on. A
 * process copies its part of the parsed module, which costs more CPU than a
 * thread reading its part back from bitcode (copy-on-write faults), but
 * spares the one serialization that every thread waits for: with few cores
 * the CPU counts, with many the serial time. Threads for a module with a
 * blockaddress: the copy holds the same IR, but the bitcode writer numbers
 * such a constant differently in it (a function's own constant instead of
 * a module-wide one), and the partitions must not depend on -j. */
static int use_processes(const struct options *o, const struct module_info *mi)
{
	if (o->emit_with == EMIT_WITH_THREADS || (o->emit_with == EMIT_WITH_AUTO && o->jobs < 4))
		return 0;
	for (int i = 0; i < mi->nsyms; i++)
		if (mi->syms[i].flags & SF_BLOCKADDR)
			return 0;
	return 1;
}

/* The partitions' bitcode; *run: how they were built (0 workers: the one
 * partition is the input, copied). */
static struct emitted *emit(const struct options *o, struct module_bytes *mb, const struct module_info *mi,
			    const struct split_plan *plan, struct emit_run *run)
{
	struct emitted *parts = xcalloc(plan->n, sizeof *parts);
	*run = (struct emit_run){0};
	if (verbatim(o, plan)) {
		module_bitcode(mb);
		parts[0].data = xmalloc(mb->len);
		memcpy(parts[0].data, mb->bc, mb->len);
		parts[0].len = mb->len;
		return parts;
	}
	char *err = NULL;
	int rc;
	if (use_processes(o, mi)) {
		rc = emit_partitions_forked(mb->m, mi, plan, o->jobs, o->verify, o->debug, o->outdir, parts, run,
					    &err);
	} else {
		double t0 = mtpc_now();
		module_bitcode(mb);
		double serialize = mtpc_now() - t0;
		rc = emit_partitions(mb->bc, mb->len, mi, plan, o->jobs, o->verify, o->debug, parts, run, &err);
		run->serial_seconds += serialize;
	}
	if (rc < 0)
		mtpc_fatal("%s: %s", o->input, err);
	return parts;
}

/* Write every output (see usage): plan.json last, and removed first while
 * the set changes, so that a complete plan.json always describes the files
 * beside it; partitions of an earlier, larger split are removed. Frees the
 * partitions' data. */
static void write_outputs(const struct options *o, const struct module_info *mi,
			  const struct split_plan *plan, struct emitted *parts, const char *json)
{
	char *plan_path = path_in(o->outdir, "plan.json"), *old;
	size_t oldlen;
	int plan_same = 0;
	if (mtpc_read_file(plan_path, &old, &oldlen) == 0) {
		plan_same = oldlen == strlen(json) && memcmp(old, json, oldlen) == 0;
		free(old);
	}
	if (!plan_same)
		unlink(plan_path);
	for (int p = 0; p < plan->n; p++) {
		char *path = xasprintf("%s/p%d.bc", o->outdir, p);
		write_or_die(path, parts[p].data, parts[p].len);
		free(path);
		free(parts[p].data);
		parts[p].data = NULL;
	}
	char *loc = plan_localize_list(mi, plan), *ren = plan_rename_list(mi, plan, verbatim(o, plan));
	char *loc_path = path_in(o->outdir, "localize.txt"), *ren_path = path_in(o->outdir, "rename.txt");
	write_or_die(loc_path, loc, strlen(loc));
	write_or_die(ren_path, ren, strlen(ren));
	if (o->debug & EMIT_PLACEHOLDER_CHECKSUMS)
		write_checksums(o->outdir, parts, plan->n);
	if (o->debug & EMIT_VIRTUAL_LINES)
		write_lines(o->outdir, parts, plan->n);
	for (size_t i = 0; i < sizeof debug_maps / sizeof *debug_maps; i++)
		if (!(o->debug & debug_maps[i].flag)) {
			char *mp = path_in(o->outdir, debug_maps[i].name);
			unlink(mp);
			free(mp);
		}
	write_or_die(plan_path, json, strlen(json));
	for (int p = plan->n;; p++) {
		char *path = xasprintf("%s/p%d.bc", o->outdir, p);
		int gone = unlink(path) < 0 && errno == ENOENT;
		free(path);
		if (gone)
			break;
	}
	free(loc);
	free(ren);
	free(loc_path);
	free(ren_path);
	free(plan_path);
}

/* Phase start times of one split, for --stats. */
struct phases {
	double start, key, load, plan, emit, write; /* when each began */
	double ipo;                            /* seconds of the whole-module passes, in load */
	struct emit_run run;                   /* how the emit phase ran (emit()) */
};

/* --stats, second line: what a script needs to predict the split's wall
 * time on more cores than this machine has. Only the emission runs on
 * several threads or processes: each partition's CPU time there is what its
 * thread or process spent on it, not waiting for a core; the rest stays
 * serial (wall, from start to now: a script timing the process adds
 * start-up and exit). */
static void print_emit_stats(const struct options *o, const struct split_plan *plan,
			     const struct emitted *parts, const struct phases *t, double now)
{
	double emit_wall = t->write - t->emit - t->run.serial_seconds;
	fprintf(stderr, "mtpc-split: %s: serial %.4f s + emit %.4f s wall on %d %s; emit CPU by partition (s):",
		o->input, now - t->start - emit_wall, emit_wall, t->run.workers,
		t->run.processes ? "processes" : "threads");
	for (int p = 0; p < plan->n; p++)
		fprintf(stderr, " %.4f", parts[p].cpu_seconds);
	fputc('\n', stderr);
}

/* --stats: the summary on stderr (see usage). */
static void print_stats(const struct options *o, const struct module_info *mi,
			const struct split_plan *plan, const struct emitted *parts, int exact,
			const struct phases *t)
{
	long maxc = 0, sum = 0;
	for (int p = 0; p < plan->n; p++) {
		sum += plan->cost[p] + plan->copy_cost[p];
		if (plan->cost[p] + plan->copy_cost[p] > maxc)
			maxc = plan->cost[p] + plan->copy_cost[p];
	}
	double now = mtpc_now();
	fprintf(stderr,
		"mtpc-split: %s: %d partitions, %d functions (%d dead), %d units, %d SCCs cut, "
		"largest unit %.1f%%, %d alias users, %d promoted, %d shared statics, %d copies (+%.1f%% cost), max/mean %.3f, %d units seeded%s, %.2f s "
		"(key %.2f, load%s %.2f, ipo %.2f, cache %.2f, plan %.2f, emit %.2f, write %.2f)\n",
		o->input, plan->n, mi->nfuncs_defined, mi->ndead, mi->nunits, mi->ncut_sccs,
		mi->total_cost ? 100.0 * plan->largest_unit / mi->total_cost : 0.0, mi->nalias_users, plan->npromoted,
		plan->nshared_dups, plan->ncopies,
		mi->total_cost ? 100.0 * (sum - mi->total_cost) / mi->total_cost : 0.0,
		sum ? (double)maxc * plan->n / sum : 0.0, plan->nseeded, exact ? " (cache hit)" : "",
		now - t->start, t->key - t->start, o->index ? " + import" : "", t->load - t->key - t->ipo, t->ipo,
		t->plan - t->load,
		t->emit - t->plan, t->write - t->emit, now - t->write);
	print_emit_stats(o, plan, parts, t, now);
}

/* Plan, emit and write the split of mb->m: the outputs are not current. */
static void split_module(const struct options *o, struct module_bytes *mb, const char *input_hash,
			 const char *options_hash, const char *options_text, struct phases *t)
{
	/* The one rule the build and mtpc-cache share (mtpc_cache_resolve_path). */
	char *cache_path = o->no_cache ? NULL : mtpc_cache_resolve_path(o->cache, NULL);
	mtpc_cache *cache;
	struct plan_seed seed;
	int exact;
	int have_seed = find_seed(o, input_hash, options_hash, cache_path, &cache, &seed, &exact);
	t->plan = mtpc_now();
	struct module_info mi;
	struct split_plan plan;
	exact = make_plan(o, mb->m, have_seed ? &seed : NULL, exact, cache_path, &mi, &plan);
	t->emit = mtpc_now();
	struct emitted *parts = emit(o, mb, &mi, &plan, &t->run);
	t->write = mtpc_now();
	struct plan_meta meta = {input_hash, options_hash, options_text, mtpc_now() - t->start};
	char *json = plan_to_json(&mi, &plan, &meta);
	write_outputs(o, &mi, &plan, parts, json);
	if (cache) {
		mtpc_cache_store(cache, o->module_path ? o->module_path : o->input, input_hash,
				 options_hash, json, mtpc_now() - t->start, exact);
		mtpc_cache_close(cache);
	}
	if (o->stats)
		print_stats(o, &mi, &plan, parts, exact, t);
	free(parts);
	free(json);
	split_plan_free(&plan);
	module_info_free(&mi);
	if (have_seed)
		plan_seed_free(&seed);
	free(cache_path);
}

/* The context the module is loaded into; its errors go to *diag. */
static LLVMContextRef load_context(char **diag)
{
	/* Loading a module verifies it whole for LLVM's debug-info upgrade
	 * (UpgradeDebugInfo): a third of a -g split's CPU, and redundant here,
	 * where each partition is verified (--verify) and the slot's compiler
	 * runs that upgrade again on what it reads. */
	const char *llvm_args[] = {"mtpc-split", "-disable-auto-upgrade-debug-info"};
	LLVMParseCommandLineOptions(2, llvm_args, NULL);
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(ctx, emit_capture_error, diag);
	/* As clang outside debug builds: local value names (kept by
	 * sanitizers and -fno-discard-value-names) never reach an object,
	 * and a function lists them in the order of a hash table, which
	 * depends on the order they were added: a partition built by a
	 * thread (names read from bitcode) and one built by a process
	 * (names copied instruction by instruction) would differ. */
	LLVMContextSetDiscardValueNames(ctx, 1);
	return ctx;
}

int main(int argc, char **argv)
{
	mtpc_set_progname(argv[0]);
	struct options o;
	parse_args(argc, argv, &o);
	if (o.print_cost || o.print_visibility) {
		int st = o.print_cost ? print_costs(&o) : print_visibility(&o);
		free(o.input_list);
		free(o.input_text);
		return st;
	}
	struct phases t = {.start = mtpc_now()};
	if (mtpc_mkdir_p(o.outdir) < 0)
		mtpc_fatal("%s: cannot create output directory: %s", o.outdir, strerror(errno));
	if (access(o.outdir, W_OK) < 0)
		mtpc_fatal("%s: output directory is not writable: %s", o.outdir, strerror(errno));

	char *bc, input_hash[MTPC_HASH_HEX_LEN + 1], options_hash[MTPC_HASH_HEX_LEN + 1];
	size_t len;
	read_input(&o, &bc, &len);
	input_key(&o, bc, len, input_hash);
	char *options_text = options_key(&o, options_hash);
	t.key = mtpc_now();
	/* Outputs already made from this very input need no parse at all;
	 * --emit-imported still wants the import's result written. */
	int current = outputs_current(o.outdir, input_hash, options_hash, o.debug);
	struct module_bytes mb = {NULL, bc, len, 1};
	char *diag = NULL;
	LLVMContextRef ctx = NULL;
	if (!current || o.imported) {
		ctx = load_context(&diag);
		load_input(&o, ctx, &diag, &mb, &t.ipo);
		t.load = mtpc_now();
	}
	if (!current)
		split_module(&o, &mb, input_hash, options_hash, options_text, &t);
	else if (o.stats)
		fprintf(stderr, "mtpc-split: %s: outputs up to date\n", o.input);
	free(options_text);
	free(o.weights);
	free(mb.bc);
	free(diag);
#if MTPC_FREE_AT_EXIT
	if (mb.m)
		LLVMDisposeModule(mb.m);
	if (ctx)
		LLVMContextDispose(ctx);
	LLVMShutdown();
#else
	/* As clang's -disable-free: the outputs are written, and freeing the
	 * imported module and its context one object at a time (0.04 s on
	 * SQLite's module) would only delay the partitions' compiles, which
	 * wait for this process to exit. Sanitizer builds free it all, so that
	 * their leak check still covers every allocation (CMakeLists.txt). */
	(void)ctx;
#endif
	return 0;
}
