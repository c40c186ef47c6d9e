/* gc.c: keeping the cache small. Plans are removed by age (last use) and
 * then least recently used first until the data fits; deletes cascade to the
 * partitions and functions rows, timings go with their plan's key. */
#include "cache_int.h"
#include "util.h"

/* Bytes of live data: pages in use times page size. The file itself only
 * shrinks after incremental_vacuum, and the WAL after a checkpoint. */
static int used_bytes(sqlite3 *db, long long *bytes)
{
	return cache_query_int(db,
			       "SELECT ((SELECT page_count FROM pragma_page_count()) - "
			       "(SELECT freelist_count FROM pragma_freelist_count())) * "
			       "(SELECT page_size FROM pragma_page_size())",
			       bytes);
}

/* Run a statement with one optional double parameter; *changes gets the
 * number of rows it changed. */
static int run1(sqlite3 *db, const char *sql, double arg, int *changes)
{
	sqlite3_stmt *st = cache_prepare(db, sql);
	int rc;
	if (!st)
		return sqlite3_errcode(db);
	if (sqlite3_bind_parameter_count(st) > 0)
		sqlite3_bind_double(st, 1, arg);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (changes)
		*changes = sqlite3_changes(db);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Timings whose plan is gone. Only old ones: a slot may record its timing
 * in the instant between a split's lookup and its store. */
static const char orphan_timings[] =
	"DELETE FROM timings WHERE recorded < ?1 AND NOT EXISTS (SELECT 1 FROM plans p "
	"WHERE p.module_hash = timings.module_hash AND p.options_hash = timings.options_hash)";

int mtpc_cache_gc(mtpc_cache *c, double max_age_days, long long max_bytes, int *removed)
{
	double now = cache_now();
	int n = 0, k, rc;
	long long bytes = 0;

	if (removed)
		*removed = 0;
	if (cache_unusable(c))
		return -1;
	if (c->readonly) {
		mtpc_warn("plan cache %s: opened read-only, cannot collect garbage", c->path);
		c->broken = 1;
		return -1;
	}
	if ((rc = cache_begin(c)))
		goto fail;
	if (max_age_days >= 0) {
		double cutoff = now - max_age_days * 86400.0;
		if ((rc = run1(c->db, "DELETE FROM plans WHERE last_used < ?1", cutoff, &k)))
			goto fail;
		n += k;
		if ((rc = run1(c->db, "DELETE FROM builds WHERE time < ?1", cutoff, NULL)))
			goto fail;
		if ((rc = run1(c->db, "DELETE FROM module_times WHERE recorded < ?1", cutoff, NULL)))
			goto fail;
		if ((rc = run1(c->db, "DELETE FROM module_rebuilds WHERE recorded < ?1", cutoff, NULL)))
			goto fail;
	}
	if ((rc = run1(c->db, orphan_timings, now - 3600, NULL)))
		goto fail;
	while (max_bytes >= 0) {
		if ((rc = used_bytes(c->db, &bytes)))
			goto fail;
		if (bytes <= max_bytes)
			break;
		/* One plan at a time: sizes vary a lot between modules. */
		if ((rc = run1(c->db, "DELETE FROM timings WHERE (module_hash, options_hash) IN "
				      "(SELECT module_hash, options_hash FROM plans ORDER BY last_used, id LIMIT 1)",
			       0, NULL)) ||
		    (rc = run1(c->db, "DELETE FROM plans WHERE id IN "
				      "(SELECT id FROM plans ORDER BY last_used, id LIMIT 1)", 0, &k)))
			goto fail;
		n += k;
		if (k)
			continue;
		/* No plans left: the build log is what is left to trim. */
		if ((rc = run1(c->db, "DELETE FROM builds WHERE id IN "
				      "(SELECT id FROM builds ORDER BY time, id LIMIT 256)", 0, &k)))
			goto fail;
		if (!k)
			break; /* the empty schema itself is larger than max_bytes */
	}
	if ((rc = cache_commit(c)))
		goto fail;
	/* Give the space back; best effort, a busy reader only delays it. */
	cache_exec(c->db, "PRAGMA incremental_vacuum");
	cache_exec(c->db, "PRAGMA wal_checkpoint(TRUNCATE)");
	if (removed)
		*removed = n;
	return 0;
fail:
	cache_fail(c, "cannot collect garbage");
	return -1;
}
