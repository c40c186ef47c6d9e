/* link_graph.c: see link_graph.h. */
#define _GNU_SOURCE /* realpath */
#include "link_graph.h"
#include "rsp.h"
#include "ar.h"
#include "inner_dir.h"
#include "ninja_write.h"
#include "step_protocol.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define V NW_LIST

/* Absolute form of p (relative to cwd); symlinks resolved when it exists so
 * that one file always gets one module identity. */
static char *absolute(const char *p, const char *cwd)
{
	char *joined = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", cwd, p);
	char *real = realpath(joined, NULL);
	if (real) {
		free(joined);
		return real;
	}
	return joined;
}

/* A bitcode input: a module whose identity is its absolute path. */
static struct module *link_module(struct link_graph *lg, const struct graph_conf *gc, const char *abs)
{
	struct graph *g = &lg->g;
	size_t n = g->nmods;
	struct module *m = graph_add_module(g, gc, abs, abs, NULL);
	if (g->nmods > n)
		buf_printf(&lg->modules_list, "%s\n", abs);
	return m;
}

/* The absolute path of m's native object (for the final link's rsp). */
static char *inner_native(const struct graph_conf *gc, const struct module *m)
{
	return xasprintf("%s/%s/" MOD_NATIVE, gc->inner, m->dir);
}

/* The rewritten forms of one input word for the thin link (th) and the final
 * link (fin). Bitcode becomes an absolute module path / its native object;
 * an archive with bitcode becomes its members, lazily (--start-lib) unless
 * inside --whole-archive. */
static int rewrite_input(const struct graph_conf *gc, const struct linkcmd *lc, size_t i,
			 struct link_graph *lg, struct strv *th, struct strv *fin)
{
	struct graph *g = &lg->g;
	const char *w = lc->args.v[i];
	char *abs = absolute(w, gc->outer_cwd);
	int ret = 0;
	if (lc->kind[i] == IN_BITCODE) {
		struct module *m = link_module(lg, gc, abs);
		strv_add(th, abs);
		strv_addown(fin, inner_native(gc, m));
	} else if (lc->kind[i] == IN_ARCHIVE) {
		char *key = graph_module_key(abs);
		char *dest = xasprintf("%s/ar/%s", gc->inner, key);
		free(key);
		struct strv mem = {0};
		int bitcode = 0;
		if (ar_extract(abs, dest, &mem, &bitcode) < 0) {
			ret = -1;
		} else if (!bitcode) {
			g->nnative_archives++;
			strv_add(th, w);
			strv_add(fin, w);
		} else {
			int lazy = !lc->whole_archive[i];
			if (lazy) {
				strv_add(th, "-Wl,--start-lib");
				strv_add(fin, "-Wl,--start-lib");
			}
			for (size_t k = 0; k < mem.n; k++) {
				char *p = absolute(mem.v[k], gc->outer_cwd);
				if (linkcmd_file_kind(p) == IN_BITCODE) {
					struct module *m = link_module(lg, gc, p);
					strv_add(th, p);
					strv_addown(fin, inner_native(gc, m));
				} else {
					g->nnative_objects += linkcmd_is_native_object(p);
					strv_add(th, p);
					strv_add(fin, p);
				}
				free(p);
			}
			if (lazy) {
				strv_add(th, "-Wl,--end-lib");
				strv_add(fin, "-Wl,--end-lib");
			}
		}
		strv_free(&mem);
		free(dest);
	} else {
		g->nnative_objects += linkcmd_is_native_object(abs);
		strv_add(th, w);
		strv_add(fin, w);
	}
	free(abs);
	return ret;
}

static char *driver_path(const struct linkcmd *lc, const struct graph_conf *gc)
{
	const char *d = lc->args.v[0];
	if (strchr(d, '/') && d[0] != '/')
		return absolute(d, gc->outer_cwd);
	return xstrdup(d);
}

/* How mtpc-link's backends and slots compile: what lld's in-process
 * ThinLTO backend uses (docs/build-integration.md, "lld, clang and Ninja
 * behaviour"), plus the flags of the link command it must repeat. */
static void link_codegen(const struct graph_conf *gc, const struct linkcmd *lc,
			 struct graph_codegen *cg)
{
	cg->driver = driver_path(lc, gc);
	strv_addown(&cg->flags, xasprintf("-O%s", lc->opt));
	strv_add(&cg->flags, lc->mode == MODE_STATIC ? "-fno-pic" : "-fPIC");
	strv_add(&cg->flags, "-ffunction-sections");
	strv_add(&cg->flags, "-fdata-sections");
	strv_add(&cg->flags, "-faddrsig");
	strv_addv(&cg->flags, &lc->backend_flags);
	cg->pic = lc->mode != MODE_STATIC;
	cg->split_dwarf = lc->split_dwarf;
	cg->type_units = gc->type_units && !lc->gdb_index;
	cg->names_once = !lc->gdb_index;
}

/* Files named inside -Wl, words (version scripts, linker scripts): inputs of
 * the final link too, so that editing them relinks. Not the values of
 * options that name no input (-soname libx.so names the output itself after
 * the first link: as an input it would be a dependency cycle), and never
 * the output. */
static void wl_files(const char *w, const char *cwd, const char *output, struct strv *deps)
{
	static const char *const not_inputs[] = {"-soname", "--soname", "-h", "-rpath", "--rpath",
						 "-rpath-link", "--rpath-link", "-o", "--output", NULL};
	char *copy = xstrdup(w + 4), *save = NULL;
	int skip_next = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const char *eq = strchr(t, '=');
		int named = 0;
		for (int k = 0; not_inputs[k]; k++)
			named |= !strncmp(t, not_inputs[k], strlen(not_inputs[k])) &&
				 (t[strlen(not_inputs[k])] == 0 || t[strlen(not_inputs[k])] == '=');
		if (skip_next || named) {
			skip_next = named && !eq;
			continue;
		}
		const char *p = eq ? eq + 1 : t;
		struct stat st;
		if (*p && *p != '-' && stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			char *abs = absolute(p, cwd);
			if (strcmp(abs, output) != 0)
				strv_addown(deps, abs);
			else
				free(abs);
		}
	}
	free(copy);
}

/* The thin link's (th) and final link's (fin) words from the link
 * command's: inputs rewritten (rewrite_input), the output replaced in the
 * thin link, the regular LTO object added to the final link, and in deps the
 * files the final link reads besides the modules (it reruns when they
 * change). Returns 0 or -1 after an error message. */
static int link_words(const struct graph_conf *gc, const struct linkcmd *lc, struct link_graph *lg,
		      struct strv *th, struct strv *fin, struct strv *deps)
{
	struct graph *g = &lg->g;
	int regular_added = 0;
	for (size_t i = 1; i < lc->args.n; i++) {
		const char *w = lc->args.v[i];
		/* The thin link's regular LTO object (see INNER_REGULAR_LTO) goes
		 * before the first input, outside any --start-lib group. */
		if (lc->kind[i] != IN_NONE && !regular_added) {
			strv_addown(fin, xasprintf("%s/" INNER_REGULAR_LTO, gc->inner));
			regular_added = 1;
		}
		if ((int)i == lc->output) {
			strv_addown(th, xasprintf(lc->output_joined ? "-o%s/thinlink.out" : "%s/thinlink.out",
						  gc->inner));
			strv_add(fin, w);
			continue;
		}
		if (lc->kind[i] != IN_NONE) {
			if (rewrite_input(gc, lc, i, lg, th, fin) < 0)
				return -1;
			if (lc->kind[i] == IN_FILE || lc->kind[i] == IN_ARCHIVE)
				strv_addown(deps, absolute(w, gc->outer_cwd));
			continue;
		}
		if (!strncmp(w, "-Wl,", 4))
			wl_files(w, gc->outer_cwd, g->output, deps);
		strv_add(th, w);
		strv_add(fin, w);
	}
	if (g->nmods == 0) {
		mtpc_error("no ThinLTO bitcode among the link inputs");
		return -1;
	}
	/* Index-only, into stage/ (the step copies what changed to index/). */
	strv_add(th, "-Wl,--thinlto-index-only");
	strv_add(th, "-Wl,--thinlto-emit-imports-files");
	strv_addown(th, xasprintf("-Wl,--lto-obj-path=%s/stage/" INNER_REGULAR_LTO, gc->inner));
	strv_addown(th, xasprintf("-Wl,--thinlto-prefix-replace=/;%s/stage/", gc->inner));
	return 0;
}

/* The thin-link edge: every shard is an output, written only if changed. */
static int emit_thinlink(const struct graph_conf *gc, struct graph *g, const char *driver,
			 const struct strv *deps)
{
	struct strv shards = {0}, ins = {0}, cmd = {0};
	for (size_t i = 0; i < g->nmods; i++) {
		strv_add(&shards, g->mods[i].shard);
		strv_add(&ins, g->mods[i].path);
	}
	strv_addv(&ins, deps);
	int r = nw_build2(&g->ninja, shards.v, V(INNER_REGULAR_LTO), "thinlink", ins.v,
			  V(INNER_THINLINK_RSP, INNER_MODULES_LIST), NULL);
	step_line(&cmd, gc->self, STEP_THINLINK);
	step_arg(&cmd, STEP_THINLINK, OPT_CWD, gc->outer_cwd);
	step_arg(&cmd, STEP_THINLINK, OPT_DIR, gc->inner);
	step_arg(&cmd, STEP_THINLINK, OPT_TOOL, gc->split_tool);
	step_arg(&cmd, STEP_THINLINK, OPT_LLVM_BIN, gc->llvm_bin);
	step_command(&cmd);
	strv_add(&cmd, driver);
	strv_addown(&cmd, xasprintf("@%s/" INNER_THINLINK_RSP, gc->inner));
	r |= nw_cmd_var(&g->ninja, "cmd", cmd.v);
	buf_add(&g->ninja, "  desc = MTPC thin link\n\n");
	strv_free(&cmd);
	strv_free(&shards);
	strv_free(&ins);
	return r;
}

/* The final link on the native objects (in link order, from link.rsp),
 * with -gsplit-dwarf the .dwp step, and the default targets. */
static int emit_link(const struct graph_conf *gc, const struct linkcmd *lc, struct graph *g,
		     const char *driver, const struct strv *deps)
{
	struct buf *nj = &g->ninja;
	struct strv natives = {0}, cmd = {0};
	for (size_t i = 0; i < g->nmods; i++)
		strv_addown(&natives, graph_native(&g->mods[i]));
	strv_add(&natives, INNER_REGULAR_LTO);
	strv_addv(&natives, deps);
	int r = nw_build(nj, V(g->output), "link", natives.v, V(INNER_LINK_RSP), NULL);
	step_line(&cmd, gc->self, STEP_RUN);
	step_arg(&cmd, STEP_RUN, OPT_CWD, gc->outer_cwd);
	step_command(&cmd);
	strv_add(&cmd, driver);
	strv_addown(&cmd, xasprintf("@%s/" INNER_LINK_RSP, gc->inner));
	r |= nw_cmd_var(nj, "cmd", cmd.v);
	buf_add(nj, "  desc = MTPC link\n\n");
	strv_free(&cmd);
	if (lc->split_dwarf) {
		/* Every .dwo the output names, packed next to it where gdb looks.
		 * The inputs are the link's (a changed .dwo comes with a changed
		 * object: the skeleton holds its DWO id); the output itself is
		 * order-only because mtpc-link touches it after the inner build. */
		g->dwp = xasprintf("%s.dwp", g->output);
		r |= nw_build(nj, V(g->dwp), "dwp", natives.v, V(INNER_LINK_RSP), V(g->output));
		step_line(&cmd, gc->self, STEP_DWP);
		step_arg(&cmd, STEP_DWP, OPT_OUT, g->dwp);
		step_arg(&cmd, STEP_DWP, OPT_LLVM_BIN, gc->llvm_bin);
		step_command(&cmd);
		strv_add(&cmd, g->output);
		r |= nw_cmd_var(nj, "cmd", cmd.v);
		buf_add(nj, "  desc = MTPC dwp\n\n");
		strv_free(&cmd);
	}
	strv_free(&natives);
	/* Only the output (and its .dwp) by default: slots nothing needs never
	 * run. */
	buf_add(nj, "default ");
	r |= nw_path(nj, g->output);
	if (g->dwp) {
		buf_addc(nj, ' ');
		r |= nw_path(nj, g->dwp);
	}
	buf_addc(nj, '\n');
	return r;
}

int link_graph_build(const struct graph_conf *gc, const struct linkcmd *lc, struct link_graph *lg)
{
	memset(lg, 0, sizeof *lg);
	struct graph *g = &lg->g;
	const char *out = linkcmd_output(lc);
	if (!out) {
		mtpc_error("link command has no -o");
		return -1;
	}
	if (strchr(gc->inner, ';') || strchr(gc->inner, '\n')) {
		/* --thinlto-prefix-replace uses ';' as its separator. */
		mtpc_error("build directory %s contains ';' or a newline", gc->inner);
		return -1;
	}
	g->output = absolute(out, gc->outer_cwd);
	struct graph_codegen cg = {0};
	link_codegen(gc, lc, &cg);
	struct strv th = {0}, fin = {0}, deps = {0};
	int r = link_words(gc, lc, lg, &th, &fin, &deps);
	if (r == 0) {
		for (size_t i = 0; i < th.n; i++)
			rsp_word(&lg->thinlink_rsp, th.v[i]);
		for (size_t i = 0; i < fin.n; i++)
			rsp_word(&lg->link_rsp, fin.v[i]);
		graph_rules(&g->ninja, "mtpc-link");
		r |= emit_thinlink(gc, g, cg.driver, &deps);
		r |= graph_emit_modules(gc, &cg, g);
		r |= emit_link(gc, lc, g, cg.driver, &deps);
		if (r)
			mtpc_error("a path of this link cannot be written in a Ninja file (newline?)");
	}
	strv_free(&th);
	strv_free(&fin);
	strv_free(&deps);
	free(cg.driver);
	strv_free(&cg.flags);
	return r ? -1 : 0;
}

int link_graph_write(const struct graph_conf *gc, const struct link_graph *lg)
{
	if (graph_write(gc, &lg->g) < 0)
		return -1;
	return graph_put(gc, INNER_THINLINK_RSP, &lg->thinlink_rsp) < 0 ||
			       graph_put(gc, INNER_LINK_RSP, &lg->link_rsp) < 0 ||
			       graph_put(gc, INNER_MODULES_LIST, &lg->modules_list) < 0
		       ? -1
		       : 0;
}

void link_graph_free(struct link_graph *lg)
{
	graph_free(&lg->g);
	buf_free(&lg->thinlink_rsp);
	buf_free(&lg->link_rsp);
	buf_free(&lg->modules_list);
}
