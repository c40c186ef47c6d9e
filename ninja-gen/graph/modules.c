/* modules.c: the modules of one inner build, their names and directories,
 * and writing the build.ninja only if it changed. */
#define _POSIX_C_SOURCE 200809L
#include "graph_int.h"
#include "hash.h"
#include "inner_dir.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *graph_module_key(const char *abs_path)
{
	char hex[MTPC_HASH_HEX_LEN + 1];
	mtpc_hash_hex(abs_path, strlen(abs_path), hex);
	return xasprintf("%s-%.8s", mtpc_base_name(abs_path), hex);
}

struct module *graph_add_module(struct graph *g, const struct graph_conf *gc, const char *path,
				const char *id, const char *shard)
{
	for (size_t i = 0; i < g->nmods; i++)
		if (!strcmp(g->mods[i].path, path))
			return &g->mods[i];
	g->mods = xrealloc(g->mods, (g->nmods + 1) * sizeof *g->mods);
	struct module *m = &g->mods[g->nmods++];
	memset(m, 0, sizeof *m);
	m->path = xstrdup(path);
	m->id = xstrdup(id);
	m->name = xstrdup(mtpc_base_name(id));
	m->key = graph_module_key(id);
	m->dir = xasprintf("%s" INNER_MOD_DIR "/%s", gc->prefix ? gc->prefix : "", m->key);
	m->shard = shard ? xstrdup(shard) : xasprintf("index%s.thinlto.bc", path);
	struct stat st;
	m->size = stat(path, &st) == 0 ? (long long)st.st_size : 0;
	m->insts = -1;
	m->seconds = -1;
	m->was_split = -1;
	return m;
}

char *graph_native(const struct module *m)
{
	return xasprintf("%s/" MOD_NATIVE, m->dir);
}

/* The last k path components of id ("" components and all if fewer). */
static const char *path_tail(const char *id, int k)
{
	const char *p = id + strlen(id);
	while (p > id) {
		if (p[-1] == '/' && --k == 0)
			break;
		p--;
	}
	return p;
}

/* Names for messages that tell modules apart: the file name, or as many of
 * the trailing directories of its path as make it unique in this link (a
 * unity build has a unity_0_cxx.cxx.o in every target). */
void graph_name_modules(struct graph *g)
{
	for (size_t i = 0; i < g->nmods; i++) {
		for (int k = 1;; k++) {
			const char *t = path_tail(g->mods[i].id, k);
			int clash = 0;
			for (size_t j = 0; j < g->nmods && !clash; j++)
				clash = j != i && !strcmp(path_tail(g->mods[j].id, k), t);
			if (!clash || t == g->mods[i].id) {
				free(g->mods[i].name);
				g->mods[i].name = xstrdup(t);
				break;
			}
		}
	}
}

int graph_put(const struct graph_conf *gc, const char *name, const struct buf *b)
{
	char *p = xasprintf("%s/%s", gc->inner, name);
	int r = mtpc_write_file(p, b->s ? b->s : "", b->len, MTPC_WRITE_IF_CHANGED);
	if (r < 0)
		mtpc_error("cannot write %s: %s", p, strerror(errno));
	free(p);
	return r < 0 ? -1 : 0;
}

int graph_write(const struct graph_conf *gc, const struct graph *g)
{
	if (mtpc_mkdir_p(gc->inner) < 0) {
		mtpc_error("cannot create %s: %s", gc->inner, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < g->nmods; i++) {
		const struct module *m = &g->mods[i];
		char *d = xasprintf("%s/" INNER_MOD_DIR "/%s/" MOD_PARTS, gc->inner, m->key);
		int r = mtpc_mkdir_p(d);
		free(d);
		if (r < 0) {
			mtpc_error("cannot create module directory: %s", strerror(errno));
			return -1;
		}
		if (m->recheck.parts >= 2) {
			struct buf b = {0};
			makespan_recheck_format(&b, &m->recheck);
			char *f = xasprintf("%s/" INNER_MOD_DIR "/%s/" MOD_RECHECK, gc->inner, m->key);
			r = mtpc_write_file(f, b.s, b.len, MTPC_WRITE_IF_CHANGED);
			if (r < 0)
				mtpc_error("cannot write %s: %s", f, strerror(errno));
			free(f);
			buf_free(&b);
			if (r < 0)
				return -1;
		}
	}
	return graph_put(gc, "build.ninja", &g->ninja);
}

void graph_free(struct graph *g)
{
	for (size_t i = 0; i < g->nmods; i++) {
		free(g->mods[i].path);
		free(g->mods[i].id);
		free(g->mods[i].name);
		free(g->mods[i].dir);
		free(g->mods[i].key);
		free(g->mods[i].shard);
		free(g->mods[i].why);
	}
	free(g->mods);
	buf_free(&g->ninja);
	free(g->output);
	free(g->dwp);
}

int graph_split_result(const char *inner, const struct module *m, char **held)
{
	/* m->dir is relative to the inner dir, or absolute (gc->prefix) */
	const char *in = m->dir[0] == '/' ? "" : inner, *sep = m->dir[0] == '/' ? "" : "/";
	char *np = xasprintf("%s%s%s/" MOD_COUNT, in, sep, m->dir), *text = NULL;
	char *up = xasprintf("%s%s%s/" MOD_UNSPLIT, in, sep, m->dir);
	size_t len;
	int n = -1;
	if (held)
		*held = NULL;
	if (mtpc_read_file(np, &text, &len) == 0) {
		/* "N", "0 unused" or "0 held: <why>" (steps/split.c) */
		const char *rest = text + strspn(text, "0123456789");
		n = !strncmp(rest, " " MOD_COUNT_UNUSED, strlen(" " MOD_COUNT_UNUSED)) ? -1 : atoi(text);
		if (n > 0 && access(up, F_OK) == 0)
			n = 0;
		const char *tag = " " MOD_COUNT_HELD ": ";
		if (n == 0 && held && !strncmp(rest, tag, strlen(tag)))
			*held = xasprintf("%.*s", (int)strcspn(rest + strlen(tag), "\n"), rest + strlen(tag));
		free(text);
	}
	free(np);
	free(up);
	return n;
}
