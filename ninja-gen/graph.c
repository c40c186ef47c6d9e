/* graph.c: see graph.h. */
#define _POSIX_C_SOURCE 200809L
#include "graph.h"
#include "ar.h"
#include "hash.h"
#include "ninja_write.h"
#include "proc.h"
#include "sched.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

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

char *graph_module_key(const char *abs_path)
{
	char hex[MTPC_HASH_HEX_LEN + 1];
	mtpc_hash_hex(abs_path, strlen(abs_path), hex);
	const char *slash = strrchr(abs_path, '/');
	return xasprintf("%s-%.8s", slash ? slash + 1 : abs_path, hex);
}

static struct module *add_module(struct graph *g, const char *path)
{
	for (size_t i = 0; i < g->nmods; i++)
		if (!strcmp(g->mods[i].path, path))
			return &g->mods[i];
	g->mods = xrealloc(g->mods, (g->nmods + 1) * sizeof *g->mods);
	struct module *m = &g->mods[g->nmods++];
	memset(m, 0, sizeof *m);
	m->path = xstrdup(path);
	m->key = graph_module_key(path);
	m->shard = xasprintf("index%s.thinlto.bc", path);
	struct stat st;
	m->size = stat(path, &st) == 0 ? (long long)st.st_size : 0;
	m->insts = -1;
	m->seconds = -1;
	m->was_split = -1;
	buf_printf(&g->modules_list, "%s\n", path);
	return m;
}

static char *native_of(const struct graph_conf *gc, const struct module *m)
{
	return xasprintf("%s/mod/%s/native.o", gc->inner, m->key);
}

/* The rewritten forms of one input word for the thin link (th) and the final
 * link (fin). Bitcode becomes an absolute module path / its native object;
 * an archive with bitcode becomes its members, lazily (--start-lib) unless
 * inside --whole-archive. */
static int rewrite_input(const struct graph_conf *gc, const struct linkcmd *lc, size_t i,
			 struct graph *g, struct strv *th, struct strv *fin)
{
	const char *w = lc->args.v[i];
	char *abs = absolute(w, gc->outer_cwd);
	int ret = 0;
	if (lc->kind[i] == IN_BITCODE) {
		struct module *m = add_module(g, abs);
		strv_add(th, abs);
		strv_addown(fin, native_of(gc, m));
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
					struct module *m = add_module(g, p);
					strv_add(th, p);
					strv_addown(fin, native_of(gc, m));
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

/* Flags shared by backend and slot compiles: what lld's in-process ThinLTO
 * backend uses (docs/build-integration.md, "lld, clang and Ninja behaviour"). */
static void codegen_flags(const struct linkcmd *lc, struct strv *cmd)
{
	char *o = xasprintf("-O%s", lc->opt);
	strv_addown(cmd, o);
	strv_add(cmd, lc->mode == MODE_STATIC ? "-fno-pic" : "-fPIC");
	strv_add(cmd, "-ffunction-sections");
	strv_add(cmd, "-fdata-sections");
	strv_add(cmd, "-faddrsig");
	strv_addv(cmd, &lc->backend_flags);
}

static char *driver_path(const struct linkcmd *lc, const struct graph_conf *gc)
{
	const char *d = lc->args.v[0];
	if (strchr(d, '/') && d[0] != '/')
		return absolute(d, gc->outer_cwd);
	return xstrdup(d);
}

/* Append "build OUTS | IOUTS: RULE INS | IMPLICIT || ORDER\n" with escaped
 * paths (iouts: implicit outputs, may be NULL). */
static int build_line2(struct buf *b, char *const *outs, char *const *iouts, const char *rule,
		       char *const *ins, char *const *implicit, char *const *order)
{
	int r = 0;
	buf_add(b, "build");
	for (size_t i = 0; outs && outs[i]; i++) {
		buf_addc(b, ' ');
		r |= nw_path(b, outs[i]);
	}
	if (iouts && iouts[0]) {
		buf_add(b, " |");
		for (size_t i = 0; iouts[i]; i++) {
			buf_addc(b, ' ');
			r |= nw_path(b, iouts[i]);
		}
	}
	buf_printf(b, ": %s", rule);
	for (size_t i = 0; ins && ins[i]; i++) {
		buf_addc(b, ' ');
		r |= nw_path(b, ins[i]);
	}
	if (implicit && implicit[0]) {
		buf_add(b, " |");
		for (size_t i = 0; implicit[i]; i++) {
			buf_addc(b, ' ');
			r |= nw_path(b, implicit[i]);
		}
	}
	if (order && order[0]) {
		buf_add(b, " ||");
		for (size_t i = 0; order[i]; i++) {
			buf_addc(b, ' ');
			r |= nw_path(b, order[i]);
		}
	}
	buf_addc(b, '\n');
	return r;
}

static int build_line(struct buf *b, char *const *outs, const char *rule, char *const *ins,
		      char *const *implicit, char *const *order)
{
	return build_line2(b, outs, NULL, rule, ins, implicit, order);
}

static int cmd_var(struct buf *b, const char *name, char *const *argv)
{
	buf_printf(b, "  %s = ", name);
	int r = nw_cmd_words(b, argv);
	buf_addc(b, '\n');
	return r;
}

#define V(...) ((char *const[]){__VA_ARGS__, NULL})

/* The .dwo written next to an object with -gsplit-dwarf: "x.o" -> "x.dwo". */
static char *dwo_of(const char *obj)
{
	size_t n = strlen(obj);
	if (n > 2 && !strcmp(obj + n - 2, ".o"))
		n -= 2;
	return xasprintf("%.*s.dwo", (int)n, obj);
}

/* -gsplit-dwarf for a backend or slot compile run in the inner dir: the .dwo
 * goes to dwo.tmp (the step moves it in only if changed) and the skeleton CU
 * names it by absolute path, so gdb finds it with or without the .dwp. Given
 * as cc1 options because the driver derives both names from -o (x.o.tmp). */
static void split_dwarf_flags(const struct graph_conf *gc, const char *dwo, struct strv *cmd)
{
	strv_add(cmd, "-Xclang");
	strv_add(cmd, "-split-dwarf-file");
	strv_add(cmd, "-Xclang");
	strv_addown(cmd, xasprintf("%s/%s", gc->inner, dwo));
	strv_add(cmd, "-Xclang");
	strv_add(cmd, "-split-dwarf-output");
	strv_add(cmd, "-Xclang");
	strv_addown(cmd, xasprintf("%s.tmp", dwo));
}

/* Append the command of the plain ThinLTO backend of module m into out
 * (record: the step records its time in the plan cache, for the history). */
static void backend_cmd(const struct graph_conf *gc, const struct linkcmd *lc, const struct module *m,
			const char *out, const char *driver, int record, struct strv *cmd)
{
	char *dwo = lc->split_dwarf ? dwo_of(out) : NULL;
	strv_addl(cmd, gc->self, "--backend-step", "--out", out, NULL);
	if (record)
		strv_addl(cmd, "--record-module", m->path, NULL);
	if (dwo) {
		strv_add(cmd, "--dwo");
		strv_add(cmd, dwo);
	}
	strv_add(cmd, "--");
	strv_addv(cmd, &gc->launcher);
	strv_addl(cmd, driver, "-c", "-x", "ir", m->path, NULL);
	strv_addown(cmd, xasprintf("-fthinlto-index=%s", m->shard));
	codegen_flags(lc, cmd);
	if (dwo)
		split_dwarf_flags(gc, dwo, cmd);
	strv_add(cmd, "-o");
	strv_addown(cmd, xasprintf("%s.tmp", out));
	free(dwo);
}

/* The plain ThinLTO backend of module m into out (relative path). */
static int emit_backend(struct buf *nj, const struct graph_conf *gc, const struct linkcmd *lc,
			const struct module *m, const char *out, const char *driver, int record)
{
	/* The shard alone is the input: it carries the hash of this module and
	 * of every module it imports from, so touching an object without
	 * changing it stops at the thin link (restat). */
	char *dwo = lc->split_dwarf ? dwo_of(out) : NULL;
	int r = build_line2(nj, V((char *)out), dwo ? V(dwo) : NULL, "backend", V(m->shard), NULL,
			    NULL);
	struct strv cmd = {0};
	backend_cmd(gc, lc, m, out, driver, record, &cmd);
	r |= cmd_var(nj, "cmd", cmd.v);
	buf_printf(nj, "  desc = MTPC backend %s\n", m->key);
	strv_free(&cmd);
	free(dwo);
	return r;
}

/* shares: kmax partition shares (sched.h units) for mtpc-split --weights,
 * or NULL for equal partitions. */
static int emit_split(struct buf *nj, const struct graph_conf *gc, const struct linkcmd *lc,
		      const struct module *m, const char *driver, const int *shares)
{
	int r = 0;
	char *dir = xasprintf("mod/%s", m->key);
	char *dd = xasprintf("%s/split.dd", dir), *nfile = xasprintf("%s/split.n", dir);
	char *backend = xasprintf("%s/backend.o", dir), *native = xasprintf("%s/native.o", dir);
	char *kmax = xasprintf("%d", gc->kmax);

	/* import + split (fused in mtpc-split), then the dyndep file. A new
	 * mtpc-split may cut differently: its binary is an input when its path
	 * is known (restat stops at the partitions that come out the same). */
	int tool_known = gc->split_tool[0] == '/' && access(gc->split_tool, F_OK) == 0;
	r |= build_line(nj, V(dd, nfile), "split", V(m->shard),
			tool_known ? V((char *)gc->split_tool) : NULL, NULL);
	struct strv cmd = {0};
	strv_addl(&cmd, gc->self, "--split-step", "--tool", gc->split_tool, "--module", m->path,
		  "--index", m->shard, "--dir", dir, "--kmax", kmax, "--reloc",
		  lc->mode == MODE_STATIC ? "static" : "pic", NULL);
	if (gc->min_cost) {
		strv_add(&cmd, "--min-cost");
		strv_add(&cmd, gc->min_cost);
	}
	if (gc->cache) {
		strv_add(&cmd, "--cache");
		strv_add(&cmd, gc->cache);
	}
	if (shares) {
		/* Before the user's split arguments, which may override it. */
		struct buf w = {0};
		for (int i = 0; i < gc->kmax; i++)
			buf_printf(&w, "%s%d", i ? "," : "", shares[i]);
		strv_addl(&cmd, "--split-arg", "--weights", "--split-arg", w.s, NULL);
		buf_free(&w);
	}
	for (size_t i = 0; i < gc->split_args.n; i++) {
		strv_add(&cmd, "--split-arg");
		strv_add(&cmd, gc->split_args.v[i]);
	}
	r |= cmd_var(nj, "cmd", cmd.v);
	buf_printf(nj, "  desc = MTPC split %s\n", m->key);
	strv_free(&cmd);

	/* The unsplit backend, pulled in by the dyndep file only on fallback. */
	r |= emit_backend(nj, gc, lc, m, backend, driver, 0);

	for (int i = 0; i < gc->kmax; i++) {
		char *obj = xasprintf("%s/p%d.o", dir, i);
		char *bc = xasprintf("%s/parts/p%d.bc", dir, i);
		char *idx = xasprintf("%d", i);
		char *dwo = lc->split_dwarf ? dwo_of(obj) : NULL;
		/* The slot waits for the split (order-only) and learns its real
		 * input p<i>.bc from the dyndep file. */
		r |= build_line2(nj, V(obj), dwo ? V(dwo) : NULL, "slot", NULL, NULL, V(dd));
		buf_add(nj, "  dyndep = ");
		r |= nw_path(nj, dd);
		buf_addc(nj, '\n');
		strv_addl(&cmd, gc->self, "--slot-step", "--out", obj, "--plan", NULL);
		strv_addown(&cmd, xasprintf("%s/parts/plan.json", dir));
		strv_add(&cmd, "--part");
		strv_add(&cmd, idx);
		if (dwo) {
			strv_add(&cmd, "--dwo");
			strv_add(&cmd, dwo);
		}
		if (gc->cache) {
			strv_add(&cmd, "--cache");
			strv_add(&cmd, gc->cache);
		}
		strv_add(&cmd, "--");
		strv_addv(&cmd, &gc->launcher);
		/* Compiled as a ThinLTO backend whose import is already done
		 * (-thinlto-assume-merged: straight to optimization and code
		 * generation), so the partition gets exactly the unsplit backend's
		 * post-link pipeline and code generation options; a plain -x ir
		 * compile would run the pre-link pipeline's early cleanup again.
		 * The index is the partition itself (it has no summary, so an empty
		 * index): nothing is left to import or resolve, mtpc-split applied
		 * the type resolutions. With -thinlto-assume-merged clang takes a
		 * one-module bitcode file as the backend's module, summary or not
		 * (lto::findThinLTOModule). */
		strv_addl(&cmd, driver, "-c", "-x", "ir", bc, NULL);
		strv_addown(&cmd, xasprintf("-fthinlto-index=%s", bc));
		strv_addl(&cmd, "-mllvm", "-thinlto-assume-merged", NULL);
		codegen_flags(lc, &cmd);
		if (dwo)
			split_dwarf_flags(gc, dwo, &cmd);
		strv_add(&cmd, "-o");
		strv_addown(&cmd, xasprintf("%s.tmp", obj));
		r |= cmd_var(nj, "cmd", cmd.v);
		buf_printf(nj, "  desc = MTPC slot %s p%d\n", m->key, i);
		strv_free(&cmd);
		free(obj);
		free(bc);
		free(idx);
		free(dwo);
	}

	/* The merge takes the dyndep file as an implicit input (order-only
	 * leaves a stale object when the partition count shrinks). */
	r |= build_line(nj, V(native), "merge", NULL, V(dd, nfile), NULL);
	buf_add(nj, "  dyndep = ");
	r |= nw_path(nj, dd);
	buf_addc(nj, '\n');
	strv_addl(&cmd, gc->self, "--merge-step", "--dir", dir, "--out", native, "--llvm-bin",
		  gc->llvm_bin, NULL);
	if (m->record)
		strv_addl(&cmd, "--record-module", m->path, NULL);
	strv_add(&cmd, "--");
	/* If a partition failed to compile, the merge runs the plain backend. */
	backend_cmd(gc, lc, m, backend, driver, 0, &cmd);
	r |= cmd_var(nj, "cmd", cmd.v);
	buf_printf(nj, "  desc = MTPC merge %s\n", m->key);
	strv_free(&cmd);

	free(dir);
	free(dd);
	free(nfile);
	free(backend);
	free(native);
	free(kmax);
	return r;
}

/* Modules without a summary (or when mtpc-split cannot say) get a cost from
 * their size: about this many bitcode bytes per summary instruction (SQLite's
 * modules: 9 to 16). */
#define BYTES_PER_INST 10

/* The summary's instructions, else bytes turned into instructions. */
static long long estimated_cost(const struct module *m)
{
	return m->insts >= 0 ? m->insts : m->size / BYTES_PER_INST;
}

/* Paths per mtpc-split --print-cost run (keeps the command line short). */
#define COST_BATCH 256

/* m->insts for every module, from mtpc-split --print-cost (the modules'
 * ThinLTO summaries, read without loading any function). On failure, one
 * warning and the modules keep -1 (their size stands in). */
static void estimate_costs(const struct graph_conf *gc, struct graph *g)
{
	char *list = xasprintf("%s/costs.txt", gc->inner);
	for (size_t first = 0; first < g->nmods; first += COST_BATCH) {
		size_t end = first + COST_BATCH < g->nmods ? first + COST_BATCH : g->nmods;
		struct strv cmd = {0};
		strv_addl(&cmd, gc->split_tool, "--print-cost", "-o", list, NULL);
		for (size_t i = first; i < end; i++)
			strv_add(&cmd, g->mods[i].path);
		struct buf err = {0};
		char *text = NULL;
		size_t len;
		int st = proc_run(cmd.v, NULL, NULL, &err);
		if (st != 0 || mtpc_read_file(list, &text, &len) < 0) {
			size_t l = err.s ? strcspn(err.s, "\n") : 0;
			mtpc_warn("cannot estimate module costs (%s exited with %d%s%.*s); choosing by "
				  "bitcode size", gc->split_tool, st, l ? ": " : "", (int)l, l ? err.s : "");
			buf_free(&err);
			strv_free(&cmd);
			free(text);
			break;
		}
		/* One line per path, in order: "INSTS FUNCTIONS PATH" or "- - PATH". */
		char *line = text;
		for (size_t i = first; i < end && line && *line; i++) {
			long long insts;
			if (sscanf(line, "%lld", &insts) == 1)
				g->mods[i].insts = insts;
			line = strchr(line, '\n');
			line = line ? line + 1 : NULL;
		}
		free(text);
		buf_free(&err);
		strv_free(&cmd);
	}
	unlink(list);
	free(list);
}

/* Decide which modules are split, and why. By bytes when gc->threshold >= 0;
 * else by cost: the summary's instruction count, replaced by the measured
 * history where that disagrees by more than a quarter. Seconds are turned
 * into instructions at this link's own rate (its modules with history, at
 * least two), so the threshold keeps one unit on any machine and only a
 * module whose instructions are unusually slow (or fast) to compile moves.
 * A module split last time stays split down to 3/4 of the threshold: a
 * split module is measured as the sum of its slots, a little more than its
 * backend, and each flip re-plans it (and the shares of its neighbours). */
static void choose_splits(const struct graph_conf *gc, struct graph *g)
{
	int by_cost = gc->threshold < 0;
	if (by_cost)
		estimate_costs(gc, g);
	double hist_secs = 0, hist_insts = 0;
	int nhist = 0;
	for (size_t i = 0; i < g->nmods && by_cost && gc->history; i++) {
		struct module *m = &g->mods[i];
		if (m->insts <= 0)
			continue;
		m->seconds = gc->history(gc->history_ctx, m->path, &m->was_split);
		if (m->seconds > 0) {
			hist_secs += m->seconds;
			hist_insts += (double)m->insts;
			nhist++;
		}
	}
	for (size_t i = 0; i < g->nmods; i++) {
		struct module *m = &g->mods[i];
		m->cost = estimated_cost(m);
		if (nhist >= 2 && m->seconds > 0) {
			long long measured = (long long)(m->seconds * hist_insts / hist_secs + 0.5);
			if (measured * 4 > m->cost * 5 || measured * 4 < m->cost * 3) {
				m->cost = measured;
				m->measured = 1;
			}
		}
		if (gc->kmax < 2)
			m->split = 0;
		else if (!by_cost)
			m->split = m->size > gc->threshold;
		else if (m->was_split == 1)
			m->split = m->cost * 4 >= gc->cost_threshold * 3; /* hysteresis */
		else
			m->split = m->cost >= gc->cost_threshold;
		/* History is worth keeping for every module that could come near
		 * the threshold; tiny ones would only churn the cache. */
		m->record = by_cost && m->cost * 16 >= gc->cost_threshold;
	}
}

static const struct module *sort_mods; /* for cmp_schedule (qsort has no context) */

/* Split modules before plain ones, costlier first, then by path. */
static int cmp_schedule(const void *a, const void *b)
{
	const struct module *x = &sort_mods[*(const size_t *)a], *y = &sort_mods[*(const size_t *)b];
	if (x->split != y->split)
		return y->split - x->split;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return strcmp(x->path, y->path);
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

int graph_build(const struct graph_conf *gc, const struct linkcmd *lc, struct graph *g)
{
	memset(g, 0, sizeof *g);
	const char *out = linkcmd_output(lc);
	if (!out) {
		mtpc_error("link command has no -o");
		return -1;
	}
	g->output = absolute(out, gc->outer_cwd);
	if (strchr(gc->inner, ';') || strchr(gc->inner, '\n')) {
		/* --thinlto-prefix-replace uses ';' as its separator. */
		mtpc_error("build directory %s contains ';' or a newline", gc->inner);
		return -1;
	}
	char *driver = driver_path(lc, gc);
	struct strv th = {0}, fin = {0}, deps = {0};
	int r = 0, regular_added = 0;
	for (size_t i = 1; i < lc->args.n && r == 0; i++) {
		const char *w = lc->args.v[i];
		/* The thin link's regular LTO object (see REGULAR_LTO_OBJ) goes
		 * before the first input, outside any --start-lib group. */
		if (lc->kind[i] != IN_NONE && !regular_added) {
			strv_addown(&fin, xasprintf("%s/" REGULAR_LTO_OBJ, gc->inner));
			regular_added = 1;
		}
		if ((int)i == lc->output) {
			const char *tl = "thinlink.out";
			if (lc->output_joined) {
				strv_addown(&th, xasprintf("-o%s/%s", gc->inner, tl));
				strv_add(&fin, w);
			} else {
				strv_addown(&th, xasprintf("%s/%s", gc->inner, tl));
				strv_add(&fin, w);
			}
			continue;
		}
		if (lc->kind[i] != IN_NONE) {
			r = rewrite_input(gc, lc, i, g, &th, &fin);
			if (lc->kind[i] == IN_FILE)
				strv_addown(&deps, absolute(w, gc->outer_cwd));
			else if (lc->kind[i] == IN_ARCHIVE)
				strv_addown(&deps, absolute(w, gc->outer_cwd));
			continue;
		}
		if (!strncmp(w, "-Wl,", 4))
			wl_files(w, gc->outer_cwd, g->output, &deps);
		strv_add(&th, w);
		strv_add(&fin, w);
	}
	if (r == 0 && g->nmods == 0) {
		mtpc_error("no ThinLTO bitcode among the link inputs");
		r = -1;
	}
	if (r < 0)
		goto done;
	choose_splits(gc, g);

	strv_add(&th, "-Wl,--thinlto-index-only");
	strv_add(&th, "-Wl,--thinlto-emit-imports-files");
	strv_addown(&th, xasprintf("-Wl,--lto-obj-path=%s/stage/" REGULAR_LTO_OBJ, gc->inner));
	strv_addown(&th, xasprintf("-Wl,--thinlto-prefix-replace=/;%s/stage/", gc->inner));
	for (size_t i = 0; i < th.n; i++)
		linkcmd_rsp_word(&g->thinlink_rsp, th.v[i]);
	for (size_t i = 0; i < fin.n; i++)
		linkcmd_rsp_word(&g->link_rsp, fin.v[i]);

	struct buf *nj = &g->ninja;
	buf_add(nj, "# Generated by mtpc-link: the inner build of one MTPC link. Do not edit;\n"
		    "# mtpc-link rewrites it (only if changed) on every link.\n"
		    "ninja_required_version = 1.10\n\n");
	static const char *const rules[][2] = {
		{"thinlink", "1"}, {"backend", "1"}, {"split", "1"},
		{"slot", "1"},     {"merge", "1"},   {"link", "0"}, {"dwp", "1"},
	};
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		buf_printf(nj, "rule %s\n  command = $cmd\n  description = $desc\n%s\n", rules[i][0],
			   rules[i][1][0] == '1' ? "  restat = 1\n" : "");

	/* thin link: every shard is an output, written only if changed. */
	struct strv shards = {0}, ins = {0};
	for (size_t i = 0; i < g->nmods; i++)
		strv_add(&shards, g->mods[i].shard);
	for (size_t i = 0; i < g->nmods; i++)
		strv_add(&ins, g->mods[i].path);
	strv_addv(&ins, &deps);
	r |= build_line2(nj, shards.v, V(REGULAR_LTO_OBJ), "thinlink", ins.v,
			 V("thinlink.rsp", "modules.list"), NULL);
	struct strv cmd = {0};
	strv_addl(&cmd, gc->self, "--thinlink-step", "--cwd", gc->outer_cwd, "--dir", gc->inner,
		  "--", driver, NULL);
	strv_addown(&cmd, xasprintf("@%s/thinlink.rsp", gc->inner));
	r |= cmd_var(nj, "cmd", cmd.v);
	buf_add(nj, "  desc = MTPC thin link\n\n");
	strv_free(&cmd);
	strv_free(&shards);
	strv_free(&ins);

	/* Ninja (1.11) starts ready edges in manifest order: split modules
	 * first, biggest first, so their split and slots, the critical path,
	 * go ahead of small modules' backends. The link keeps link order. */
	size_t *order = xmalloc((g->nmods + 1) * sizeof *order);
	for (size_t i = 0; i < g->nmods; i++)
		order[i] = i;
	sort_mods = g->mods;
	qsort(order, g->nmods, sizeof *order, cmp_schedule);
	struct sched_mod *sm = xmalloc((g->nmods + 1) * sizeof *sm);
	for (size_t k = 0; k < g->nmods; k++)
		/* Estimates only: shares from measured times would move with
		 * the machine's noise, and a new share is a new plan. */
		sm[k] = (struct sched_mod){estimated_cost(&g->mods[order[k]]), g->mods[order[k]].split};
	int *shares = xmalloc((g->nmods * gc->kmax + 1) * sizeof *shares);
	int *weighted = xmalloc((g->nmods + 1) * sizeof *weighted);
	sched_shares(sm, g->nmods, gc->jobs, gc->kmax, shares, weighted);
	for (size_t k = 0; k < g->nmods; k++) {
		const struct module *m = &g->mods[order[k]];
		if (m->split)
			r |= emit_split(nj, gc, lc, m, driver, weighted[k] ? &shares[k * gc->kmax] : NULL);
		else {
			char *native = xasprintf("mod/%s/native.o", m->key);
			r |= emit_backend(nj, gc, lc, m, native, driver, m->record);
			free(native);
		}
		buf_addc(nj, '\n');
	}
	free(shares);
	free(weighted);
	free(sm);
	free(order);
	struct strv natives = {0};
	for (size_t i = 0; i < g->nmods; i++)
		strv_addown(&natives, xasprintf("mod/%s/native.o", g->mods[i].key));

	strv_add(&natives, REGULAR_LTO_OBJ);
	strv_addv(&natives, &deps);
	r |= build_line(nj, V(g->output), "link", natives.v, V("link.rsp"), NULL);
	strv_addl(&cmd, gc->self, "--run-step", "--cwd", gc->outer_cwd, "--", driver, NULL);
	strv_addown(&cmd, xasprintf("@%s/link.rsp", gc->inner));
	r |= cmd_var(nj, "cmd", cmd.v);
	buf_add(nj, "  desc = MTPC link\n\n");
	strv_free(&cmd);
	if (lc->split_dwarf) {
		/* Every .dwo the output names, packed next to it where gdb looks.
		 * The inputs are the link's (a changed .dwo comes with a changed
		 * object: the skeleton holds its DWO id); the output itself is
		 * order-only because mtpc-link touches it after the inner build. */
		g->dwp = xasprintf("%s.dwp", g->output);
		r |= build_line(nj, V(g->dwp), "dwp", natives.v, V("link.rsp"), V(g->output));
		strv_addl(&cmd, gc->self, "--dwp-step", "--out", g->dwp, "--llvm-bin",
			  gc->llvm_bin, "--", g->output, NULL);
		r |= cmd_var(nj, "cmd", cmd.v);
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
	if (r)
		mtpc_error("a path of this link cannot be written in a Ninja file (newline?)");
done:
	strv_free(&th);
	strv_free(&fin);
	strv_free(&deps);
	free(driver);
	return r ? -1 : 0;
}

static int put(const struct graph_conf *gc, const char *name, const struct buf *b)
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
		char *d = xasprintf("%s/mod/%s/parts", gc->inner, g->mods[i].key);
		int r = mtpc_mkdir_p(d);
		free(d);
		if (r < 0) {
			mtpc_error("cannot create module directory: %s", strerror(errno));
			return -1;
		}
	}
	if (put(gc, "thinlink.rsp", &g->thinlink_rsp) < 0 || put(gc, "link.rsp", &g->link_rsp) < 0 ||
	    put(gc, "modules.list", &g->modules_list) < 0 || put(gc, "build.ninja", &g->ninja) < 0)
		return -1;
	return 0;
}

void graph_free(struct graph *g)
{
	for (size_t i = 0; i < g->nmods; i++) {
		free(g->mods[i].path);
		free(g->mods[i].key);
		free(g->mods[i].shard);
	}
	free(g->mods);
	buf_free(&g->ninja);
	buf_free(&g->thinlink_rsp);
	buf_free(&g->link_rsp);
	buf_free(&g->modules_list);
	free(g->output);
	free(g->dwp);
}
