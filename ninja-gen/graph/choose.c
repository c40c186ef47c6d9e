/* choose.c: which modules are split or relayed (graph.h: by estimated
 * backend cost, corrected by measured history, or by bitcode bytes). The
 * policy of the graph, kept apart from the edges it leads to (emit.c). */
#define _POSIX_C_SOURCE 200809L
#include "bitcode_cost.h"
#include "graph_int.h"
#include "outer_log.h"
#include "proc.h"
#include "util.h"
#include "workboard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Modules without a summary (or when mtpc-split cannot say) get a cost from
 * their size: about this many bitcode bytes per summary instruction (SQLite's
 * modules: 9 to 16). */
#define BYTES_PER_INST 10

/* The summary's instructions, else bytes turned into instructions. */
long long graph_estimated_cost(const struct module *m)
{
	return m->insts >= 0 ? m->insts : m->size / BYTES_PER_INST;
}

/* estimate_costs for the modules ask[0..nask) by mtpc-split --print-cost. */
static void llvm_costs(const struct graph_conf *gc, struct graph *g, const size_t *ask, size_t nask)
{
	char *list = xasprintf("%s/costs.list", gc->inner), *costs = xasprintf("%s/costs.txt", gc->inner);
	struct buf paths = {0};
	for (size_t k = 0; k < nask; k++)
		buf_printf(&paths, "%s\n", g->mods[ask[k]].path);
	char *at = xasprintf("@%s", list);
	char *cmd[] = {(char *)gc->split_tool, "--print-cost", "-o", costs, at, NULL};
	struct buf err = {0};
	char *text = NULL;
	size_t len;
	int st = mtpc_write_file(list, paths.s ? paths.s : "", paths.len, 0) < 0 ? -1 : proc_run(cmd, NULL, NULL, &err);
	if (st != 0 || mtpc_read_file(costs, &text, &len) < 0) {
		size_t l = err.s ? strcspn(err.s, "\n") : 0;
		mtpc_warn("cannot estimate module costs (%s exited with %d%s%.*s); choosing by bitcode size",
			  gc->split_tool, st, l ? ": " : "", (int)l, l ? err.s : "");
	} else {
		/* One line per path, in order: "INSTS FUNCTIONS PATH" or "- - PATH". */
		char *line = text;
		for (size_t k = 0; k < nask && line && *line; k++) {
			long long insts;
			if (sscanf(line, "%lld", &insts) == 1)
				g->mods[ask[k]].insts = insts;
			line = strchr(line, '\n');
			line = line ? line + 1 : NULL;
		}
	}
	free(text);
	buf_free(&err);
	buf_free(&paths);
	unlink(list);
	unlink(costs);
	free(at);
	free(list);
	free(costs);
}

/* m->insts for every module, from the modules' ThinLTO summaries: read in
 * C (bitcode_cost.h), and for the modules that reader cannot follow by
 * mtpc-split --print-cost (LLVM's reader), one run over a list of their
 * paths. On failure, one warning and the modules keep -1 (their size
 * stands in). */
static void estimate_costs(const struct graph_conf *gc, struct graph *g)
{
	size_t *ask = xmalloc((g->nmods + 1) * sizeof *ask), nask = 0;
	for (size_t i = 0; i < g->nmods; i++) {
		long long insts, funcs;
		int r = mtpc_bitcode_file_cost(g->mods[i].path, &insts, &funcs);
		if (r == 0)
			g->mods[i].insts = insts;
		else if (r < 0)
			ask[nask++] = i;
	}
	if (nask)
		llvm_costs(gc, g, ask, nask);
	free(ask);
}

/* Decide, costliest first, which of the modules whose cost reached the
 * threshold (m->split set) a split pays for (makespan_split_choice), each
 * against the others as decided so far and the work other MTPC processes
 * announced (board, in cost units: workboard.h); spc: seconds per cost
 * unit, for the reasons. */
static void choose_by_makespan(const struct graph_conf *gc, struct graph *g, double spc,
			       const struct work_others *board)
{
	struct outside_load load = makespan_outside_load(board, spc);
	const struct outside_load *out = &load;
	size_t n = g->nmods, nc = 0;
	int deciding = 0;
	for (size_t i = 0; i < n; i++)
		deciding |= g->mods[i].split;
	/* The outer build's last run: how busy it kept the other lanes
	 * while this link ran (outer_log.h); read only for a link that has
	 * a module to decide. It counts only while the board shows other
	 * work now, a sign that this build is busy too: a link relinked
	 * alone after an edit splits as on an idle machine. The split step
	 * looks again (struct split_recheck). */
	double outer = 0;
	if (deciding && gc->busy == GRAPH_BUSY_AUTO && g->output && gc->outer_cwd) {
		outer = outer_log_others(gc->outer_cwd, g->output);
		outer = outer > 0 ? outer : 0;
	}
	load.outer_lanes = board->count ? outer : 0;
	long long *chain = xmalloc((n + 1) * sizeof *chain), *work = xmalloc((n + 1) * sizeof *work);
	size_t *cand = xmalloc((n + 1) * sizeof *cand);
	for (size_t i = 0; i < n; i++) {
		chain[i] = work[i] = g->mods[i].cost;
		if (g->mods[i].split)
			cand[nc++] = i;
	}
	/* costliest first (insertion sort: few candidates), then by path */
	for (size_t a = 1; a < nc; a++)
		for (size_t b = a; b > 0; b--) {
			const struct module *x = &g->mods[cand[b - 1]], *y = &g->mods[cand[b]];
			if (x->cost > y->cost || (x->cost == y->cost && strcmp(x->path, y->path) <= 0))
				break;
			size_t t = cand[b];
			cand[b] = cand[b - 1];
			cand[b - 1] = t;
		}
	for (size_t a = 0; a < nc; a++) {
		size_t i = cand[a];
		struct module *m = &g->mods[i];
		long long others = 0, longest = 0;
		int busy = 0;
		for (size_t j = 0; j < n; j++)
			if (j != i) {
				others += work[j];
				longest = chain[j] > longest ? chain[j] : longest;
				busy++;
			}
		struct split_choice ch = makespan_split_choice(m->cost, others, longest, n, gc->jobs, out, gc->kmax,
							       m->was_split);
		free(m->why);
		m->why = NULL;
		if (ch.parts) {
			struct split_cost sc = makespan_split_cost(m->cost, ch.parts);
			m->parts = ch.parts;
			chain[i] = sc.chain;
			work[i] = sc.work;
			m->why = xasprintf("in %d: predicted %.*f s split vs %.*f s unsplit", ch.parts,
					   MAKESPAN_SECS(ch.split_span * spc), MAKESPAN_SECS(ch.whole_span * spc));
			/* What the split step makes the choice again from. */
			m->recheck = (struct split_recheck){m->cost, others, longest, (long long)n, gc->jobs, ch.parts,
							    spc, outer};
		} else {
			m->split = 0;
			m->held = 1;
			m->why = makespan_busy_reason(busy, board->count, out->outer_lanes, &ch, spc);
		}
	}
	free(chain);
	free(work);
	free(cand);
}

/* m->why: the rule that chose, and the numbers it compared (after what
 * choose_by_makespan left there). */
static void explain(const struct graph_conf *gc, struct module *m)
{
	const char *measured = m->measured ? " (measured)" : "";
	char *pred = m->why;
	m->why = NULL;
	if (gc->kmax < 2)
		m->why = xstrdup("not split: splitting off (1 partition)");
	else if (gc->threshold >= 0)
		m->why = xasprintf("%s: %lld bitcode bytes %s %lld", m->split ? "split" : "not split", m->size,
				   m->split ? ">" : "<=", gc->threshold);
	else if (m->for_edits)
		m->why = xasprintf("split in %d for its edits: its own changes caused %d of its last %d rebuilds; cost %lld "
				   "instructions%s%s%s", m->parts, m->changed, m->rebuilds, m->cost, measured,
				   m->held ? ", not split for speed: " : "", m->held && pred ? pred : "");
	else if (m->split && m->cost < gc->cost_threshold)
		m->why = xasprintf("split %s: cost %lld instructions%s, under %lld but split last time (it stays "
				   "split down to 3/4 of the threshold)", pred ? pred : "", m->cost, measured,
				   gc->cost_threshold);
	else if (m->split)
		m->why = xasprintf("split %s: cost %lld instructions%s >= %lld", pred ? pred : "", m->cost, measured,
				   gc->cost_threshold);
	else if (m->held)
		m->why = xasprintf("not split: %s; cost %lld instructions%s >= %lld", pred ? pred : "", m->cost,
				   measured, gc->cost_threshold);
	else if (m->wide_edits && !m->relay && gc->relay != GRAPH_RELAY_NEVER)
		m->why = xasprintf("not split: cost %lld instructions%s < %lld; not for its edits either: %d of the "
				   "%d edits seen through its split rewrote most of its partitions", m->cost, measured,
				   gc->cost_threshold, m->wide, m->parted);
	else if (m->relay && gc->relay == GRAPH_RELAY_ALWAYS)
		m->why = xasprintf("relayed: cost %lld instructions%s >= relay cost %lld (--relay always)", m->cost,
				   measured, gc->relay_cost);
	else if (m->relay)
		m->why = xasprintf("relayed: cost %lld instructions%s >= relay cost %lld, and other modules' changes "
				   "forced %d of its last %d rebuilds", m->cost, measured, gc->relay_cost, m->forced,
				   m->rebuilds);
	else
		m->why = xasprintf("not split: cost %lld instructions%s < %lld", m->cost, measured, gc->cost_threshold);
	free(pred);
}

/* g->work_secs, g->span_secs and g->task_secs: the backends' predicted CPU
 * seconds, their makespan and their longest task, as decided (a split
 * module: its chain, its overhead, its slots). */
static void predict(const struct graph_conf *gc, struct graph *g, double spc)
{
	long long work = 0, longest = 0, task = 0;
	size_t tasks = 0;
	for (size_t i = 0; i < g->nmods; i++) {
		const struct module *m = &g->mods[i];
		int k = m->split ? m->parts : 0;
		struct split_cost sc = makespan_split_cost(m->cost > 0 ? m->cost : 0, k);
		tasks += k >= 2 ? (size_t)k : 1;
		work += sc.work;
		longest = sc.chain > longest ? sc.chain : longest;
		task = sc.task > task ? sc.task : task;
	}
	g->work_secs = (double)work * spc;
	g->task_secs = (double)task * spc;
	g->span_secs = (double)makespan_span(work, longest, tasks, gc->jobs, NULL) * spc;
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
void graph_choose(const struct graph_conf *gc, struct graph *g)
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
		struct module_history h = {-1, -1, 0, 0, 0, 0, 0};
		gc->history(gc->history_ctx, m->id, &h);
		m->seconds = h.seconds;
		m->was_split = h.was_split;
		m->rebuilds = h.rebuilds;
		m->forced = h.forced;
		m->changed = h.changed;
		m->parted = h.parted;
		m->wide = h.wide;
		if (m->seconds > 0) {
			hist_secs += m->seconds;
			hist_insts += (double)m->insts;
			nhist++;
		}
	}
	for (size_t i = 0; i < g->nmods; i++) {
		struct module *m = &g->mods[i];
		m->cost = graph_estimated_cost(m);
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
		m->parts = m->split ? gc->kmax : 0;
	}
	/* By cost, a split must also pay: shorten the link's backends, beside
	 * what other MTPC processes keep the machine busy with. */
	double spc = nhist >= 2 ? hist_secs / hist_insts : GRAPH_DEFAULT_SECONDS_PER_COST;
	if (by_cost && gc->kmax >= 2) {
		struct work_others board = {0};
		if (gc->busy == GRAPH_BUSY_AUTO)
			workboard_read(&board);
		choose_by_makespan(gc, g, spc, &board);
	}
	for (size_t i = 0; i < g->nmods; i++) {
		struct module *m = &g->mods[i];
		/* Split for its edits: not split for speed, but edited (graph.h). */
		m->wide_edits = m->wide >= EDIT_MIN_CHANGED && m->wide * 4 >= m->parted * 3;
		m->for_edits = by_cost && !m->split && gc->kmax >= 2 && gc->relay != GRAPH_RELAY_NEVER &&
			       m->cost * EDIT_FRACTION >= gc->cost_threshold && m->changed >= EDIT_MIN_CHANGED &&
			       m->changed * 2 >= m->rebuilds && !m->wide_edits;
		if (m->for_edits) {
			long long k = m->cost * EDIT_FRACTION / (gc->cost_threshold > 0 ? gc->cost_threshold : 1);
			m->parts = k < 2 ? 2 : k > gc->kmax ? gc->kmax : (int)k;
			m->split = 1;
		}
		/* Only a split for speed is made again when its split step runs
		 * (the board has filled since: makespan.h, struct split_recheck),
		 * and only where the choice looked at the board at all. */
		if (!m->split || m->for_edits || gc->busy != GRAPH_BUSY_AUTO)
			m->recheck.parts = 0;
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
		/* What only the inner build can learn (a measured time, forced
		 * rebuilds) could change how this module is built. */
		m->watch = by_cost && gc->kmax >= 2 && !m->split && !m->relay &&
			   (m->cost * 2 >= gc->cost_threshold ||
			    (gc->relay != GRAPH_RELAY_NEVER && m->cost * EDIT_FRACTION >= gc->cost_threshold) ||
			    (gc->relay == GRAPH_RELAY_AUTO && m->cost >= gc->relay_cost));
		explain(gc, m);
	}
	predict(gc, g, spc);
}
