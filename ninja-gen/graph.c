/* graph.c: see graph.h. */
#define _POSIX_C_SOURCE 200809L
#include "graph.h"
#include "hash.h"
#include "ninja_write.h"
#include "proc.h"
#include "sched.h"
#include "steps.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

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
	m->dir = xasprintf("%smod/%s", gc->prefix ? gc->prefix : "", m->key);
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
	return xasprintf("%s/native.o", m->dir);
}

#define V NW_LIST

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
static void split_dwarf_flags(const struct graph_conf *gc, const char *name, const char *dwo,
			      struct strv *cmd)
{
	strv_add(cmd, "-Xclang");
	strv_add(cmd, "-split-dwarf-file");
	strv_add(cmd, "-Xclang");
	strv_addown(cmd, name[0] == '/' ? xstrdup(name) : xasprintf("%s/%s", gc->inner, name));
	strv_add(cmd, "-Xclang");
	strv_add(cmd, "-split-dwarf-output");
	strv_add(cmd, "-Xclang");
	strv_addown(cmd, xasprintf("%s.tmp", dwo));
}

/* Append the command of the plain ThinLTO backend of module m into out
 * (record: the step records its time in the plan cache, for the history). */
static void backend_cmd(const struct graph_conf *gc, const struct graph_codegen *cg,
			const struct module *m, const char *out, int record, struct strv *cmd)
{
	char *dwo = cg->split_dwarf ? dwo_of(out) : NULL;
	strv_addl(cmd, gc->self, "--backend-step", "--out", out, NULL);
	if (record)
		strv_addl(cmd, "--record-module", m->id, "--module", m->path, NULL);
	if (dwo) {
		strv_add(cmd, "--dwo");
		strv_add(cmd, dwo);
	}
	strv_add(cmd, "--");
	strv_addv(cmd, &gc->launcher);
	strv_add(cmd, cg->driver);
	strv_addv(cmd, &cg->driver_args);
	strv_addl(cmd, "-c", "-x", "ir", m->path, NULL);
	strv_addown(cmd, xasprintf("-fthinlto-index=%s", m->shard));
	strv_addv(cmd, &cg->flags);
	if (dwo)
		split_dwarf_flags(gc, dwo, dwo, cmd);
	strv_add(cmd, "-o");
	strv_addown(cmd, xasprintf("%s.tmp", out));
	free(dwo);
}

/* The plain ThinLTO backend of module m into out (as build.ninja names it). */
static int emit_backend(struct buf *nj, const struct graph_conf *gc, const struct graph_codegen *cg,
			const struct module *m, const char *out, int record)
{
	/* The shard alone is the input: it carries the hash of this module and
	 * of every module it imports from, so touching an object without
	 * changing it stops at the thin link (restat). */
	char *dwo = cg->split_dwarf ? dwo_of(out) : NULL;
	int r = nw_build2(nj, V((char *)out), dwo ? V(dwo) : NULL, "backend", V(m->shard), NULL,
			  NULL);
	struct strv cmd = {0};
	backend_cmd(gc, cg, m, out, record, &cmd);
	r |= nw_cmd_var(nj, "cmd", cmd.v);
	buf_printf(nj, "  desc = MTPC backend %s\n", m->key);
	strv_free(&cmd);
	free(dwo);
	return r;
}

/* Whether the backend compiles at -O0 (the last -O word of its flags):
 * then mtpc-split must not run its interprocedural passes, which would
 * optimize what the user asked to keep as written. */
static int opt_level_zero(const struct graph_codegen *cg)
{
	const char *last = NULL;
	for (size_t i = 0; i < cg->flags.n; i++)
		if (!strncmp(cg->flags.v[i], "-O", 2))
			last = cg->flags.v[i];
	return last && !strcmp(last, "-O0");
}

/* kmax: slots (gc->kmax, or 1 for a relayed module); shares: kmax partition
 * shares (sched.h units) for mtpc-split --weights, or NULL for equal
 * partitions. */
static int emit_split(struct buf *nj, const struct graph_conf *gc, const struct graph_codegen *cg,
		      const struct module *m, int kmax, const int *shares)
{
	int r = 0;
	const char *dir = m->dir;
	char *dd = xasprintf("%s/split.dd", dir), *nfile = xasprintf("%s/split.n", dir);
	char *sums = xasprintf("%s/parts/" STEPS_CHECKSUMS, dir);
	char *lines = xasprintf("%s/parts/" STEPS_LINES, dir);
	char *backend = xasprintf("%s/backend.o", dir), *native = xasprintf("%s/native.o", dir);
	char *kmax_s = xasprintf("%d", kmax);

	/* import + split (fused in mtpc-split), then the dyndep file. A new
	 * mtpc-split may cut differently: its binary is an input when its path
	 * is known (restat stops at the partitions that come out the same). */
	int tool_known = gc->split_tool[0] == '/' && access(gc->split_tool, F_OK) == 0;
	r |= nw_build(nj, V(dd, nfile, sums, lines), "split", V(m->shard),
		      tool_known ? V((char *)gc->split_tool) : NULL, NULL);
	struct strv cmd = {0};
	strv_addl(&cmd, gc->self, "--split-step", "--tool", gc->split_tool, "--module", m->path,
		  "--index", m->shard, "--dir", dir, "--kmax", kmax_s, "--reloc",
		  cg->pic ? "pic" : "static", NULL);
	if (gc->min_cost) {
		strv_add(&cmd, "--min-cost");
		strv_add(&cmd, gc->min_cost);
	}
	if (m->relay && m->record) /* its rebuilds decide whether it stays relayed */
		strv_addl(&cmd, "--record-module", m->id, NULL);
	if (gc->cache) {
		strv_add(&cmd, "--cache");
		strv_add(&cmd, gc->cache);
	}
	if (opt_level_zero(cg))
		strv_addl(&cmd, "--split-arg", "--no-ipo", NULL);
	if (shares) {
		/* Before the user's split arguments, which may override it. */
		struct buf w = {0};
		for (int i = 0; i < kmax; i++)
			buf_printf(&w, "%s%d", i ? "," : "", shares[i]);
		strv_addl(&cmd, "--split-arg", "--weights", "--split-arg", w.s, NULL);
		buf_free(&w);
	}
	for (size_t i = 0; i < gc->split_args.n; i++) {
		strv_add(&cmd, "--split-arg");
		strv_add(&cmd, gc->split_args.v[i]);
	}
	r |= nw_cmd_var(nj, "cmd", cmd.v);
	buf_printf(nj, "  desc = MTPC split %s\n", m->key);
	strv_free(&cmd);

	/* The unsplit backend, pulled in by the dyndep file only on fallback. */
	r |= emit_backend(nj, gc, cg, m, backend, 0);

	for (int i = 0; i < kmax; i++) {
		char *obj = xasprintf("%s/p%d.o", dir, i);
		char *bc = xasprintf("%s/parts/p%d.bc", dir, i);
		char *idx = xasprintf("%d", i);
		/* With -gsplit-dwarf the slot writes p<i>.ph.dwo (placeholder
		 * checksums) and the merge p<i>.dwo, the name its skeleton has. */
		char *dwo = cg->split_dwarf ? xasprintf("%s/p%d.ph.dwo", dir, i) : NULL;
		char *dwo_name = cg->split_dwarf ? dwo_of(obj) : NULL;
		/* The slot waits for the split (order-only) and learns its real
		 * input p<i>.bc from the dyndep file. */
		r |= nw_build2(nj, V(obj), dwo ? V(dwo) : NULL, "slot", NULL, NULL, V(dd));
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
		strv_add(&cmd, cg->driver);
		strv_addv(&cmd, &cg->driver_args);
		strv_addl(&cmd, "-c", "-x", "ir", bc, NULL);
		strv_addown(&cmd, xasprintf("-fthinlto-index=%s", bc));
		strv_addl(&cmd, "-mllvm", "-thinlto-assume-merged", NULL);
		/* Every partition describes the C++ types its code uses; as
		 * type units (COMDAT groups) the link keeps each type once. */
		if (cg->type_units)
			strv_add(&cmd, "-fdebug-types-section");
		strv_addv(&cmd, &cg->flags);
		if (dwo)
			split_dwarf_flags(gc, dwo_name, dwo, &cmd);
		strv_add(&cmd, "-o");
		strv_addown(&cmd, xasprintf("%s.tmp", obj));
		r |= nw_cmd_var(nj, "cmd", cmd.v);
		buf_printf(nj, "  desc = MTPC slot %s p%d\n", m->key, i);
		strv_free(&cmd);
		free(obj);
		free(bc);
		free(idx);
		free(dwo);
		free(dwo_name);
	}

	/* The merge takes the dyndep file as an implicit input (order-only
	 * leaves a stale object when the partition count shrinks). */
	r |= nw_build(nj, V(native), "merge", NULL, V(dd, nfile, sums, lines), NULL);
	buf_add(nj, "  dyndep = ");
	r |= nw_path(nj, dd);
	buf_addc(nj, '\n');
	strv_addl(&cmd, gc->self, "--merge-step", "--dir", dir, "--out", native, "--llvm-bin",
		  gc->llvm_bin, NULL);
	if (m->record)
		strv_addl(&cmd, "--record-module", m->id, NULL);
	if (cg->names_once)
		strv_addl(&cmd, "--names", "once", NULL);
	strv_add(&cmd, "--");
	/* If a partition failed to compile, the merge runs the plain backend. */
	backend_cmd(gc, cg, m, backend, 0, &cmd);
	r |= nw_cmd_var(nj, "cmd", cmd.v);
	buf_printf(nj, "  desc = MTPC merge %s\n", m->key);
	strv_free(&cmd);

	free(dd);
	free(nfile);
	free(sums);
	free(lines);
	free(backend);
	free(native);
	free(kmax_s);
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
		struct module_history h = {-1, -1, 0, 0};
		gc->history(gc->history_ctx, m->id, &h);
		m->seconds = h.seconds;
		m->was_split = h.was_split;
		m->rebuilds = h.rebuilds;
		m->forced = h.forced;
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
		/* Relayed: big enough that its recompile is worth an import step
		 * to avoid, and other modules' changes keep forcing it (graph.h). */
		m->relay = by_cost && !m->split && gc->kmax >= 2 && m->cost >= gc->relay_cost &&
			   (gc->relay == GRAPH_RELAY_ALWAYS ||
			    (gc->relay == GRAPH_RELAY_AUTO && m->forced >= RELAY_MIN_FORCED &&
			     m->forced * 2 >= m->rebuilds));
		/* History is worth keeping for every module that could come near
		 * the threshold or be relayed; tiny ones would only churn the cache. */
		m->record = by_cost && (m->cost * 16 >= gc->cost_threshold ||
					(gc->relay == GRAPH_RELAY_AUTO && m->cost >= gc->relay_cost));
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

void graph_rules(struct buf *nj, const char *tool)
{
	buf_printf(nj, "# Generated by %s: the inner build of one MTPC link. Do not edit;\n"
		       "# %s rewrites it (only if changed) on every link.\n"
		       "ninja_required_version = 1.10\n\n", tool, tool);
	/* Every step writes its outputs only if changed (restat), except the
	 * final link, whose output Ninja must see change. "job": a DTLTO job
	 * run as lld wrote it. The steps that read or write whole modules run
	 * here even when the compiles run on a cluster (slurm.h), and -j then
	 * counts the cluster's CPUs: the pool "local" keeps them to one per
	 * core here. */
	static const struct {
		const char *name;
		int restat, local;
	} rules[] = {
		{"thinlink", 1, 0}, {"backend", 1, 0}, {"split", 1, 1}, {"slot", 1, 0},
		{"merge", 1, 1},    {"link", 0, 0},    {"dwp", 1, 1},   {"job", 0, 0},
	};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	buf_printf(nj, "pool local\n  depth = %ld\n\n", cores > 0 ? cores : 1);
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		buf_printf(nj, "rule %s\n  command = $cmd\n  description = $desc\n%s%s\n",
			   rules[i].name, rules[i].restat ? "  restat = 1\n" : "",
			   rules[i].local ? "  pool = local\n" : "");
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
static void unique_names(struct graph *g)
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

int graph_emit_modules(const struct graph_conf *gc, const struct graph_codegen *cg, struct graph *g)
{
	unique_names(g);
	choose_splits(gc, g);
	/* Ninja (1.11) starts ready edges in manifest order: split modules
	 * first, biggest first, so their split and slots, the critical path,
	 * go ahead of small modules' backends. */
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
	int r = 0;
	for (size_t k = 0; k < g->nmods; k++) {
		const struct module *m = &g->mods[order[k]];
		if (m->split) {
			r |= emit_split(&g->ninja, gc, cg, m, gc->kmax,
					weighted[k] ? &shares[k * gc->kmax] : NULL);
		} else if (m->relay) {
			r |= emit_split(&g->ninja, gc, cg, m, 1, NULL);
		} else {
			char *native = graph_native(m);
			r |= emit_backend(&g->ninja, gc, cg, m, native, m->record);
			free(native);
		}
		buf_addc(&g->ninja, '\n');
	}
	free(shares);
	free(weighted);
	free(sm);
	free(order);
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
	/* The response files and module list are mtpc-link's (empty otherwise). */
	const struct {
		const char *name;
		const struct buf *b;
	} files[] = {{"thinlink.rsp", &g->thinlink_rsp}, {"link.rsp", &g->link_rsp},
		     {"modules.list", &g->modules_list}, {"build.ninja", &g->ninja}};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		if (files[i].b->len && put(gc, files[i].name, files[i].b) < 0)
			return -1;
	return 0;
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
	}
	free(g->mods);
	buf_free(&g->ninja);
	buf_free(&g->thinlink_rsp);
	buf_free(&g->link_rsp);
	buf_free(&g->modules_list);
	free(g->output);
	free(g->dwp);
}
