/* mtpc_split.c: mtpc-split, split one (post-import) LLVM module into
 * call-graph partitions (docs/splitter.md; `mtpc-split --help`).
 *
 * The driver: main() runs the phases in order and times them for --stats.
 * Key: the input's and the options' hashes, taken before anything is parsed;
 * outputs already made from them end the run (outputs.h). Load: the module,
 * with --thinlto-index imported in-process (llvm_shim.h), and the
 * whole-module passes (ipo.h). Seed: where the plan starts from (the plan
 * cache, an earlier plan). Plan: analysis (analyze.h) and assignment
 * (partition.h). Emit: the partitions' bitcode, on threads or in processes
 * (emit_threads.h, emit_processes.h). Write: the output directory
 * (outputs.h), and the plan into the cache. The options are cli.h's; the
 * modes that split nothing are print_modes.h's. */
#define _POSIX_C_SOURCE 200809L
#include "analyze.h"
#include "bitcode.h"
#include "cli.h"
#include "count.h"
#include "ctor_chunks.h"
#include "emit.h"
#include "emit_processes.h"
#include "emit_threads.h"
#include "hash.h"
#include "ipo.h"
#include "join.h"
#include "llvm_shim.h"
#include "mtpc_cache.h"
#include "outputs.h"
#include "partition.h"
#include "plan.h"
#include "print_modes.h"
#include "util.h"

#include <errno.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Support.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bumped whenever the partitioning or the partitions' content changes, so that
 * earlier plans and outputs are not reused (20: whole-module interprocedural
 * passes before the split, ipo.h; --join-growth 0.1 by default; 21: units of
 * variables only go where the code that reads them is, partition.c; 22: users
 * of several names of one object live with them, units.c; 23: data units
 * follow code until none moves, the same in a seeded plan, assign.c; 24: a
 * link's partitions get a copy of every alwaysinline function they call,
 * partition.c; 26: a plain compile's module constructor in chunks,
 * ctor_chunks.h). */
#define ALGORITHM 26

/* Key. */

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
	if (o->native) { /* its own key (alwaysinline copies); the others' keys stay */
		char *t = xasprintf("%s native=1%s", text, o->ctor_chunks ? "" : " ctor-chunks=0");
		free(text);
		text = t;
	}
	if (o->cores > 0) { /* only when given: without it the plan is -n's, with the same key */
		char *t = xasprintf("%s cores=%d", text, o->cores);
		free(text);
		text = t;
	}
	for (int i = 0; i < o->nweights; i++) {
		char *t = xasprintf("%s%s%g", text, i ? "," : " weights=", o->weights[i]);
		free(text);
		text = t;
	}
	mtpc_hash_hex(text, strlen(text), hash);
	return text;
}

/* Load. */

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
		/* A compile's module (its summary is written after the join):
		 * once a function that takes an ifunc's address is no longer
		 * inlined into its callers (they are in other partitions), the
		 * thin link of LLVM 19 and 22 can crash in its dead-symbol
		 * analysis on the joined summary where the unsplit one links. */
		if (o->pre_link && LLVMGetFirstGlobalIFunc(mb->m))
			mtpc_fatal("%s: defines ifuncs (%s, ...), whose users' summaries can crash the thin link "
				   "once split; not split before the thin link", o->input,
				   LLVMGetValueName2(LLVMGetFirstGlobalIFunc(mb->m), &(size_t){0}));
	}
	if (o->ipo) {
		double t0 = mtpc_now();
		char *err = NULL;
		if (ipo_run(mb->m, &err) < 0)
			mtpc_fatal("%s: %s", o->input, err);
		mb->valid = 0;
		*ipo_secs = mtpc_now() - t0;
	}
	/* A plain compile's module constructor, in chunks (ctor_chunks.h). */
	if (o->native && o->ctor_chunks && ctor_chunks(mb->m) > 0)
		mb->valid = 0;
}

/* Seed and plan. */

/* An earlier plan at path as the seed, if its options are these
 * (options_hash) or it was asked for (explicit: --seed-plan, whose
 * problems are errors; otherwise they are warnings and mean no seed).
 * Returns whether *seed was filled. */
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
		char *pp = output_path(o->outdir, "plan.json");
		have_seed = load_seed(pp, options_hash, seed, 0);
		free(pp);
	}
	return have_seed;
}

/* Analyze the module and partition it, from the seed when there is one. An
 * exact cache hit that does not fit the module is never trusted: split
 * afresh. With --cores the count is chosen first (count.h), into *count;
 * without, count->chosen is 0. Returns whether the plan is the exact hit. */
static int make_plan(const struct options *o, LLVMModuleRef m, struct plan_seed *seed, int exact,
		     const char *cache_path, struct module_info *mi, struct split_plan *plan,
		     struct count_choice *count)
{
	if (seed)
		plan_seed_weigh(seed, o->weights, o->nweights);
	char *suffixes = NULL, *err = NULL;
	if (o->index && !(suffixes = mtpc_index_suffixes(o->index, &err)))
		mtpc_fatal("%s", err);
	struct analyze_opts aopt = {o->dup_limit, o->join_limit, o->local_dup_limit, o->join_growth,
				    o->const_dup_limit, o->scc_cut, o->partitions, suffixes, o->pre_link || o->native,
				    o->native};
	analyze_module(m, &aopt, mi);
	free(suffixes);
	struct partition_opts popt = {
		.max_partitions = o->partitions, .min_cost = o->min_cost, .copy_limit = o->copy_limit,
		.copy_budget = o->copy_budget, .critical_copy_budget = o->crit_copy_budget,
		.balance_slack = o->slack, .local_dup_budget = o->local_dup_budget,
		.always_inline_copies = !o->pre_link, .copies_for_carried = o->native,
		.shared_statics_local = o->native, .copies_promote_noinline = o->native,
		.seed = seed ? plan_seed_lookup : NULL, .seed_ctx = seed,
		.seed_copy = seed ? plan_seed_had_copy : NULL,
		.scale = seed && seed->rebalance ? plan_seed_scale : NULL, .scale_ctx = seed,
		.weights = o->weights, .nweights = o->nweights};
	/* Without a real measured imbalance, every seeded unit keeps its partition. */
	popt.seed_keep = seed && !seed->rebalance;
	popt.seed_exact = exact;
	memset(count, 0, sizeof *count);
	if (o->cores > 0) {
		/* The seed's count is kept unless clearly worse: an edit must not
		 * flip the count, which would change every partition. */
		choose_count(mi, &aopt, &popt, o->cores, seed ? seed->npartitions : 0, count);
		popt.max_partitions = count->chosen;
	}
	partition_module(mi, &popt, plan);
	if (exact && plan->nunseeded) {
		/* Units of unnamed symbols only (hand-written IR's @0) are in no
		 * plan: such a hit is never exact, and says nothing wrong. */
		if (plan->nunseeded > plan->nunnamed)
			mtpc_warn("%s: cached plan for %s does not match the module; splitting afresh",
				  cache_path, o->module_path ? o->module_path : o->input);
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

/* Emit. */

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
	struct emit_job job = {mi, plan, o->verify, o->debug};
	char *err = NULL;
	int rc;
	if (use_processes(o, mi)) {
		rc = emit_partitions_forked(mb->m, &job, o->jobs, o->outdir, parts, run, &err);
	} else {
		double t0 = mtpc_now();
		module_bitcode(mb);
		double serialize = mtpc_now() - t0;
		rc = emit_partitions_threaded(mb->bc, mb->len, &job, o->jobs, parts, run, &err);
		run->serial_seconds += serialize;
	}
	if (rc < 0)
		mtpc_fatal("%s: %s", o->input, err);
	return parts;
}

/* Stats, and the whole run. */

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

/* --stats: the summary on stderr (cli.c's usage says what it holds). */
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
		"largest unit %.1f%%, %d alias users, %d promoted, %d shared statics, %d copies (+%.1f%% cost), "
		"max/mean %.3f, %d units seeded%s, %.2f s "
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
	struct count_choice count;
	exact = make_plan(o, mb->m, have_seed ? &seed : NULL, exact, cache_path, &mi, &plan, &count);
	t->emit = mtpc_now();
	struct emitted *parts = emit(o, mb, &mi, &plan, &t->run);
	t->write = mtpc_now();
	struct plan_meta meta = {input_hash, options_hash, options_text, mtpc_now() - t->start,
				 count.chosen ? &count : NULL};
	char *json = plan_to_json(&mi, &plan, &meta);
	write_outputs(o->outdir, o->debug, verbatim(o, &plan), &mi, &plan, parts, json);
	if (cache) {
		mtpc_cache_store(cache, o->module_path ? o->module_path : o->input, input_hash,
				 options_hash, json, mtpc_now() - t->start, exact);
		mtpc_cache_close(cache);
	}
	if (o->stats)
		print_stats(o, &mi, &plan, parts, exact, t);
	if (o->stats && count.chosen) {
		char *why = count_choice_describe(&count);
		fprintf(stderr, "mtpc-split: %s: %s\n", o->input, why);
		free(why);
	}
	count_choice_free(&count);
	free(parts);
	free(json);
	split_plan_free(&plan);
	module_info_free(&mi);
	if (have_seed)
		plan_seed_free(&seed);
	free(cache_path);
}

int main(int argc, char **argv)
{
	mtpc_set_progname(argv[0]);
	struct options o;
	parse_args(argc, argv, &o);
	if (o.join) {
		char *err = NULL;
		int st = join_partitions(o.join, o.join_plan, o.inputs, o.ninputs, o.outdir, !o.join_no_inline, &err) < 0;
		if (st)
			mtpc_error("%s", err);
		free(err);
		options_free(&o);
		return st;
	}
	if (o.print_cost || o.print_visibility) {
		int st = o.print_cost ? print_costs(o.inputs, o.ninputs, o.outdir)
				      : print_visibility(o.inputs, o.ninputs, o.outdir);
		options_free(&o);
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
	options_free(&o);
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
