/* store.c: what the build does with the cache: look a plan up (exact key or
 * the previous plan of the same module), store a plan with its build row,
 * record a slot's measured compile time.
 *
 * The plan JSON is stored as the splitter wrote it (lookups return it
 * byte for byte); the partitions and functions rows are a denormalized copy
 * for the CLI's list/show/diff/stats, rebuilt whenever the plan text
 * changes. */
#include "cache_int.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static int bad_key(const char *s) { return !s || !*s; }

char *mtpc_cache_lookup(mtpc_cache *c, const char *module_hash, const char *options_hash)
{
	sqlite3_stmt *st;
	char *plan = NULL;
	int rc;

	if (cache_unusable(c) || bad_key(module_hash) || bad_key(options_hash))
		return NULL;
	st = cache_prepare(c->db, "SELECT plan_json FROM plans WHERE module_hash = ?1 AND options_hash = ?2");
	if (!st) {
		cache_fail(c, "cannot look up plan");
		return NULL;
	}
	sqlite3_bind_text(st, 1, module_hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, options_hash, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		plan = xstrdup((const char *)sqlite3_column_text(st, 0));
	else if (rc != SQLITE_DONE)
		cache_fail(c, "cannot look up plan");
	sqlite3_finalize(st);
	return plan;
}

int cache_add_timings(mtpc_cache *c, json_t *plan, const char *module_hash, const char *options_hash)
{
	json_t *parts = json_object_get(plan, "partitions");
	sqlite3_stmt *st;
	int rc;

	st = cache_prepare(c->db, "SELECT partition, seconds, object_bytes FROM timings "
				  "WHERE module_hash = ?1 AND options_hash = ?2");
	if (!st)
		return sqlite3_errcode(c->db);
	sqlite3_bind_text(st, 1, module_hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, options_hash, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long idx = sqlite3_column_int64(st, 0);
		size_t i;
		json_t *p;
		/* Match on "index", not array position: the plan says which is which. */
		json_array_foreach(parts, i, p) {
			if (json_integer_value(json_object_get(p, "index")) != idx ||
			    !json_is_integer(json_object_get(p, "index")))
				continue;
			json_object_set_new(p, "measured_seconds", json_real(sqlite3_column_double(st, 1)));
			json_object_set_new(p, "object_bytes", json_integer(sqlite3_column_int64(st, 2)));
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

char *mtpc_cache_lookup_previous(mtpc_cache *c, const char *module_path, const char *options_hash)
{
	sqlite3_stmt *st;
	char *out = NULL;
	json_t *plan = NULL;
	json_error_t jerr;
	int rc;

	if (cache_unusable(c) || bad_key(module_path) || bad_key(options_hash))
		return NULL;
	/* Most recently used, not most recently created: after an edit and its
	 * revert, the plan the build used last is the one to stay close to. */
	st = cache_prepare(c->db, "SELECT plan_json, module_hash FROM plans "
				  "WHERE module_path = ?1 AND options_hash = ?2 "
				  "ORDER BY last_used DESC, id DESC LIMIT 1");
	if (!st) {
		cache_fail(c, "cannot look up previous plan");
		return NULL;
	}
	sqlite3_bind_text(st, 1, module_path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, options_hash, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		goto done;
	if (rc != SQLITE_ROW) {
		cache_fail(c, "cannot look up previous plan");
		goto done;
	}
	plan = json_loads((const char *)sqlite3_column_text(st, 0), 0, &jerr);
	if (!json_is_object(plan)) {
		/* store() only accepts valid JSON, so someone edited the row. */
		mtpc_warn("plan cache %s: stored plan for %s is not valid JSON (%s); ignoring it",
			  c->path, module_path, jerr.text);
		goto done;
	}
	if ((rc = cache_add_timings(c, plan, (const char *)sqlite3_column_text(st, 1), options_hash))) {
		cache_fail(c, "cannot read partition timings");
		goto done;
	}
	out = json_dumps(plan, JSON_COMPACT);
	if (out) { /* hand back memory the caller frees with free() */
		char *copy = xstrdup(out);
		free(out);
		out = copy;
	}
done:
	json_decref(plan);
	sqlite3_finalize(st);
	return out;
}

/* Insert the denormalized rows of one plan. */
static int insert_partitions(mtpc_cache *c, long long plan_id, json_t *parts)
{
	static const char *const kinds[] = {"owned", "copies", "duplicated"};
	sqlite3_stmt *pst = cache_prepare(c->db, "INSERT OR REPLACE INTO partitions"
						 "(plan_id, idx, file, cost, owned, copies, duplicated) "
						 "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	sqlite3_stmt *fst = cache_prepare(c->db, "INSERT INTO functions(plan_id, kind, name, partition) "
						 "VALUES(?1, ?2, ?3, ?4)");
	size_t i, j;
	json_t *p, *name;
	int rc = SQLITE_OK;

	if (!pst || !fst) {
		rc = sqlite3_errcode(c->db);
		goto out;
	}
	json_array_foreach(parts, i, p) {
		long long idx = json_is_integer(json_object_get(p, "index"))
					? json_integer_value(json_object_get(p, "index"))
					: (long long)i;
		sqlite3_bind_int64(pst, 1, plan_id);
		sqlite3_bind_int64(pst, 2, idx);
		if (json_is_string(json_object_get(p, "file")))
			sqlite3_bind_text(pst, 3, json_string_value(json_object_get(p, "file")), -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(pst, 3);
		sqlite3_bind_int64(pst, 4, json_integer_value(json_object_get(p, "cost")));
		for (int k = 0; k < 3; k++) {
			json_t *names = json_object_get(p, kinds[k]);
			sqlite3_bind_int64(pst, 5 + k, (long long)json_array_size(names));
			json_array_foreach(names, j, name) {
				if (!json_is_string(name))
					continue;
				sqlite3_bind_int64(fst, 1, plan_id);
				sqlite3_bind_int(fst, 2, k);
				sqlite3_bind_text(fst, 3, json_string_value(name), -1, SQLITE_STATIC);
				sqlite3_bind_int64(fst, 4, idx);
				if ((rc = sqlite3_step(fst)) != SQLITE_DONE)
					goto out;
				sqlite3_reset(fst);
			}
		}
		if ((rc = sqlite3_step(pst)) != SQLITE_DONE)
			goto out;
		sqlite3_reset(pst);
	}
	rc = SQLITE_OK;
out:
	sqlite3_finalize(pst);
	sqlite3_finalize(fst);
	return rc;
}

/* Summary numbers of a plan for the plans row. */
static void summarize(json_t *parts, long long *functions, long long *cost)
{
	size_t i;
	json_t *p;
	*functions = *cost = 0;
	json_array_foreach(parts, i, p) {
		*functions += (long long)json_array_size(json_object_get(p, "owned"));
		*cost += json_integer_value(json_object_get(p, "cost"));
	}
}

int mtpc_cache_store(mtpc_cache *c, const char *module_path, const char *module_hash,
		     const char *options_hash, const char *plan_json, double split_seconds, int hit)
{
	json_t *plan = NULL, *parts;
	json_error_t jerr;
	sqlite3_stmt *st = NULL;
	long long plan_id = -1, functions, cost;
	double now = cache_now(), saved = 0;
	int rc, same = 0;

	if (cache_unusable(c))
		return -1;
	if (bad_key(module_path) || bad_key(module_hash) || bad_key(options_hash) || !plan_json) {
		mtpc_warn("plan cache %s: not storing a plan without module path, hashes and JSON", c->path);
		return -1;
	}
	if (c->readonly) {
		mtpc_warn("plan cache %s: opened read-only, not storing the plan for %s", c->path, module_path);
		c->broken = 1;
		return -1;
	}
	/* Validate before storing: lookups hand this text to the splitter and
	 * the CLI reads the rows derived from it. A bad plan is the caller's bug,
	 * not the cache's, so the handle stays usable. */
	plan = json_loads(plan_json, 0, &jerr);
	parts = json_object_get(plan, "partitions");
	if (!json_is_object(plan) || !json_is_array(parts)) {
		mtpc_warn("plan cache %s: not storing the plan for %s: %s", c->path, module_path,
			  plan ? "no \"partitions\" array" : jerr.text);
		json_decref(plan);
		return -1;
	}
	summarize(parts, &functions, &cost);

	if ((rc = cache_begin(c)))
		goto fail;
	st = cache_prepare(c->db, "SELECT id, plan_json = ?3, split_seconds FROM plans "
				  "WHERE module_hash = ?1 AND options_hash = ?2");
	if (!st)
		goto fail;
	sqlite3_bind_text(st, 1, module_hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, options_hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, plan_json, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		plan_id = sqlite3_column_int64(st, 0);
		same = sqlite3_column_int(st, 1);
		/* A hit saves the split the plan originally cost, less what the
		 * hit itself spent (reading and validating the module). */
		if (hit && sqlite3_column_double(st, 2) > split_seconds)
			saved = sqlite3_column_double(st, 2) - split_seconds;
	} else if (rc != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	st = NULL;

	if (plan_id >= 0 && same) {
		/* Reused as is: keep its rows and the slot timings. */
		st = cache_prepare(c->db, "UPDATE plans SET last_used = ?2, module_path = ?3 WHERE id = ?1");
		if (!st)
			goto fail;
		sqlite3_bind_int64(st, 1, plan_id);
		sqlite3_bind_double(st, 2, now);
		sqlite3_bind_text(st, 3, module_path, -1, SQLITE_STATIC);
	} else {
		if (plan_id >= 0) {
			/* Same key, different plan (a new splitter version): the old
			 * rows and timings describe partitions that no longer exist. */
			st = cache_prepare(c->db, "DELETE FROM plans WHERE id = ?1");
			if (!st)
				goto fail;
			sqlite3_bind_int64(st, 1, plan_id);
			if ((rc = sqlite3_step(st)) != SQLITE_DONE)
				goto fail;
			sqlite3_finalize(st);
			st = cache_prepare(c->db, "DELETE FROM timings WHERE module_hash = ?1 AND options_hash = ?2");
			if (!st)
				goto fail;
			sqlite3_bind_text(st, 1, module_hash, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 2, options_hash, -1, SQLITE_STATIC);
			if ((rc = sqlite3_step(st)) != SQLITE_DONE)
				goto fail;
			sqlite3_finalize(st);
		}
		st = cache_prepare(c->db, "INSERT INTO plans(module_hash, options_hash, module_path, plan_json, "
					  "partitions, functions, cost, split_seconds, created, last_used) "
					  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)");
		if (!st)
			goto fail;
		sqlite3_bind_text(st, 1, module_hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, options_hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, module_path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, plan_json, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (long long)json_array_size(parts));
		sqlite3_bind_int64(st, 6, functions);
		sqlite3_bind_int64(st, 7, cost);
		sqlite3_bind_double(st, 8, split_seconds);
		sqlite3_bind_double(st, 9, now);
	}
	if ((rc = sqlite3_step(st)) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	st = NULL;
	if (!(plan_id >= 0 && same)) {
		plan_id = sqlite3_last_insert_rowid(c->db);
		if ((rc = insert_partitions(c, plan_id, parts)))
			goto fail;
	}

	st = cache_prepare(c->db, "INSERT INTO builds(time, module_path, module_hash, options_hash, hit, "
				  "split_seconds, saved_seconds) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	if (!st)
		goto fail;
	sqlite3_bind_double(st, 1, now);
	sqlite3_bind_text(st, 2, module_path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, module_hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, options_hash, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, hit != 0);
	sqlite3_bind_double(st, 6, split_seconds);
	sqlite3_bind_double(st, 7, saved);
	if ((rc = sqlite3_step(st)) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	st = NULL;
	if ((rc = cache_commit(c)))
		goto fail;
	json_decref(plan);
	return 0;

fail:
	/* Warn first: finalizing may replace the error message. */
	cache_fail(c, "cannot store plan");
	sqlite3_finalize(st);
	json_decref(plan);
	return -1;
}

/* Run one prepared and bound write statement (NULL: its prepare failed) in
 * its own transaction, and finalize it. IMMEDIATE although it is a single
 * statement: the busy handler then covers the whole write even when many
 * slots finish at once. Returns 0, or -1 after the handle's one warning. */
static int write_one(mtpc_cache *c, sqlite3_stmt *st, const char *what)
{
	if (!st || cache_begin(c) || sqlite3_step(st) != SQLITE_DONE) {
		cache_fail(c, what);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	if (cache_commit(c)) {
		cache_fail(c, what);
		return -1;
	}
	return 0;
}

int mtpc_cache_record_partition(mtpc_cache *c, const char *module_hash, const char *options_hash,
				int partition, double seconds, long long object_bytes)
{
	if (cache_unusable(c))
		return -1;
	if (bad_key(module_hash) || bad_key(options_hash) || partition < 0 || seconds < 0 ||
	    object_bytes < 0) {
		mtpc_warn("plan cache %s: not recording partition %d: bad hashes or negative values",
			  c->path, partition);
		return -1;
	}
	if (c->readonly) {
		mtpc_warn("plan cache %s: opened read-only, not recording partition %d", c->path, partition);
		c->broken = 1;
		return -1;
	}
	sqlite3_stmt *st = cache_prepare(c->db, "INSERT INTO timings(module_hash, options_hash, "
						"partition, seconds, object_bytes, recorded) "
						"VALUES(?1, ?2, ?3, ?4, ?5, ?6) "
						"ON CONFLICT(module_hash, options_hash, partition) DO UPDATE SET "
						"seconds = excluded.seconds, object_bytes = excluded.object_bytes, "
						"recorded = excluded.recorded");
	if (st) {
		sqlite3_bind_text(st, 1, module_hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, options_hash, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 3, partition);
		sqlite3_bind_double(st, 4, seconds);
		sqlite3_bind_int64(st, 5, object_bytes);
		sqlite3_bind_double(st, 6, cache_now());
	}
	return write_one(c, st, "cannot record partition timing");
}

int mtpc_cache_record_module(mtpc_cache *c, const char *module_path, double seconds, int split)
{
	if (cache_unusable(c) || c->readonly)
		return -1;
	if (!module_path || !*module_path || !(seconds >= 0))
		return -1;
	sqlite3_stmt *st = cache_prepare(c->db, "INSERT INTO module_times(module_path, seconds, split, "
						"recorded) VALUES(?1, ?2, ?3, ?4) ON CONFLICT(module_path) "
						"DO UPDATE SET seconds = excluded.seconds, "
						"split = excluded.split, recorded = excluded.recorded");
	if (st) {
		sqlite3_bind_text(st, 1, module_path, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 2, seconds);
		sqlite3_bind_int(st, 3, split != 0);
		sqlite3_bind_double(st, 4, cache_now());
	}
	return write_one(c, st, "cannot record module time");
}

double mtpc_cache_module_seconds(mtpc_cache *c, const char *module_path, int *split)
{
	if (split)
		*split = -1;
	if (cache_unusable(c))
		return -1;
	sqlite3_stmt *st = cache_prepare(c->db, "SELECT seconds, split FROM module_times WHERE module_path = ?1");
	if (!st) {
		cache_fail(c, "cannot read module times");
		return -1;
	}
	sqlite3_bind_text(st, 1, module_path, -1, SQLITE_STATIC);
	double s = -1;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		s = sqlite3_column_double(st, 0);
		if (split)
			*split = sqlite3_column_int(st, 1);
	} else if (rc != SQLITE_DONE) {
		cache_fail(c, "cannot read module times");
	}
	sqlite3_finalize(st);
	return s;
}

double mtpc_cache_plan_seconds(mtpc_cache *c, const char *module_hash, const char *options_hash, int n)
{
	if (cache_unusable(c) || n < 1)
		return -1;
	sqlite3_stmt *st = cache_prepare(c->db, "SELECT count(*), total(seconds) FROM timings WHERE "
						"module_hash = ?1 AND options_hash = ?2 AND partition < ?3");
	if (!st) {
		cache_fail(c, "cannot read partition timings");
		return -1;
	}
	sqlite3_bind_text(st, 1, module_hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, options_hash, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, n);
	double s = -1;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_int(st, 0) == n)
		s = sqlite3_column_double(st, 1);
	else if (rc != SQLITE_ROW)
		cache_fail(c, "cannot read partition timings");
	sqlite3_finalize(st);
	return s;
}

int mtpc_cache_record_rebuild(mtpc_cache *c, const char *module_path, const char *module_hash, int parts,
			      int rewritten)
{
	if (cache_unusable(c) || c->readonly)
		return -1;
	if (!module_path || !*module_path || !module_hash || !*module_hash)
		return -1;
	/* One statement: SET sees the row as it was. A split seen as an
	 * observation of the module's edits (?5, the row's parts before):
	 * its own change, and the rebuild before split it the same way. */
	sqlite3_stmt *st = cache_prepare(c->db, "INSERT INTO module_rebuilds(module_path, module_hash, history, "
						"runs, recorded, parts) VALUES(?1, ?2, 0, 1, ?3, ?5) "
						"ON CONFLICT(module_path) DO UPDATE SET "
						"history = ((history << 1) | (module_hash = excluded.module_hash)) "
						"& ((1 << ?4) - 1), "
						"parted = ((parted << 1) | (?5 >= 2 AND parts = ?5 AND "
						"module_hash != excluded.module_hash)) & ((1 << ?4) - 1), "
						"wide = ((wide << 1) | (?5 >= 2 AND parts = ?5 AND "
						"module_hash != excluded.module_hash AND ?6 * ?8 >= ?5 * ?7)) "
						"& ((1 << ?4) - 1), "
						"parts = ?5, runs = min(runs + 1, ?4), "
						"module_hash = excluded.module_hash, recorded = excluded.recorded");
	if (st) {
		sqlite3_bind_text(st, 1, module_path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, module_hash, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 3, cache_now());
		sqlite3_bind_int(st, 4, MTPC_CACHE_REBUILDS_KEPT);
		sqlite3_bind_int(st, 5, parts > 0 ? parts : 0);
		sqlite3_bind_int(st, 6, rewritten > 0 ? rewritten : 0);
		sqlite3_bind_int(st, 7, MTPC_CACHE_WIDE_NUM);
		sqlite3_bind_int(st, 8, MTPC_CACHE_WIDE_DEN);
	}
	return write_one(c, st, "cannot record a module rebuild");
}

/* Set bits among the low n of mask. */
static int bits_in(unsigned mask, int n)
{
	int k = 0;
	for (int i = 0; i < n && i < MTPC_CACHE_REBUILDS_KEPT; i++)
		k += (mask >> i) & 1;
	return k;
}

int mtpc_cache_module_rebuilds(mtpc_cache *c, const char *module_path, struct mtpc_rebuilds *r)
{
	memset(r, 0, sizeof *r);
	if (cache_unusable(c))
		return -1;
	sqlite3_stmt *st = cache_prepare(c->db, "SELECT history, runs, parted, wide FROM module_rebuilds "
						"WHERE module_path = ?1");
	if (!st) {
		cache_fail(c, "cannot read module rebuilds");
		return -1;
	}
	sqlite3_bind_text(st, 1, module_path, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		r->runs = sqlite3_column_int(st, 1);
		r->forced = bits_in((unsigned)sqlite3_column_int(st, 0), r->runs);
		r->parted = bits_in((unsigned)sqlite3_column_int(st, 2), r->runs);
		r->wide = bits_in((unsigned)sqlite3_column_int(st, 3), r->runs);
	} else if (rc != SQLITE_DONE) {
		cache_fail(c, "cannot read module rebuilds");
		r->runs = -1;
	}
	sqlite3_finalize(st);
	return r->runs;
}
