/* cli.h: mtpc-split's command line: the options with their defaults, the
 * usage text (--help) and the parsing.
 *
 * parse_args() is the only way options are set; it checks every value and
 * exits with one error line (status 1) on a bad one, or with status 0 after
 * --help or --version. The driver (mtpc_split.c) reads the result; the
 * options that change a split go into the plan's key there
 * (options_key). */
#ifndef MTPC_CLI_H
#define MTPC_CLI_H

/* The major version of the LLVM mtpc-split is built against, as a string
 * literal (CMake defines MTPC_LLVM_MAJOR), for messages. */
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)
#define LLVM_MAJOR CLI_STR(MTPC_LLVM_MAJOR)

/* --emit-with: how partitions are built (emit_threads.h, emit_processes.h). */
enum emit_with {
	EMIT_WITH_AUTO,      /* processes from -j 4 on (the driver's use_processes) */
	EMIT_WITH_THREADS,
	EMIT_WITH_PROCESSES,
};

struct options {
	/* What to do: split (neither flag), or one of the print modes. */
	int print_cost;          /* --print-cost (print_modes.h) */
	int print_visibility;    /* --print-visibility (print_modes.h) */
	const char *join;        /* --join ORIGINAL: join the partitions (the
	                            operands) of ORIGINAL's split (join.h) */
	const char *join_plan;   /* --plan: that split's plan.json */
	int join_no_inline;      /* --no-join-inline: the join runs no inliner */

	/* Operands. */
	const char *input;       /* the module to split: bitcode, or with
	                            --thinlto-index the ThinLTO object */
	char **inputs;           /* the print modes: every operand (points into
	                            argv, or into input_text for @LIST) */
	int ninputs;
	char **input_list;       /* inputs when read from @LIST (heap), or NULL */
	char *input_text;        /* @LIST's text, which they point into (heap), or NULL */

	/* Where results go. */
	const char *outdir;      /* -o: the output directory (created if missing);
	                            the print modes: the file to write, or NULL:
	                            stdout */
	const char *imported;    /* --emit-imported: also write the post-import
	                            module there, or NULL */

	/* Loading. */
	const char *index;       /* --thinlto-index: the object's per-module
	                            ThinLTO index, or NULL: input is the module */
	int pic;                 /* --relocation-model pic: the final link's model,
	                            for the import (default static: 0) */
	int ipo;                 /* run the whole-module passes first (ipo.h);
	                            --no-ipo clears it */
	int pre_link;            /* --pre-link: the input is a compile's module,
	                            to be joined again before the thin link:
	                            refuse what that thin link cannot take split */
	int ctor_chunks;         /* with --native, cut the module constructor into
	                            chunks (ctor_chunks.h); --no-ctor-chunks
	                            clears it */
	int native;              /* --native: the input is a plain (not LTO)
	                            compile's frontend module, whose partitions
	                            are compiled to native objects and merged
	                            with ld -r: --pre-link's copies and
	                            edit-stable local names (rename.txt gives
	                            them back), alwaysinline callees copied */

	/* The plan. Each changes it, so each is in the plan's key. */
	int partitions;          /* -n: at most this many (default: CPUs) */
	long min_cost;           /* --min-cost: fewer partitions if each would
	                            cost less (0: as many as allowed) */
	int cores;               /* --cores: the cores the partitions' compiles
	                            share; > 0: the count is chosen from the
	                            predicted span (count.h); 0: -n exactly */
	long copy_limit;         /* --copy-limit (partition_opts.copy_limit) */
	double copy_budget;      /* --copy-budget (partition_opts.copy_budget) */
	double crit_copy_budget; /* --critical-copy-budget
	                            (partition_opts.critical_copy_budget) */
	double slack;            /* --balance-slack (partition_opts.balance_slack) */
	double local_dup_budget; /* --local-dup-budget
	                            (partition_opts.local_dup_budget) */
	long dup_limit;          /* --dup-limit (analyze_opts.dup_limit) */
	long const_dup_limit;    /* --const-dup-limit (analyze_opts.const_dup_limit) */
	long local_dup_limit;    /* --local-dup-limit (analyze_opts.local_dup_limit) */
	long join_limit;         /* --join-limit (analyze_opts.join_limit) */
	double join_growth;      /* --join-growth (analyze_opts.join_growth) */
	double scc_cut;          /* --scc-cut (analyze_opts.scc_cut) */
	double *weights;         /* --weights: relative partition sizes, largest
	                            first (heap), or NULL: equal */
	int nweights;

	/* Where the plan starts from. */
	const char *seed_plan;   /* --seed-plan: an earlier plan to follow, or NULL */
	int use_seed;            /* OUTDIR/plan.json may seed the plan when its
	                            options match; --no-seed clears it */
	const char *cache;       /* --cache: the plan cache file, or NULL: the
	                            default (mtpc_cache_resolve_path) */
	int no_cache;            /* --no-cache */
	const char *module_path; /* --module-path: the module's name in the
	                            cache, or NULL: input */

	/* The emission. */
	int jobs;                /* -j: partitions built at once (default: CPUs) */
	enum emit_with emit_with; /* --emit-with */
	int verify;              /* run the LLVM verifier on each partition
	                            (default; --no-verify clears it) */
	int debug;               /* EMIT_* (emit.h): --placeholder-checksums,
	                            --virtual-lines */
	int stats;               /* --stats: a summary on stderr */
};

/* Fill *o from the command line. Exits on an error (one line naming it,
 * status 1), after --help (usage on stdout) and after --version. */
void parse_args(int argc, char **argv, struct options *o);

/* Free what parse_args allocated (weights, the @LIST inputs). */
void options_free(struct options *o);

#endif
