/* cache_int.h: internals shared by the cache library files and the
 * mtpc-cache CLI (not installed, not for other parts: they use mtpc_cache.h).
 *
 * Schema (version 2, see docs/cache.md and the migrations in db.c):
 *   plans      one row per (module_hash, options_hash): the plan JSON as-is
 *              plus summary columns, created / last_used (Unix seconds).
 *   partitions one row per partition of a plan (cost, counts).
 *   functions  one row per name in a partition's owned/copies/duplicated.
 *   timings    measured seconds and object bytes per (module_hash,
 *              options_hash, partition), written by the slot edges; keyed by
 *              hash, not plan id, so a slot may record before or after the
 *              plan row is (re)written.
 *   builds     one row per split: time, hit, split seconds, seconds saved.
 *   module_times  (version 2) the last measured backend seconds per module
 *              path: its plain backend, or the sum of its slots. */
#ifndef MTPC_CACHE_INT_H
#define MTPC_CACHE_INT_H

#include "mtpc_cache.h"

#include <jansson.h>
#include <sqlite3.h>

/* PRAGMA application_id of an MTPC cache ("MTPC"), so that a foreign SQLite
 * database is recognised as "not a plan cache" rather than migrated. */
#define CACHE_APPLICATION_ID 0x4d545043
#define CACHE_SCHEMA_VERSION 4

/* Kinds of rows in the functions table. */
enum { FN_OWNED = 0, FN_COPY = 1, FN_DUPLICATED = 2 };

struct mtpc_cache {
	sqlite3 *db;
	char *path;
	int readonly;
	int broken; /* a call failed and warned: later calls are silent no-ops */
};

/* Wall-clock Unix time in seconds (timestamps must survive reboots, so not
 * the monotonic mtpc_now()). */
double cache_now(void);

/* Run a script of static SQL statements one prepared statement at a time
 * (no parameters). Returns a SQLite result code. */
int cache_exec(sqlite3 *db, const char *sql);

/* Prepare one statement; NULL on error (the db's errmsg says why). */
sqlite3_stmt *cache_prepare(sqlite3 *db, const char *sql);

/* The integer of the first column of the one row sql returns (a PRAGMA, a
 * count). Returns SQLITE_OK, or the SQLite error code. */
int cache_query_int(sqlite3 *db, const char *sql, long long *out);

/* Begin a write transaction. IMMEDIATE so that the write lock is taken (or
 * waited for, through the busy timeout) up front: a DEFERRED transaction that
 * later upgrades to a writer can fail with SQLITE_BUSY without waiting. */
int cache_begin(mtpc_cache *c);
int cache_commit(mtpc_cache *c);
void cache_rollback(mtpc_cache *c);

/* The one warning for a failed call: "plan cache <path>: <what>: <sqlite
 * error>; continuing without it"; marks the handle broken. */
void cache_fail(mtpc_cache *c, const char *what);

/* True when $MTPC_CACHE_QUIET is set (and not "0"): warnings are left to
 * whoever set it (mtpc-link warns once per link; its steps stay silent). */
int cache_quiet(void);

/* True (after no warning) if calls on c must be skipped. */
int cache_unusable(const mtpc_cache *c);

/* Timings of one plan key, for merging into plan JSON: add
 * "measured_seconds" and "object_bytes" to every partition object of plan
 * that has a timing row. Returns a SQLite result code. */
int cache_add_timings(mtpc_cache *c, json_t *plan, const char *module_hash, const char *options_hash);

#endif
