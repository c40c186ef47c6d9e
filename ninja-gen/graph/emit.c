/* emit.c: the edges of the modules (graph.h): a plain backend, or a split,
 * its slots bound by a dyndep file and the edge that ends it (the merge of
 * a link's backend, the join of a compile's pre-link pipeline). Command
 * lines come from the step protocol (step_protocol.h). */
#define _POSIX_C_SOURCE 200809L
#include "graph_int.h"
#include "inner_dir.h"
#include "ninja_write.h"
#include "sched.h"
#include "step_protocol.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
 * (record: the step records its time and rebuilds in the plan cache, for
 * the history). */
static void backend_cmd(const struct graph_conf *gc, const struct graph_codegen *cg,
			const struct module *m, const char *out, int record, struct strv *cmd)
{
	char *dwo = cg->split_dwarf ? dwo_of(out) : NULL;
	step_line(cmd, gc->self, STEP_BACKEND);
	step_arg(cmd, STEP_BACKEND, OPT_OUT, out);
	step_arg(cmd, STEP_BACKEND, OPT_RECORD_MODULE, record ? m->id : NULL);
	step_arg(cmd, STEP_BACKEND, OPT_MODULE, record ? m->path : NULL);
	step_arg(cmd, STEP_BACKEND, OPT_DWO, dwo);
	step_command(cmd);
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

/* The slot of partition i: the post-import partition compiled as a
 * ThinLTO backend whose import is done (STAGE_BACKEND), or the compile's
 * own command (its pre-link pipeline, or its whole pipeline and code
 * generation) on a partition of its frontend's output (STAGE_PRELINK,
 * STAGE_NATIVE). */
static void slot_cmd(const struct graph_conf *gc, const struct graph_codegen *cg, const char *dir, int i,
		     const char *obj, const char *dwo, const char *dwo_name, struct strv *cmd)
{
	char *plan = xasprintf("%s/" MOD_PARTS "/" SPLIT_PLAN, dir), *idx = xasprintf("%d", i);
	char *bc = xasprintf("%s/" MOD_PARTS "/" SPLIT_PART_FMT, dir, i), *tmp = xasprintf("%s.tmp", obj);
	step_line(cmd, gc->self, STEP_SLOT);
	step_arg(cmd, STEP_SLOT, OPT_OUT, obj);
	step_arg(cmd, STEP_SLOT, OPT_PLAN, plan);
	step_arg(cmd, STEP_SLOT, OPT_PART, idx);
	step_arg(cmd, STEP_SLOT, OPT_DWO, dwo);
	step_arg(cmd, STEP_SLOT, OPT_CACHE, gc->cache);
	step_command(cmd);
	strv_addv(cmd, &gc->launcher);
	if (cg->stage != STAGE_BACKEND) {
		char *dwo_tmp = dwo ? xasprintf("%s.tmp", dwo) : NULL;
		cg->partition_cmd(cg->partition_ctx, bc, tmp, dwo_tmp, cmd);
		free(dwo_tmp);
	} else {
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
		strv_add(cmd, cg->driver);
		strv_addv(cmd, &cg->driver_args);
		strv_addl(cmd, "-c", "-x", "ir", bc, NULL);
		strv_addown(cmd, xasprintf("-fthinlto-index=%s", bc));
		strv_addl(cmd, "-mllvm", "-thinlto-assume-merged", NULL);
		/* Every partition describes the C++ types its code uses; as
		 * type units (COMDAT groups) the link keeps each type once. */
		if (cg->type_units)
			strv_add(cmd, "-fdebug-types-section");
		strv_addv(cmd, &cg->flags);
		if (dwo)
			split_dwarf_flags(gc, dwo_name, dwo, cmd);
		strv_addl(cmd, "-o", tmp, NULL);
	}
	free(plan);
	free(idx);
	free(bc);
	free(tmp);
}

/* The split step of m (kmax slots; shares for mtpc-split --weights, or
 * NULL). */
static void split_cmd(const struct graph_conf *gc, const struct graph_codegen *cg, const struct module *m,
		      int kmax, const int *shares, struct strv *cmd)
{
	char *kmax_s = xasprintf("%d", kmax);
	int backend = cg->stage == STAGE_BACKEND;
	step_line(cmd, gc->self, STEP_SPLIT);
	step_arg(cmd, STEP_SPLIT, OPT_TOOL, gc->split_tool);
	step_arg(cmd, STEP_SPLIT, OPT_MODULE, m->path);
	/* With an index: import first (a link's backend); without: the
	 * frontend's output as it is (a compile's pre-link split). */
	step_arg(cmd, STEP_SPLIT, OPT_INDEX, backend ? m->shard : NULL);
	step_arg(cmd, STEP_SPLIT, OPT_DIR, m->dir);
	step_arg(cmd, STEP_SPLIT, OPT_KMAX, kmax_s);
	step_arg(cmd, STEP_SPLIT, OPT_RELOC, backend ? (cg->pic ? "pic" : "static") : NULL);
	step_arg(cmd, STEP_SPLIT, OPT_MIN_COST, gc->min_cost);
	/* A compile split beside other work (the work board) has fewer lanes
	 * than slots: mtpc-split then chooses the count from the copies and
	 * duplicates each count costs (count.h). Not passed otherwise, so that
	 * on an idle machine the plan (and its key) never depend on the load
	 * or on --jobs. A link's backend stage gives its partitions shares of
	 * lanes that other modules' backends also hold (--weights). */
	char *cores = !backend && gc->split_cores > 0 && gc->split_cores < kmax ? xasprintf("%d", gc->split_cores)
										 : NULL;
	step_arg(cmd, STEP_SPLIT, OPT_CORES, cores);
	free(cores);
	/* A split for speed: made again beside the work board as it is when
	 * the step runs (MOD_RECHECK; the file is no input: the choice is
	 * about speed, and a step that does not rerun keeps it). */
	char *recheck = m->recheck.parts >= 2 ? xasprintf("%s/" MOD_RECHECK, m->dir) : NULL;
	step_arg(cmd, STEP_SPLIT, OPT_RECHECK, recheck);
	free(recheck);
	/* The rebuilds of a relayed module, or of one split for its edits,
	 * decide whether it stays so (graph.h). */
	step_arg(cmd, STEP_SPLIT, OPT_RECORD_MODULE, (m->relay || m->for_edits) && m->record ? m->id : NULL);
	step_arg(cmd, STEP_SPLIT, OPT_CACHE, gc->cache);
	if (!backend || opt_level_zero(cg))
		step_arg(cmd, STEP_SPLIT, OPT_SPLIT_ARG, "--no-ipo");
	if (!backend)
		step_arg(cmd, STEP_SPLIT, OPT_SPLIT_ARG, cg->stage == STAGE_NATIVE ? "--native" : "--pre-link");
	if (shares) {
		/* Before the user's split arguments, which may override it. */
		struct buf w = {0};
		for (int i = 0; i < kmax; i++)
			buf_printf(&w, "%s%d", i ? "," : "", shares[i]);
		step_arg(cmd, STEP_SPLIT, OPT_SPLIT_ARG, "--weights");
		step_arg(cmd, STEP_SPLIT, OPT_SPLIT_ARG, w.s);
		buf_free(&w);
	}
	for (size_t i = 0; i < gc->split_args.n; i++)
		step_arg(cmd, STEP_SPLIT, OPT_SPLIT_ARG, gc->split_args.v[i]);
	free(kmax_s);
}

/* The edge that ends a split: the merge of a link's backend (its fallback,
 * after a slot failed, the plain backend), the join of a ThinLTO compile's
 * pre-link split, or the merge of a plain compile's split (the fallback of
 * both the plain compile, run in the compile's directory). */
static void final_cmd(const struct graph_conf *gc, const struct graph_codegen *cg, const struct module *m,
		      const char *native, struct strv *cmd)
{
	if (cg->stage == STAGE_PRELINK) {
		step_line(cmd, gc->self, STEP_JOIN);
		step_arg(cmd, STEP_JOIN, OPT_TOOL, gc->split_tool);
		step_arg(cmd, STEP_JOIN, OPT_MODULE, m->path);
		step_arg(cmd, STEP_JOIN, OPT_DIR, m->dir);
		step_arg(cmd, STEP_JOIN, OPT_OUT, native);
		step_arg(cmd, STEP_JOIN, OPT_CWD, gc->outer_cwd);
		for (size_t i = 0; i < gc->split_args.n; i++)
			step_arg(cmd, STEP_JOIN, OPT_SPLIT_ARG, gc->split_args.v[i]);
		step_command(cmd);
		strv_addv(cmd, &cg->fallback);
		return;
	}
	int compile = cg->stage == STAGE_NATIVE;
	step_line(cmd, gc->self, STEP_MERGE);
	step_arg(cmd, STEP_MERGE, OPT_DIR, m->dir);
	step_arg(cmd, STEP_MERGE, OPT_OUT, native);
	step_arg(cmd, STEP_MERGE, OPT_LLVM_BIN, gc->llvm_bin);
	step_arg(cmd, STEP_MERGE, OPT_RECORD_MODULE, m->record ? m->id : NULL);
	step_arg(cmd, STEP_MERGE, OPT_NAMES, cg->names_once ? "once" : NULL);
	step_arg(cmd, STEP_MERGE, OPT_CWD, compile ? gc->outer_cwd : NULL);
	step_arg(cmd, STEP_MERGE, OPT_GZ, compile ? cg->gz : NULL);
	/* A plain compile's partitions' .dwo files, merged into the one its
	 * fallback writes too. */
	char *dwo = compile && cg->split_dwarf ? dwo_of(native) : NULL;
	step_arg(cmd, STEP_MERGE, OPT_DWO, dwo);
	free(dwo);
	step_command(cmd);
	if (compile) {
		strv_addv(cmd, &cg->fallback);
		return;
	}
	char *backend = xasprintf("%s/" MOD_BACKEND, m->dir);
	backend_cmd(gc, cg, m, backend, 0, cmd);
	free(backend);
}

int graph_emit_split(struct buf *nj, const struct graph_conf *gc, const struct graph_codegen *cg,
		     const struct module *m, int kmax, const int *shares)
{
	int r = 0;
	const char *dir = m->dir;
	char *dd = xasprintf("%s/" MOD_DYNDEP, dir), *nfile = xasprintf("%s/" MOD_COUNT, dir);
	char *sums = xasprintf("%s/" MOD_PARTS "/" SPLIT_CHECKSUMS, dir);
	char *lines = xasprintf("%s/" MOD_PARTS "/" SPLIT_LINES, dir);
	char *native = graph_native(m);
	/* Where the split's input comes from: the index shard (import), or
	 * the frontend's output. */
	char *input = cg->stage == STAGE_BACKEND ? m->shard : m->path;

	/* import + split (fused in mtpc-split), then the dyndep file. A new
	 * mtpc-split may cut differently: its binary is an input when its path
	 * is known (restat stops at the partitions that come out the same). */
	int tool_known = gc->split_tool[0] == '/' && access(gc->split_tool, F_OK) == 0;
	r |= nw_build(nj, V(dd, nfile, sums, lines), "split", V(input),
		      tool_known ? V((char *)gc->split_tool) : NULL, NULL);
	struct strv cmd = {0};
	split_cmd(gc, cg, m, kmax, shares, &cmd);
	r |= nw_cmd_var(nj, "cmd", cmd.v);
	buf_printf(nj, "  desc = MTPC split %s\n", m->key);
	strv_free(&cmd);

	/* A link's unsplit backend, pulled in by the dyndep file only on
	 * fallback (a compile's join runs the plain compile itself), or when
	 * the split step held the module whole: then it records the module's
	 * time, as any plain backend does. */
	if (cg->stage == STAGE_BACKEND) {
		char *backend = xasprintf("%s/" MOD_BACKEND, dir);
		r |= emit_backend(nj, gc, cg, m, backend, m->recheck.parts >= 2 && m->record);
		free(backend);
	}

	for (int i = 0; i < kmax; i++) {
		char *obj = xasprintf("%s/" MOD_SLOT_FMT, dir, i);
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
		slot_cmd(gc, cg, dir, i, obj, dwo, dwo_name, &cmd);
		r |= nw_cmd_var(nj, "cmd", cmd.v);
		buf_printf(nj, "  desc = MTPC slot %s p%d\n", m->key, i);
		strv_free(&cmd);
		free(obj);
		free(dwo);
		free(dwo_name);
	}

	/* The merge (or join) takes the dyndep file as an implicit input
	 * (order-only leaves a stale object when the partition count shrinks). */
	const char *end = cg->stage == STAGE_PRELINK ? "join" : "merge";
	r |= nw_build(nj, V(native), end, NULL,
		      V(dd, nfile, sums, lines), NULL);
	buf_add(nj, "  dyndep = ");
	r |= nw_path(nj, dd);
	buf_addc(nj, '\n');
	final_cmd(gc, cg, m, native, &cmd);
	r |= nw_cmd_var(nj, "cmd", cmd.v);
	buf_printf(nj, "  desc = MTPC %s %s\n", end, m->key);
	strv_free(&cmd);

	free(dd);
	free(nfile);
	free(sums);
	free(lines);
	free(native);
	return r;
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
	buf_printf(nj, "# Generated by %s: an inner build of MTPC. Do not edit;\n"
		       "# %s rewrites it (only if changed) each time it runs.\n"
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
		{"merge", 1, 1},    {"join", 1, 1},    {"link", 0, 0},  {"dwp", 1, 1},
		{"job", 0, 0},
	};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	buf_printf(nj, "pool local\n  depth = %ld\n\n", cores > 0 ? cores : 1);
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		buf_printf(nj, "rule %s\n  command = $cmd\n  description = $desc\n%s%s\n",
			   rules[i].name, rules[i].restat ? "  restat = 1\n" : "",
			   rules[i].local ? "  pool = local\n" : "");
}

int graph_emit_modules(const struct graph_conf *gc, const struct graph_codegen *cg, struct graph *g)
{
	graph_name_modules(g);
	graph_choose(gc, g);
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
		sm[k] = (struct sched_mod){graph_estimated_cost(&g->mods[order[k]]), g->mods[order[k]].split};
	int *shares = xmalloc((g->nmods * gc->kmax + 1) * sizeof *shares);
	int *weighted = xmalloc((g->nmods + 1) * sizeof *weighted);
	sched_shares(sm, g->nmods, gc->jobs, gc->kmax, shares, weighted);
	int r = 0;
	for (size_t k = 0; k < g->nmods; k++) {
		const struct module *m = &g->mods[order[k]];
		if (m->split) {
			/* the shares are planned for kmax partitions */
			int parts = m->parts > 0 ? m->parts : gc->kmax;
			r |= graph_emit_split(&g->ninja, gc, cg, m, parts,
					weighted[k] && parts == gc->kmax ? &shares[k * gc->kmax] : NULL);
		} else if (m->relay) {
			r |= graph_emit_split(&g->ninja, gc, cg, m, 1, NULL);
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
