/* cli.c: see cli.h. */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "cli.h"
#include "emit.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static void usage(FILE *f)
{
	/* In pieces: C11 promises string literals of 4095 bytes only. */
	fputs("usage: mtpc-split INPUT.bc -o OUTDIR [options]\n"
	      "       mtpc-split --print-cost FILE.o...\n"
	      "       mtpc-split --print-visibility FILE.o... [-o LIST]\n"
	      "       mtpc-split --join ORIGINAL.bc --plan PLAN.json -o OUT.o P0.o P1.o...\n"
	      "\n"
	      "Split an LLVM " LLVM_MAJOR " bitcode module into call-graph partitions that can be\n"
	      "optimized and compiled separately and merged back with `ld.lld -r`.\n"
	      "Writes OUTDIR/p0.bc .. p<n-1>.bc (n <= N), OUTDIR/plan.json and\n"
	      "OUTDIR/localize.txt (symbols to make local after the merge, for\n"
	      "`llvm-objcopy --localize-symbols`) and OUTDIR/rename.txt (their original\n"
	      "names, for `--redefine-syms`). Files are replaced atomically and only\n"
	      "when their content changes.\n"
	      "\n",
	      f);
	fputs("options:\n"
	      "  -o, --output DIR          output directory (created if missing)\n"
	      "  -n, --partitions N        at most N partitions (default: number of CPUs)\n"
	      "      --min-cost C          use fewer partitions if each would cost less than\n"
	      "                            C instructions (default 0: as many as allowed)\n"
	      "      --cores C             the cores the partitions' compiles will share:\n"
	      "                            plan at N and at fewer partitions (down to 2),\n"
	      "                            predict each plan's span, max(largest partition,\n"
	      "                            all partitions' work / C), counting the code each\n"
	      "                            partition copies or duplicates, and keep the\n"
	      "                            fewest partitions within 3% of the best span; a\n"
	      "                            seeded plan keeps its count unless its span is\n"
	      "                            10% worse than the best (plan.json:\n"
	      "                            partition_count; default 0: exactly N)\n"
	      "      --thinlto-index FILE  INPUT is a ThinLTO object and FILE its index from\n"
	      "                            `--thinlto-index-only`: run the ThinLTO import\n"
	      "                            in-process first, then split the result\n"
	      "      --relocation-model M  static or pic: the final link's model, used by\n"
	      "                            the import (-shared/-pie links are pic; default static)\n"
	      "      --emit-imported FILE  also write the post-import module to FILE\n",
	      f);
	fputs("      --copy-limit I        largest function, in instructions, that a partition\n"
	      "                            may get an available_externally copy of (default 60;\n"
	      "                            400 with --pre-link)\n"
	      "      --copy-budget F       copies per partition as a fraction of its own cost\n"
	      "                            (default 0.10; 0.5 with --pre-link)\n"
	      "      --critical-copy-budget F\n"
	      "                            the same for the costliest partition, the critical\n"
	      "                            path; no other partition's copies take it past that\n"
	      "                            one (default 0.04; 0.3 with --pre-link)\n"
	      "      --dup-limit I         largest linkonce_odr comdat, in instructions, that\n"
	      "                            every partition using it carries (default 200;\n"
	      "                            600 with --pre-link)\n"
	      "      --const-dup-limit B   largest static constant, in bytes, that every\n"
	      "                            partition reading it carries; a bigger one is\n"
	      "                            defined once and the others get an\n"
	      "                            available_externally copy, so loads from it still\n"
	      "                            fold but its data is not duplicated (default 64)\n"
	      "      --local-dup-limit I   largest static function, in instructions, that every\n"
	      "                            partition calling it carries instead of a promoted\n"
	      "                            symbol, so each can inline it (default 0: off; 60\n"
	      "                            with --native; see docs/splitter.md for why)\n"
	      "      --local-dup-budget F  extra work those duplicates may add, as a fraction\n"
	      "                            of the module; smallest first, the rest are promoted\n"
	      "                            (default 0.03; 1 with --native)\n"
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
	      "                            the rest stay whole (default 1; 0: never cut)\n",
	      f);
	fputs("      --no-ipo              do not run the whole-module interprocedural passes\n"
	      "                            first (constants propagated into internal\n"
	      "                            functions, nounwind and memory effects inferred,\n"
	      "                            dead arguments removed): partitions then lose what\n"
	      "                            the unsplit backend derives from the whole module\n"
	      "                            (mtpc-link passes it for -O0 links)\n"
	      "      --pre-link            the input is a compile's module, split before the\n"
	      "                            thin link (mtpc-compile passes it): modules with\n"
	      "                            ifuncs are refused (exit 1), see docs/splitter.md\n"
	      "      --native              the input is a plain (not LTO) compile's frontend\n"
	      "                            module whose partitions are compiled to native\n"
	      "                            objects and merged with ld.lld -r (mtpc-compile\n"
	      "                            passes it): --pre-link's copy defaults, numbered\n"
	      "                            local functions under edit-stable names that\n"
	      "                            rename.txt gives back, every alwaysinline callee\n"
	      "                            copied (no inliner runs after the partitions'),\n"
	      "                            and a copy may promote a noinline static it calls;\n"
	      "                            a module constructor that only calls its static\n"
	      "                            initializers is cut into chunks a partition each\n"
	      "                            owns (ctor_chunks.h)\n"
	      "      --no-ctor-chunks      with --native, leave the module constructor whole\n"
	      "      --weights W,W,...     relative target sizes of the partitions, the first the\n"
	      "                            largest (e.g. 57,43: mtpc-link gives a partition\n"
	      "                            that will start behind another module's backend\n"
	      "                            less work); default: equal\n"
	      "      --balance-slack F     allowed overshoot of the ideal partition cost\n"
	      "                            (default 0.02)\n",
	      f);
	fputs("      --seed-plan FILE      keep functions where this earlier plan put them\n"
	      "                            (default: OUTDIR/plan.json if its options match)\n"
	      "      --no-seed             ignore earlier plans\n"
	      "      --cache FILE          plan cache (SQLite); default: $MTPC_CACHE, else\n"
	      "                            $XDG_CACHE_HOME/mtpc/plans.sqlite, else\n"
	      "                            ~/.cache/mtpc/plans.sqlite (`mtpc-cache path`).\n"
	      "                            An exact hit reuses the stored assignment; a miss\n"
	      "                            is seeded from the module's previous plan and its\n"
	      "                            measured partition times\n"
	      "      --no-cache            do not use the plan cache\n"
	      "      --module-path NAME    the module's name in the cache (default: INPUT)\n",
	      f);
	fputs("  -j, --jobs J              partitions built at once (default: number of CPUs)\n"
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
	      "                            C0 C1 ...')\n",
	      f);
	fputs("  -h, --help                this help\n"
	      "      --version             print the version\n"
	      "      --join ORIGINAL.bc    do not split: join the pre-link partitions P0.o...\n"
	      "                            (ThinLTO bitcode, in partition order) of the split\n"
	      "                            of ORIGINAL.bc (--plan: its plan.json) into one\n"
	      "                            ThinLTO object -o OUT.o: promotions undone, the\n"
	      "                            inliner on the calls no partition saw, GlobalOpt,\n"
	      "                            GlobalDCE and constant merging on the whole\n"
	      "                            module, written with its summary (mtpc-compile)\n"
	      "      --plan PLAN.json      the split's plan, for --join\n"
	      "      --no-join-inline      --join without that inliner (to measure what it\n"
	      "                            recovers; see docs/splitter.md)\n"
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
	      "and on 3 the output directory keeps what it had.\n",
	      f);
}

/* A whole number in [lo, hi] for option opt, or exit with an error. */
static long parse_long(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi)
		mtpc_fatal("%s: expected an integer in [%ld, %ld], got '%s'", opt, lo, hi, s);
	return v;
}

/* A number in [lo, hi] for option opt, or exit with an error. */
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

/* The defaults, as --help states them. */
/* --dup-limit's defaults. Before the pre-link pipeline (--pre-link) a
 * linkonce_odr comdat that a partition does not carry is an external call
 * there that the pre-link inliner, where a C++ program's small templates
 * are inlined, cannot see; and the frontend's IR of a small function
 * (every local in memory, no pass run) counts several times the
 * instructions it has after the pipeline. Measured on nlohmann json's unit
 * test split in 16 before and after the thin link: executed instructions
 * 1.064x plain ThinLTO's with 200, 1.0009x with 600 (docs/splitter.md,
 * "The compile side"). */
#define DUP_LIMIT 200
#define PRE_LINK_DUP_LIMIT 600

/* The copies' defaults (--copy-limit, --copy-budget, --critical-copy-budget).
 * Before the pre-link pipeline a callee a partition neither owns nor copies
 * is a declaration to its inliner: the join's inliner weighs those calls
 * again, but only after each caller was optimized as if the call cost
 * nothing, and a caller that should have grown by it was inlined into its
 * own callers instead (Duktape's regexp matcher: .text +11%). A copy lets
 * the partition decide as the unsplit compile does; frontend IR also counts
 * about three times the instructions of the optimized function. Measured
 * on Duktape, 16 partitions at both steps (docs/splitter.md, "The compile
 * side"): with 60 / 0.10 / 0.04 executed instructions 1.0041 and .text
 * 1.104 of plain ThinLTO's; with 400 / 0.5 / 0.3 1.0015 and 1.027, for 15%
 * more compile-side work (still 0.92 of the plain compile's). */
#define COPY_LIMIT 60
#define COPY_BUDGET 0.10
#define CRIT_COPY_BUDGET 0.04
/* --local-dup-limit and --local-dup-budget with --native. A plain compile's
 * partition gets no inliner after its own: a small static helper owned by
 * another partition is a call that the unsplit compile would have inlined,
 * and a copy cannot be made of it when it uses statics of its owner (a copy
 * never causes a promotion). So every partition calling one carries it, as
 * its own internal copy. Measured at 16 partitions (callgrind, instructions
 * of the program against the plain -O2 compile's; .text of the object):
 * none: zstd 1.124 / 0.98, Duktape 1.0033 / 0.87, SQLite 0.9944 / 0.91;
 * 60 with no budget limit: 1.0000 / 1.06, 0.9869 / 0.98, 1.0113 / 0.99; a
 * budget that stops half way (0.1) is worse than either (zstd 1.058). */
#define NATIVE_LOCAL_DUP_LIMIT 60
#define NATIVE_LOCAL_DUP_BUDGET 1.0
#define PRE_LINK_COPY_LIMIT 400
#define PRE_LINK_COPY_BUDGET 0.5
#define PRE_LINK_CRIT_COPY_BUDGET 0.3

static struct options default_options(void)
{
	return (struct options){
		.partitions = ncpus(),
		.jobs = ncpus(),
		.verify = 1,
		.use_seed = 1,
		.ipo = 1,
		.ctor_chunks = 1,
		.copy_limit = -1,        /* COPY_LIMIT, or PRE_LINK_COPY_LIMIT with --pre-link */
		.copy_budget = -1,       /* the same for the budgets */
		.crit_copy_budget = -1,
		.slack = 0.02,
		.dup_limit = -1, /* DUP_LIMIT, or PRE_LINK_DUP_LIMIT with --pre-link */
		.const_dup_limit = 64,
		.local_dup_limit = -1,   /* 0, or NATIVE_LOCAL_DUP_LIMIT with --native */
		.local_dup_budget = -1,  /* 0.03, or NATIVE_LOCAL_DUP_BUDGET with --native */
		.join_limit = 300,
		.join_growth = 0.1,
		.scc_cut = 1.0,
	};
}

/* The operands after the options: one input to split, or for the print
 * modes every operand (or the lines of @LIST). */
static void check_operands(int argc, char **argv, struct options *o)
{
	o->inputs = argv + optind;
	o->ninputs = argc - optind;
	if (o->print_cost + o->print_visibility + (o->join != NULL) > 1)
		mtpc_fatal("--print-cost, --print-visibility and --join: choose one");
	if (o->join) {
		if (!o->join_plan || !o->outdir || !o->ninputs)
			mtpc_fatal("--join needs --plan PLAN.json, -o OUT.o and the partitions (see --help)");
		return;
	}
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

void parse_args(int argc, char **argv, struct options *o)
{
	/* The long options without a short one. */
	enum {
		O_MIN_COST = 256, O_INDEX, O_RELOC, O_IMPORTED, O_COPY_LIMIT, O_COPY_BUDGET,
		O_CRIT_COPY_BUDGET, O_DUP_LIMIT, O_SLACK, O_JOIN_LIMIT, O_JOIN_GROWTH, O_SCC_CUT,
		O_LOCAL_DUP_LIMIT, O_LOCAL_DUP_BUDGET, O_CONST_DUP_LIMIT, O_WEIGHTS, O_SEED_PLAN, O_NO_SEED,
		O_VERIFY, O_NO_VERIFY, O_STATS, O_CACHE, O_NO_CACHE, O_MODULE_PATH, O_VERSION, O_PRINT_COST,
		O_PRINT_VISIBILITY, O_JOIN, O_JOIN_PLAN, O_NO_JOIN_INLINE, O_PLACEHOLDERS, O_VIRTUAL_LINES, O_NO_IPO, O_NO_CTOR_CHUNKS, O_PRE_LINK, O_NATIVE, O_EMIT_WITH,
		O_CORES,
	};
	static const struct option longopts[] = {
		{"output", required_argument, 0, 'o'},
		{"partitions", required_argument, 0, 'n'},
		{"jobs", required_argument, 0, 'j'},
		{"help", no_argument, 0, 'h'},
		{"min-cost", required_argument, 0, O_MIN_COST},
		{"cores", required_argument, 0, O_CORES},
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
		{"join", required_argument, 0, O_JOIN},
		{"plan", required_argument, 0, O_JOIN_PLAN},
		{"no-join-inline", no_argument, 0, O_NO_JOIN_INLINE},
		{"placeholder-checksums", no_argument, 0, O_PLACEHOLDERS},
		{"virtual-lines", no_argument, 0, O_VIRTUAL_LINES},
		{"no-ipo", no_argument, 0, O_NO_IPO},
		{"no-ctor-chunks", no_argument, 0, O_NO_CTOR_CHUNKS},
		{"pre-link", no_argument, 0, O_PRE_LINK},
		{"native", no_argument, 0, O_NATIVE},
		{"emit-with", required_argument, 0, O_EMIT_WITH},
		{0, 0, 0, 0},
	};
	*o = default_options();
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:n:j:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->outdir = optarg; break;
		case 'n': o->partitions = (int)parse_long("--partitions", optarg, 1, 4096); break;
		case 'j': o->jobs = (int)parse_long("--jobs", optarg, 1, 4096); break;
		case 'h': usage(stdout); exit(0);
		case O_MIN_COST: o->min_cost = parse_long("--min-cost", optarg, 0, 1L << 40); break;
		case O_CORES: o->cores = (int)parse_long("--cores", optarg, 0, 4096); break;
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
		case O_JOIN: o->join = optarg; break;
		case O_JOIN_PLAN: o->join_plan = optarg; break;
		case O_NO_JOIN_INLINE: o->join_no_inline = 1; break;
		case O_PLACEHOLDERS: o->debug |= EMIT_PLACEHOLDER_CHECKSUMS; break;
		case O_VIRTUAL_LINES: o->debug |= EMIT_VIRTUAL_LINES; break;
		case O_NO_IPO: o->ipo = 0; break;
		case O_NO_CTOR_CHUNKS: o->ctor_chunks = 0; break;
		case O_PRE_LINK: o->pre_link = 1; break;
		case O_NATIVE: o->native = 1; break;
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
		case O_VERSION: mtpc_print_version(); exit(0);
		case ':': mtpc_fatal("option '%s' needs an argument (see --help)", argv[optind - 1]);
		default: mtpc_fatal("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (o->native && (o->pre_link || o->index))
		mtpc_fatal("--native splits a plain compile's module: not with --pre-link or --thinlto-index");
	/* A frontend's module, whichever pipeline follows: the same reasons. */
	int frontend = o->pre_link || o->native;
	if (o->dup_limit < 0)
		o->dup_limit = frontend ? PRE_LINK_DUP_LIMIT : DUP_LIMIT;
	if (o->copy_limit < 0)
		o->copy_limit = frontend ? PRE_LINK_COPY_LIMIT : COPY_LIMIT;
	if (o->copy_budget < 0)
		o->copy_budget = frontend ? PRE_LINK_COPY_BUDGET : COPY_BUDGET;
	if (o->crit_copy_budget < 0)
		o->crit_copy_budget = frontend ? PRE_LINK_CRIT_COPY_BUDGET : CRIT_COPY_BUDGET;
	if (o->local_dup_limit < 0)
		o->local_dup_limit = o->native ? NATIVE_LOCAL_DUP_LIMIT : 0;
	if (o->local_dup_budget < 0)
		o->local_dup_budget = o->native ? NATIVE_LOCAL_DUP_BUDGET : 0.03;
	check_operands(argc, argv, o);
}

void options_free(struct options *o)
{
	free(o->weights);
	free(o->input_list);
	free(o->input_text);
	o->weights = NULL;
	o->input_list = NULL;
	o->input_text = NULL;
}
