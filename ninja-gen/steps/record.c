/* record.c: what the steps tell the plan cache (cache/mtpc_cache.h): a
 * partition's compile time and object size, a module's backend time, and
 * why a module was rebuilt. A cache that cannot be used costs one warning;
 * no step fails because of it. */
#include "steps_int.h"
#include "hash.h"
#include "inner_dir.h"
#include "mtpc_cache.h"
#include "util.h"

#include <jansson.h>
#include <stdlib.h>

/* The plan cache of the step (--cache, else the default). */
static mtpc_cache *open_cache(const struct step_args *s)
{
	char *path = mtpc_cache_resolve_path(s->cache, NULL);
	mtpc_cache *c = mtpc_cache_open(path, 0); /* NULL after (at most) one warning */
	free(path);
	return c;
}

/* The plan key (input and options hash) of a plan.json; NULL if unreadable. */
static json_t *plan_key(const char *plan, const char **mh, const char **oh)
{
	char *text;
	size_t len;
	if (mtpc_read_file(plan, &text, &len) < 0)
		return NULL;
	json_t *root = json_loads(text, 0, NULL);
	free(text);
	*mh = json_string_value(json_object_get(root, "input_hash"));
	*oh = json_string_value(json_object_get(root, "options_hash"));
	if (!*mh || !*oh) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* A slot's compile time and object size, under its plan's key. */
void record_timing(const struct step_args *s, double seconds, long long bytes)
{
	const char *mh, *oh;
	json_t *root = s->plan && s->part ? plan_key(s->plan, &mh, &oh) : NULL;
	if (root) {
		mtpc_cache *c = open_cache(s);
		mtpc_cache_record_partition(c, mh, oh, atoi(s->part), seconds, bytes);
		mtpc_cache_close(c);
		json_decref(root);
	}
}

/* With --record-module: the module's backend seconds for mtpc-link's choice
 * of modules to split. A merge passes seconds < 0: the sum of its n slots'
 * recorded times (nothing when one is missing). */
void record_module(const struct step_args *s, double seconds, int n)
{
	if (!s->record_module)
		return;
	mtpc_cache *c = open_cache(s);
	if (seconds < 0) {
		char *plan = xasprintf("%s/" MOD_PARTS "/" SPLIT_PLAN, s->dir);
		const char *mh, *oh;
		json_t *root = plan_key(plan, &mh, &oh);
		if (root)
			seconds = mtpc_cache_plan_seconds(c, mh, oh, n);
		json_decref(root);
		free(plan);
	}
	if (seconds >= 0)
		mtpc_cache_record_module(c, s->record_module, seconds, n > 1);
	mtpc_cache_close(c);
}

/* With --record-module and --module: one rebuild of the module (its
 * backend or a relay's import ran, or its split for edits: parts partitions,
 * rewritten of them changed), and whether its own bitcode had changed since
 * the last one (mtpc-link relays a module that other modules' changes keep
 * rebuilding, and splits one that its own edits do, graph.h). */
void record_rebuild(const struct step_args *s, int parts, int rewritten)
{
	if (!s->record_module || !s->module)
		return;
	char *data;
	size_t len;
	if (mtpc_read_file(s->module, &data, &len) < 0)
		return;
	char hex[MTPC_HASH_HEX_LEN + 1];
	mtpc_hash_hex(data, len, hex);
	free(data);
	mtpc_cache *c = open_cache(s);
	mtpc_cache_record_rebuild(c, s->record_module, hex, parts, rewritten);
	mtpc_cache_close(c);
}
