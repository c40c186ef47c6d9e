/* graph.h: the inner Ninja graph of one MTPC link (or compile), shared by
 * every front end: modules.c (the modules, their names and directories,
 * writing), choose.c (which are split: the policy), emit.c (their edges).
 *
 * The module part (graph_emit_modules(), modules.c, choose.c, emit.c) is the same for every
 * front end: it decides per ThinLTO module whether it is split (see
 * graph_conf: by estimated backend cost, corrected by measured history, or
 * by bitcode bytes) and writes its edges: the plain backend, or split ->
 * slots bound by a dyndep file -> merge (one slot for a relayed module,
 * RELAY_FRACTION), each ending in <dir>/native.o.
 * Around it, each front end adds what it owns:
 *   mtpc-link (link/link_graph.c, link_graph_build()): from the parsed link command,
 *     the thin link before the modules and the final link after them;
 *   mtpc-distribute (distribute/mtpc_distribute.c): lld has done the thin link; the shards
 *     are copied in and each native.o is delivered to lld's job output.
 * For mtpc-link, graph_build() produces in memory everything the inner
 * build needs (all written by graph_write() only if changed):
 *   build.ninja     thinlink -> backend | split -> slots -> merge -> link [-> dwp]
 *   thinlink.rsp    the link command for --thinlto-index-only (absolute paths)
 *   link.rsp        the final link command on the native objects
 *   modules.list    absolute module paths, one a line (read by the thinlink step)
 * Layout of the inner directory (paths in build.ninja are relative to it):
 *   index/<abs module path>.thinlto.bc   shard, copied from stage/ if changed
 *   ar/<archive>-<hash>/<n>-<member>     extracted archive members
 *   mod/<key>/native.o                   what the final link takes
 *   mod/<key>/{split.dd,split.n,backend.o,p<i>.o,parts/}   split and relayed modules
 *   mod/<key>/split.recheck             what a split for speed was chosen from
 *   mod/<key>/{native,backend,p<i>}.dwo  with -gsplit-dwarf, next to each object
 * and, with -gsplit-dwarf on the link, <output>.dwp next to the output.
 * where <key> is the module's file name plus a hash of its absolute path.
 * mtpc-distribute uses the same layout with index/<key>.thinlto.bc. */
#ifndef MTPC_NG_GRAPH_H
#define MTPC_NG_GRAPH_H

#include "buf.h"
#include "makespan.h"

/* Measured history of one module. */
struct module_history {
	double seconds;  /* CPU seconds of its last backend (or of its slots
	                  * together), or -1 if unknown */
	int was_split;   /* whether it was split then, -1 if unknown */
	int rebuilds;    /* its last rebuilds recorded (plain backend, or the
	                  * import of a relayed module or of one split for its
	                  * edits; at most MTPC_CACHE_REBUILDS_KEPT), and how */
	int forced;      /* many of them other modules' changes forced: its own
	                  * bitcode had not changed (what a relay saves) */
	int changed;     /* how many its own changes caused: the others, but
	                  * the first one recorded (nothing to compare it with)
	                  * while it is kept (what a split for edits saves) */
	int parted;      /* how many of its own changes were seen through its
	                  * split for edits (the same partitions as the rebuild
	                  * before), */
	int wide;        /* and how many of those rewrote most partitions
	                  * (struct mtpc_rebuilds): the split saved nothing */
};
typedef void (*graph_history_fn)(void *ctx, const char *module_path, struct module_history *h);

/* Default cost threshold, in summary instructions: about 6 s of backend on
 * a 2020s x86 core (SQLite's sqlite3.c: 221k instructions, 15 s). A split
 * costs about a tenth of the module's backend more work (import + split +
 * merge around the slots); it pays where that module is the link's tail,
 * not in a build whose many links keep every core busy anyway: a project
 * of many 3-6 s modules (googletest's unity build, 69k each) built 1.12
 * times the work of plain ThinLTO at 50k. */
#define GRAPH_DEFAULT_COST_THRESHOLD 100000

/* Whether a split pays: makespan.h (the one cost model of the choice). */

/* A module not split, with at least 1/RELAY_FRACTION of the threshold's
 * cost (the default of graph_conf.relay_cost), may be relayed: split into
 * one partition (import, then placeholder checksums and virtual lines),
 * compiled by one slot, merged. Its shard changes whenever a module it
 * imports from changes at all, and the plain backend then recompiles it;
 * relayed, it recompiles only when the code it imports changes. But a relay
 * costs an import step (a tenth to 40% of the backend) and a merge on every
 * rebuild, and on a full build it saves nothing: so only a module whose
 * recent rebuilds were mostly forced by other modules' changes is relayed
 * (RELAY_MIN_FORCED of its last rebuilds and at least half of them, by the
 * plan cache's history: struct module_history). Every other module that is
 * not split costs exactly one plain backend edge. */
#define RELAY_FRACTION 8
#define RELAY_MIN_FORCED 2

/* A module that is not split for speed (below the threshold, or held: the
 * cores are busy) but costs at least 1/EDIT_FRACTION of the threshold, and
 * whose own changes caused EDIT_MIN_CHANGED of its last rebuilds and at
 * least half of them (struct module_history: it is being edited), is split
 * for its edits: into partitions of about 1/EDIT_FRACTION of the threshold
 * each (at least 2, at most graph_conf.kmax), so that an edit of one of its
 * functions recompiles the partitions whose code changed (each slot's
 * partition is written only if it changed), not the whole module. The
 * split step also does what a relay does for the other modules' changes.
 * It costs the split step and the merge on every rebuild, and a tenth more
 * work on a full build, where it saves nothing; a module edited so that
 * nearly every partition changes (a function inlined everywhere) saves
 * nothing either: once EDIT_MIN_CHANGED of the edits seen through its split
 * were wide (rewrote 3 in 4 partitions, struct mtpc_rebuilds) and they are
 * 3 in 4 of those seen, it is plain again. Those observations age out of
 * the history like the rebuilds, so after about MTPC_CACHE_REBUILDS_KEPT
 * more rebuilds it is tried again: the edits may have moved. The history
 * decides again at every link: once other modules' changes cause most of
 * its rebuilds, it is relayed or plain again. Off with graph_conf.relay
 * NEVER (no history-driven choice at all). */
#define EDIT_FRACTION 4
#define EDIT_MIN_CHANGED 2

/* graph_conf.relay: which modules costing at least relay_cost are relayed;
 * NEVER also splits none for its edits (EDIT_FRACTION). */
enum { GRAPH_RELAY_AUTO, GRAPH_RELAY_ALWAYS, GRAPH_RELAY_NEVER };

/* graph_conf.busy: whether the split choice counts, beside the link's own
 * backends, the work other MTPC processes on the machine announced
 * (workboard.h: other links' inner builds, other compiles). AUTO: it does,
 * so a split that would only share busy cores is not made, and the objects
 * then depend on what else ran; IGNORE: the choice depends on the link's
 * (or compile's) inputs alone, for reproducible objects. */
enum { GRAPH_BUSY_AUTO, GRAPH_BUSY_IGNORE };

/* Seconds of backend (or of a plain compile, whose cost counts twice) per
 * cost unit, where no measured history says better: about 6 s for
 * GRAPH_DEFAULT_COST_THRESHOLD instructions on this project's machines. */
#define GRAPH_DEFAULT_SECONDS_PER_COST (6.0 / GRAPH_DEFAULT_COST_THRESHOLD)

struct graph_conf {
	const char *self;       /* absolute path of mtpc-link (runs the steps) */
	const char *split_tool; /* mtpc-split */
	const char *llvm_bin;   /* directory with ld.lld and llvm-objcopy */
	const char *cache;      /* plan cache path or NULL */
	const char *min_cost;   /* passed to mtpc-split --min-cost, or NULL */
	struct strv launcher;   /* prefix of backend and slot commands */
	struct strv split_args; /* extra mtpc-split arguments */
	long long threshold;    /* >= 0: split modules with more bitcode bytes than
	                         * this (0: all); -1: choose by cost */
	long long cost_threshold; /* by cost: split modules whose cost (summary
	                           * instructions, or measured) is at least this */
	long long relay_cost;   /* by cost: relay the modules not split that cost
	                         * at least this (RELAY_FRACTION); none by bytes */
	int relay;              /* GRAPH_RELAY_*: AUTO relays those only on the
	                         * history's evidence (RELAY_MIN_FORCED) */
	int busy;               /* GRAPH_BUSY_* */
	graph_history_fn history; /* measured module times (may be NULL) */
	void *history_ctx;
	int type_units;         /* slots compile with -fdebug-types-section: each
	                         * partition's C++ types become DWARF type units in
	                         * COMDAT groups, which the final link (and llvm-dwp)
	                         * keeps once for all partitions instead of once per
	                         * partition */
	int kmax;               /* slots per split module */
	int jobs;               /* -j of the inner build (sched.h: partition shares) */
	int split_cores;        /* > 0: the lanes a compile's split may count on
	                         * beside the work board's load, passed to
	                         * mtpc-split --cores (count.h); 0: none */
	const char *inner;      /* absolute inner build directory */
	const char *outer_cwd;  /* absolute directory the link command runs in */
	/* Prepended to the inner directory's paths in build.ninja: "" when Ninja
	 * runs in the inner directory (mtpc-link), "<inner>/" when it runs in
	 * the link's directory (mtpc-distribute: lld's module paths are relative
	 * to it, inside the index shards too). */
	const char *prefix;
};

/* How backends and slots compile: "<driver> -c -x ir <bitcode>
 * -fthinlto-index=<shard> <flags> -o <object>". */
/* What a split module's slots compile, and what ends the split. */
enum split_stage {
	STAGE_BACKEND, /* a link's: slots compile post-import partitions as
	                * ThinLTO backends, the merge makes one native object */
	STAGE_PRELINK, /* a ThinLTO compile's: slots run the ThinLTO pre-link
	                * pipeline on partitions of the frontend's output, the
	                * join makes one ThinLTO object */
	STAGE_NATIVE,  /* a plain compile's: slots run the compile's whole
	                * pipeline and code generation on partitions of the
	                * frontend's output, the merge makes one native object
	                * (its fallback the plain compile) */
};

struct graph_codegen {
	enum split_stage stage;
	char *driver;       /* the clang to run (absolute if given with a '/') */
	struct strv driver_args; /* words right after it, before "-c" (DTLTO's
	                          * --thinlto-remote-compiler-prepend-arg) */
	struct strv flags;  /* what lld's in-process backend would use: -O<n>,
	                     * PIC, sections, target and codegen options */
	int pic;            /* the code is position independent (mtpc-split --reloc) */
	int split_dwarf;    /* write a .dwo next to every object */
	int type_units;     /* compile partitions with -fdebug-types-section:
	                     * graph_conf's type_units, unless the link builds a
	                     * .gdb_index (gdb would find no type in a type unit) */
	int names_once;     /* the merge lists each GNU pubnames name once per
	                     * module (--names once): the link is known to build
	                     * no .gdb_index from them (mtpc-link; the distributor
	                     * cannot know) */
	/* STAGE_PRELINK and STAGE_NATIVE: the compile of partition bitcode in
	 * into out (appended to cmd; with split_dwarf, its split units into
	 * dwo_out, else dwo_out is NULL), and the plain compile the join or
	 * merge falls back to, writing the module's native.o (and with
	 * split_dwarf native.dwo; run in outer_cwd); STAGE_NATIVE: gz, the -gz
	 * format the merge keeps, or NULL. */
	void (*partition_cmd)(void *ctx, const char *in, const char *out, const char *dwo_out, struct strv *cmd);
	void *partition_ctx;
	struct strv fallback;
	const char *gz;
};

struct module {
	char *path;  /* the bitcode object as the thin link named it (the
	              * shards name it so): absolute for mtpc-link */
	char *id;    /* its identity across links (absolute, without lld's
	              * per-link parts): the module history's key */
	char *name;  /* short name for messages */
	char *key;   /* unique directory name under mod/ */
	char *dir;   /* <prefix>mod/<key>: its files, as build.ninja names them */
	char *shard; /* its index shard, as build.ninja names it */
	long long size;  /* bitcode bytes */
	long long insts; /* instructions in its ThinLTO summary, -1 if unknown */
	double seconds;  /* measured backend seconds (history), -1 if unknown */
	long long cost;  /* what the choice compared: instructions, estimated or
	                  * (history) measured seconds in instructions */
	int measured;    /* cost comes from the history */
	int was_split;   /* history: split at its last build (1), not (0), unknown (-1) */
	int split;
	int parts;       /* partitions of a split module (makespan_split_choice;
	                  * graph_conf.kmax when chosen by size) */
	int held;        /* its cost reached the threshold, but splitting it would
	                  * not shorten the link's backends (the cores are busy) */
	int for_edits;   /* split (in parts) for its edits, not for speed
	                  * (EDIT_FRACTION) */
	int wide_edits;  /* its edits rewrote most of its partitions when it
	                  * was split for them: not split for them now */
	int relay;       /* not split, but compiled as one partition behind the
	                  * split step's import (RELAY_FRACTION) */
	int record;      /* its backend/merge step records its time (history) */
	int watch;       /* neither split nor relayed, but its history (which
	                  * only the inner build records) could make it so: at
	                  * least half the split threshold, or a relay candidate
	                  * (mtpc-link runs an inner build for it only when it
	                  * relinks an output: needs_inner_build) */
	int rebuilds, forced, changed, parted, wide; /* history: struct module_history */
	struct split_recheck recheck; /* split for speed beside the work board
	                               * (graph_conf.busy AUTO): what its split
	                               * step makes the choice again from
	                               * (MOD_RECHECK); parts 0: it does not */
	char *why;   /* why it is split, relayed or not, for people: "split: cost
	              * 221348 instructions >= 100000" (graph_choose; the front end
	              * that decides without it sets its own); heap string or NULL */
};

struct graph {
	struct module *mods;
	size_t nmods;
	struct buf ninja;  /* build.ninja */
	char *output; /* absolute path of the link output */
	char *dwp;    /* with -gsplit-dwarf: <output>.dwp (llvm-dwp of every .dwo), else NULL */
	/* Inputs passed through as they are, named in mtpc-link's summary so that
	 * a large source compiled without -flto=thin does not go unnoticed:
	 * native ELF objects (given or archive members) and archives without bitcode. */
	int nnative_objects, nnative_archives;
	/* Predicted by graph_choose (by cost): CPU seconds of the backends,
	 * their makespan on graph_conf.jobs lanes and their longest task (a
	 * backend or a slot), which the front end posts on the work board while
	 * the inner build runs (workboard.h). */
	double work_secs, span_secs, task_secs;
};

/* Add a module (or find the one with this path). id: its identity (see
 * struct module); shard: its index shard as build.ninja names it, NULL for
 * mtpc-link's index/<path>.thinlto.bc. */
struct module *graph_add_module(struct graph *g, const struct graph_conf *gc, const char *path,
				const char *id, const char *shard);

/* Append the header of build.ninja (the rules) for tool (the generator). */
void graph_rules(struct buf *nj, const char *tool);

/* Decide which modules are split and append their edges to g->ninja, split
 * modules first (costliest first: Ninja starts ready edges in manifest
 * order). Returns 0, or -1 if a path cannot be written in a Ninja file. */
int graph_emit_modules(const struct graph_conf *gc, const struct graph_codegen *cg, struct graph *g);

/* Append the edges of one split module m (kmax slots; shares: kmax
 * partition shares, sched.h units, for mtpc-split --weights, or NULL) to
 * nj: the split, the slots bound by its dyndep file, the merge or join
 * (cg->stage). Returns 0, or -1 if a path cannot be written in Ninja. */
int graph_emit_split(struct buf *nj, const struct graph_conf *gc, const struct graph_codegen *cg,
		     const struct module *m, int kmax, const int *shares);

/* Name the modules for messages so that no two have the same name: the
 * file name, or as many trailing directories as tell them apart. */
void graph_name_modules(struct graph *g);

/* "<dir>/native.o" of m: what the module's edges end in; heap string. */
char *graph_native(const struct module *m);

/* What became of split module m after an inner build in the inner
 * directory inner: the partitions it was compiled in, 0 when it was
 * compiled unsplit after all (its split step held it: the cores had filled
 * since the choice, with *held (heap, if held is not NULL) the reason; or
 * the split, a slot or the join failed), -1 when the link does not use it
 * (split.n "0 unused") or nothing is known. */
int graph_split_result(const char *inner, const struct module *m, char **held);

/* Write build.ninja (creating the inner dir and the modules' directories),
 * only if changed. Returns 0 or -1 after an error message. */
int graph_write(const struct graph_conf *gc, const struct graph *g);
/* Write b as the file name of the inner dir, only if changed. Returns 0 or
 * -1 after an error message. */
int graph_put(const struct graph_conf *gc, const char *name, const struct buf *b);
void graph_free(struct graph *g);

/* The key of a module path ("<basename>-<8 hex digits>"); heap string. */
char *graph_module_key(const char *abs_path);

#endif
