/* mtpc_cache.h: the partition plan cache (SQLite).
 *
 * One database holds, per module: the plans produced by mtpc-split, keyed by
 * (module content hash, options hash), the module path they came from (so a
 * changed module can be seeded from its previous plan), one row per build
 * (hit or miss, split time), and the measured compile time and object size of
 * each partition (recorded by the slot edges).
 *
 * Every function is safe to call from many processes at once (WAL mode, busy
 * timeout). A failure never aborts the caller: functions print one warning
 * naming the database and the problem and return an error value, so the build
 * can go on uncached. After a failure of the database (locked, corrupt,
 * unwritable...) the handle stays valid but every later call on it is a
 * silent no-op returning the error value, so a build that lost its cache warns
 * once, not once per call. (Bad arguments, such as a plan that is not JSON,
 * warn but leave the handle usable.) A NULL handle is accepted by
 * every function (same silent no-op), so callers need not test the result of
 * mtpc_cache_open().
 *
 * Busy timeout: $MTPC_CACHE_BUSY_TIMEOUT_MS milliseconds (default 5000).
 * $MTPC_CACHE_QUIET=1 silences the warnings: mtpc-link checks the cache once
 * per link, warns once if it is unusable, and sets it for its inner build so
 * that the many steps of one link do not repeat that warning. */
#ifndef MTPC_CACHE_H
#define MTPC_CACHE_H

typedef struct mtpc_cache mtpc_cache;

/* The database path the build uses: explicit (if non-NULL and non-empty), else
 * $MTPC_CACHE, else $XDG_CACHE_HOME/mtpc/plans.sqlite, else
 * $HOME/.cache/mtpc/plans.sqlite. Returns a heap string; *source (if non-NULL)
 * is set to "option", "MTPC_CACHE", "XDG_CACHE_HOME" or "HOME". */
char *mtpc_cache_resolve_path(const char *explicit_path, const char **source);

/* Open (creating and migrating the schema unless readonly). Returns NULL after
 * one warning if the file cannot be opened, is not a cache, or is locked. */
mtpc_cache *mtpc_cache_open(const char *path, int readonly);
void mtpc_cache_close(mtpc_cache *c);

/* Exact hit: the stored plan JSON (heap string) for this module content and
 * these options, or NULL. The caller validates it before trusting it. */
char *mtpc_cache_lookup(mtpc_cache *c, const char *module_hash, const char *options_hash);

/* The most recent plan stored for module_path with these options, whatever its
 * module hash, with "measured_seconds" and "object_bytes" added to each
 * partition that has timings; heap string or NULL. Used to seed a new split. */
char *mtpc_cache_lookup_previous(mtpc_cache *c, const char *module_path, const char *options_hash);

/* Store a plan (replacing one with the same key) and log one build row.
 * hit: 1 if the plan came from mtpc_cache_lookup. Returns 0 or -1. */
int mtpc_cache_store(mtpc_cache *c, const char *module_path, const char *module_hash,
		     const char *options_hash, const char *plan_json, double split_seconds, int hit);

/* Record one slot's measured compile time and object size. Returns 0 or -1. */
int mtpc_cache_record_partition(mtpc_cache *c, const char *module_hash, const char *options_hash,
				int partition, double seconds, long long object_bytes);

/* Record the measured backend CPU seconds of a module by path: its plain
 * backend (split 0), or the sum of its partitions' compiles (split 1).
 * Returns 0 or -1. */
int mtpc_cache_record_module(mtpc_cache *c, const char *module_path, double seconds, int split);

/* The last seconds recorded for module_path, or -1 if none (or on error);
 * *split (if non-NULL) gets the recorded split flag, or -1 if none. */
double mtpc_cache_module_seconds(mtpc_cache *c, const char *module_path, int *split);

/* How many of a module's latest rebuilds the cache keeps. */
#define MTPC_CACHE_REBUILDS_KEPT 8

/* Record that module_path was rebuilt (its plain backend, or the import of
 * a relayed module or of one split for its edits, ran) while its own
 * bitcode hashed to module_hash: the rebuild was forced by another module's
 * change when the hash is the one recorded last time. parts: the partitions
 * of the split that ran (0: none, the module compiled whole), rewritten: how
 * many of them that split changed (wrote anew). A rebuild by the module's
 * own change through a split of as many partitions as the rebuild before is
 * an observation of its edits (struct mtpc_rebuilds: parted), and a wide one
 * when it rewrote at least MTPC_CACHE_WIDE_NUM / MTPC_CACHE_WIDE_DEN of
 * them: its slots then redo about the whole module's work, so the split
 * saved nothing. Keeps the last MTPC_CACHE_REBUILDS_KEPT rebuilds. Returns 0
 * or -1. */
#define MTPC_CACHE_WIDE_NUM 3
#define MTPC_CACHE_WIDE_DEN 4
int mtpc_cache_record_rebuild(mtpc_cache *c, const char *module_path, const char *module_hash, int parts,
			      int rewritten);

/* A module's last rebuilds (at most MTPC_CACHE_REBUILDS_KEPT), as
 * mtpc_cache_record_rebuild recorded them. */
struct mtpc_rebuilds {
	int runs;   /* rebuilds recorded */
	int forced; /* of them, forced by other modules: its own bitcode had not
	             * changed (what relaying the module would have saved) */
	int parted; /* of them, its own changes seen through its split: a split
	             * of as many partitions as the rebuild before */
	int wide;   /* of those, the ones that rewrote most of the partitions */
};

/* The rebuilds recorded for module_path into *r (all 0 if none). Returns
 * r->runs, or -1 on error. */
int mtpc_cache_module_rebuilds(mtpc_cache *c, const char *module_path, struct mtpc_rebuilds *r);

/* Sum of the measured seconds of partitions 0..n-1 of one plan key, or -1
 * unless every one of them has a timing row. */
double mtpc_cache_plan_seconds(mtpc_cache *c, const char *module_hash, const char *options_hash, int n);

/* ---- Added for the mtpc-cache CLI (and usable by the build) ---- */

/* mtpc_cache_open() without the warning: on failure returns NULL and, if
 * errmsg is non-NULL, sets *errmsg to a heap string "<path>: <problem>" (no
 * such file, not a plan cache, newer schema, locked, not writable...) that the
 * caller reports as it sees fit; with errmsg NULL it warns like
 * mtpc_cache_open(). A read-only open never creates or migrates anything. */
mtpc_cache *mtpc_cache_open_ex(const char *path, int readonly, char **errmsg);

/* Garbage-collect: remove the plans (with their partitions, functions and
 * timings) not used for more than max_age_days (ignored if < 0) and the build
 * log and module time rows older than that; then, if max_bytes >= 0, remove least recently
 * used plans until the data fits in max_bytes; then return the freed pages to
 * the file system. *removed (if non-NULL) gets the number of plans removed.
 * Returns 0 or -1 (after one warning). */
int mtpc_cache_gc(mtpc_cache *c, double max_age_days, long long max_bytes, int *removed);

#endif
