/* inner_dir.h: the names of the files MTPC's tools hand each other, and
 * mtpc-split's exit statuses: a contract between splitter/ (which writes a
 * split's outputs) and ninja-gen/ (whose graph names them as edge outputs
 * and inputs, and whose steps read them). One definition, so that a name
 * cannot drift between the writer and its readers.
 *
 * An inner build (a link's <output>.mtpc/) holds:
 *   INNER_REGULAR_LTO          the thin link's regular LTO object
 *   INNER_MODULES_LIST         the bitcode modules, one absolute path a line
 *   INNER_THINLINK_RSP, INNER_LINK_RSP   the thin link's and final link's arguments
 *   INNER_THINLINK_CRASHED     left by a thin link whose linker crashed
 *   INNER_JOBS_IMPLICIT        the lock of the front end's make token (jobs.h)
 *   INNER_TRACE                the last inner build's trace (ninja-gen/trace/trace.h)
 *   mod/<key>/                 one module (MOD_*), its split outputs in parts/ (SPLIT_*)
 */
#ifndef MTPC_INNER_DIR_H
#define MTPC_INNER_DIR_H

/* mtpc-split's outputs in its output directory. */
#define SPLIT_PLAN "plan.json"         /* the plan; written last, removed first */
#define SPLIT_LOCALIZE "localize.txt"  /* promoted symbols, local again after the merge */
#define SPLIT_RENAME "rename.txt"      /* their own names back (llvm-objcopy --redefine-syms) */
#define SPLIT_CHECKSUMS "checksums.txt" /* placeholder and real source MD5s */
#define SPLIT_LINES "lines.txt"        /* virtual to real lines (virtual_lines.h) */
#define SPLIT_PART_FMT "p%d.bc"        /* partition i */

/* mtpc-split's exit statuses. */
#define SPLIT_EXIT_OK 0
#define SPLIT_EXIT_ERROR 1     /* one line naming the file; the output directory unchanged */
#define SPLIT_EXIT_UNUSED 3    /* --thinlto-index is empty: a module the link does not use */

/* A module's directory in an inner build: mod/<key>/. */
#define INNER_MOD_DIR "mod"
#define MOD_PARTS "parts"        /* mtpc-split's output directory */
#define MOD_NATIVE "native.o"    /* what the final link takes */
#define MOD_BACKEND "backend.o"  /* the plain backend, on a fallback */
#define MOD_DYNDEP "split.dd"    /* the split's dyndep file */
#define MOD_COUNT "split.n"      /* partitions used; "0 unused": not linked;
                                  * "0 held: <why>": its split step held it
                                  * whole (the cores had filled since the
                                  * choice, MOD_RECHECK) */
#define MOD_COUNT_UNUSED "unused"
#define MOD_COUNT_HELD "held"
#define MOD_RECHECK "split.recheck" /* what the choice to split it was made
                                     * from (makespan.h, struct split_recheck) */
#define MOD_SLOT_FMT "p%d.o"     /* partition i's object */
#define MOD_FOLD_LOCALIZE "fold.localize" /* the merge's: the partitions' folded */
#define MOD_FOLD_RENAME "fold.rename"     /* bodies, local again under their names
                                           * (common/fold_names.h) */
#define MOD_UNSPLIT "unsplit"    /* present while the module's merge or join fell
                                  * back to the unsplit compile after its split
                                  * succeeded (a slot or the join failed) */

/* The inner directory. */
#define INNER_REGULAR_LTO "regular-lto.o"
#define INNER_MODULES_LIST "modules.list"
#define INNER_THINLINK_RSP "thinlink.rsp"
#define INNER_LINK_RSP "link.rsp"
#define INNER_THINLINK_CRASHED "thinlink.crashed"
#define INNER_JOBS_IMPLICIT "jobs.implicit"
#define INNER_THINLTO_CACHE "thinlto-cache" /* lld's cache, for a link MTPC leaves to it */
#define INNER_TRACE "trace.json"  /* where the last inner build's time went (trace.h) */

/* Next to the plan cache's database: the path of the last trace written,
 * one line (what `mtpc-cache trace` reads without a path). */
#define CACHE_LAST_TRACE "last-trace"

#endif
