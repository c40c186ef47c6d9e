/* units.c: see units.h.
 *
 * Symbols are tied into units with a union-find whose root is always the
 * smallest symbol index of its set, so the sets and their roots do not
 * depend on the order of the unions. */
#include "units.h"
#include "name_table.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static int uf_find(int *p, int x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

static void uf_union(int *p, int a, int b)
{
	a = uf_find(p, a);
	b = uf_find(p, b);
	/* Keep the smaller index as root: deterministic. */
	if (a < b)
		p[b] = a;
	else if (b < a)
		p[a] = b;
}

/* Several names of one object (an alias, its aliasee, other aliases of it).
 * LLVM never decides whether an alias and another global are equal, and sees
 * a non-interposable alias as the memory of its aliasee; but two names that
 * a partition only declares are two distinct objects to it: `&alias ==
 * &aliasee` folds to false there, and a store through one name is not seen
 * by a load through the other. So when code outside an object's names takes
 * the address of two or more of them (operands other than a call's callee;
 * initializers), every such user lives with the names (build_units) and is
 * never copied or duplicated: then any partition that holds two of the names
 * holds the alias itself, and one that does not holds at most one name. When
 * only one name's address is used outside, no partition can meet two, and
 * nothing is constrained (C++ constructor aliases are only called). */
void flag_alias_names(struct module_info *mi)
{
	struct sym *S = mi->syms;
	int n = mi->nsyms;
	int *group = xmalloc((n + 1) * sizeof *group); /* the base object, or -1 */
	char *addressed = xcalloc(n + 1, 1), *ambiguous = xcalloc(n + 1, 1);
	int *names = xcalloc(n + 1, sizeof *names);
	for (int i = 0; i < n; i++)
		group[i] = -1;
	for (int i = 0; i < n; i++)
		if (S[i].kind == SYM_ALIAS && S[i].base >= 0)
			group[i] = group[S[i].base] = S[i].base;
	for (int i = 0; i < n; i++) {
		if (S[i].kind == SYM_VAR && strncmp(S[i].name, "llvm.", 5) == 0)
			continue; /* llvm.used & co.: rebuilt per partition, never folded */
		for (int k = 0; k < S[i].naddr; k++) {
			int t = S[i].addr[k];
			if (group[t] >= 0 && group[t] != group[i])
				addressed[t] = 1;
		}
	}
	for (int t = 0; t < n; t++)
		if (addressed[t] && ++names[group[t]] == 2)
			ambiguous[group[t]] = 1;
	for (int t = 0; t < n; t++)
		if (group[t] >= 0 && ambiguous[group[t]])
			S[t].flags |= SF_ALIAS_NAME;
	for (int i = 0; i < n; i++) {
		if (S[i].kind == SYM_VAR && strncmp(S[i].name, "llvm.", 5) == 0)
			continue;
		for (int k = 0; k < S[i].naddr; k++) {
			int t = S[i].addr[k];
			if ((S[t].flags & SF_ALIAS_NAME) && group[t] != group[i] && !(S[i].flags & SF_ALIAS_ADDR)) {
				S[i].flags |= SF_ALIAS_ADDR;
				mi->nalias_users++;
			}
		}
	}
	free(group);
	free(addressed);
	free(ambiguous);
	free(names);
}

/* Tie x to the group whose first member is *first (or start the group). */
static void tie_to_first(int *uf, int *first, int x)
{
	if (*first < 0)
		*first = x;
	else
		uf_union(uf, x, *first);
}

/* What a symbol's own properties tie it to: an alias or ifunc to its base
 * object, a user of several names of one object to those names
 * (flag_alias_names), a comdat's members to each other, everything module
 * asm names (or whose section it names) to each other, and all
 * constructors and destructors to each other (their priorities and order
 * hold within one object only). */
static void tie_owned_groups(struct module_info *mi, int ncomdats, int *uf)
{
	struct sym *S = mi->syms;
	int *comdat_first = xmalloc((ncomdats + 1) * sizeof *comdat_first);
	for (int c = 0; c <= ncomdats; c++)
		comdat_first[c] = -1;
	int asm_first = -1, ctor_first = -1;
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &S[i];
		if (s->role != ROLE_OWNED)
			continue;
		if (s->base >= 0 && S[s->base].role == ROLE_OWNED)
			uf_union(uf, i, s->base);
		for (int k = 0; k < s->naddr && (s->flags & SF_ALIAS_ADDR); k++)
			if ((S[s->addr[k]].flags & SF_ALIAS_NAME) && S[s->addr[k]].role == ROLE_OWNED)
				uf_union(uf, i, s->addr[k]);
		if (s->comdat >= 0)
			tie_to_first(uf, &comdat_first[s->comdat], i);
		if (s->flags & (SF_IN_ASM | SF_ASM_SECTION))
			tie_to_first(uf, &asm_first, i);
		if (s->flags & SF_CTOR)
			tie_to_first(uf, &ctor_first, i);
	}
	free(comdat_first);
}

/* Each section with `__start_`/`__stop_` symbols stays in one partition:
 * the bounds enclose the section of one object, in order. */
static void tie_sections(struct module_info *mi, int *uf)
{
	struct name_table sect;
	name_table_of_sections(mi, &sect);
	for (int k = 0, prev = -1; k < sect.n; k++) {
		if (mi->syms[sect.v[k].idx].role != ROLE_OWNED)
			continue;
		if (prev >= 0 && strcmp(sect.v[k].name, sect.v[prev].name) == 0)
			uf_union(uf, sect.v[k].idx, sect.v[prev].idx);
		prev = k;
	}
	name_table_free(&sect);
}

/* Tie each pair whose two symbols are both owned. */
static void tie_pairs(const struct module_info *mi, int *uf, const struct intpairs *pairs)
{
	for (int k = 0; k < pairs->first.n; k++) {
		int a = pairs->first.v[k], b = pairs->second.v[k];
		if (mi->syms[a].role == ROLE_OWNED && mi->syms[b].role == ROLE_OWNED)
			uf_union(uf, a, b);
	}
}

/* `.symver x, name@@@V` renames x itself: the object keeps no symbol x, so
 * nothing outside the asm's partition could reach it by name. Whatever
 * references x stays with it. */
static void join_symver_removed(struct module_info *mi, int *uf)
{
	struct sym *S = mi->syms;
	char *gone = xcalloc(mi->nsyms + 1, 1);
	for (int k = 0; k < mi->nsymvers; k++)
		if (mi->symvers[k].removes && S[mi->symvers[k].sym].role == ROLE_OWNED)
			gone[mi->symvers[k].sym] = 1;
	for (int i = 0; i < mi->nsyms; i++)
		for (int k = 0; k < S[i].nrefs && S[i].role == ROLE_OWNED; k++)
			if (gone[S[i].refs[k]])
				uf_union(uf, i, S[i].refs[k]);
	free(gone);
}

/* The cost above which an SCC is cut (analyze_opts.scc_cut times a
 * partition's share of the owned functions' cost), or 0: never. */
static long scc_cut_limit(const struct module_info *mi, const struct analyze_opts *opt)
{
	long owned = 0;
	for (int i = 0; i < mi->nsyms; i++)
		if (mi->syms[i].role == ROLE_OWNED && mi->syms[i].kind == SYM_FUNC)
			owned += mi->syms[i].cost;
	return opt->scc_cut > 0 && opt->partitions > 1 ? (long)(opt->scc_cut * (double)owned / opt->partitions) : 0;
}

/* Tarjan's SCC over owned functions' direct calls, iterative. Unions each
 * SCC, except one costing more than limit (> 0), which is left cut into
 * its functions: calls between partitions are ordinary calls to promoted
 * symbols, recursion included, so only balance asks to keep an SCC whole,
 * and an SCC larger than a partition's share is what stops the balance.
 * The partitioner still sees the calls inside it as affinity edges. */
static void union_sccs(struct module_info *mi, int *uf, long limit)
{
	int n = mi->nsyms;
	int *idx = xmalloc(n * sizeof *idx), *low = xmalloc(n * sizeof *low);
	int *stack = xmalloc(n * sizeof *stack), *onstack = xcalloc(n, sizeof *onstack);
	int *cs_node = xmalloc(n * sizeof *cs_node), *cs_edge = xmalloc(n * sizeof *cs_edge);
	int counter = 0, sp = 0;
	for (int i = 0; i < n; i++)
		idx[i] = -1;
	for (int root = 0; root < n; root++) {
		if (idx[root] >= 0 || mi->syms[root].role != ROLE_OWNED || mi->syms[root].kind != SYM_FUNC)
			continue;
		int csp = 0;
		cs_node[csp] = root;
		cs_edge[csp++] = 0;
		idx[root] = low[root] = counter++;
		stack[sp++] = root;
		onstack[root] = 1;
		while (csp) {
			int v = cs_node[csp - 1];
			struct sym *s = &mi->syms[v];
			if (cs_edge[csp - 1] < s->ncalls) {
				int w = s->calls[cs_edge[csp - 1]++];
				if (mi->syms[w].role != ROLE_OWNED || mi->syms[w].kind != SYM_FUNC)
					continue;
				if (idx[w] < 0) {
					idx[w] = low[w] = counter++;
					stack[sp++] = w;
					onstack[w] = 1;
					cs_node[csp] = w;
					cs_edge[csp++] = 0;
				} else if (onstack[w] && idx[w] < low[v]) {
					low[v] = idx[w];
				}
				continue;
			}
			if (low[v] == idx[v]) {
				long cost = 0;
				int first = sp;
				do
					cost += mi->syms[stack[--first]].cost;
				while (stack[first] != v);
				int cut = limit > 0 && cost > limit && sp - first > 1;
				mi->ncut_sccs += cut;
				while (sp > first) {
					int w = stack[--sp];
					onstack[w] = 0;
					if (!cut)
						uf_union(uf, v, w);
				}
			}
			csp--;
			if (csp) {
				int u = cs_node[csp - 1];
				if (low[v] < low[u])
					low[u] = low[v];
			}
		}
	}
	free(idx);
	free(low);
	free(stack);
	free(onstack);
	free(cs_node);
	free(cs_edge);
}

/* A local function used only by direct calls from one unit is folded into
 * that unit: the inliner treats the last call to a static function as free,
 * so the unsplit build compiles it inside its caller anyway, and keeping them
 * apart would force a promotion that defeats exactly that inlining. Only
 * small helpers (<= limit instructions) into units up to 1/16 of the
 * module: for a big one the call costs nothing
 * next to its body, and folding it would make units too big to balance. Repeated
 * until nothing changes, so chains of helpers follow their root caller. */
static void join_single_caller_locals(struct module_info *mi, int *uf, long limit, double growth)
{
	struct sym *S = mi->syms;
	int n = mi->nsyms;
	int *caller = xmalloc(n * sizeof *caller);   /* root of the single caller unit, -1 none, -2 many */
	char *noncall = xcalloc(n, 1);               /* referenced other than by a direct call */
	for (int i = 0; i < n; i++)
		for (int k = 0; k < S[i].naddr; k++)
			noncall[S[i].addr[k]] = 1;
	/* Folding stops where a unit would exceed 1/16 of the module, so the
	 * module still balances over 16 partitions. */
	long *ucost = xcalloc(n, sizeof *ucost), total = 0;
	for (int i = 0; i < n; i++)
		if (S[i].role == ROLE_OWNED && S[i].kind == SYM_FUNC) {
			ucost[uf_find(uf, i)] += S[i].cost;
			total += S[i].cost;
		}
	long unit_cap = total / 16;
	/* With --join-growth, a caller unit already past that cap may still
	 * take its helpers, up to that fraction of its own size: apart, they
	 * lose the last-call inlining the unsplit build gives them (a giant C++
	 * test function calling internalized template helpers). */
	long *base = xmalloc(n * sizeof *base);
	for (int i = 0; i < n; i++)
		base[i] = ucost[i];
	for (int round = 0; round < 8; round++) {
		for (int i = 0; i < n; i++)
			caller[i] = -1;
		for (int i = 0; i < n; i++) {
			if (S[i].role != ROLE_OWNED && S[i].role != ROLE_DUP)
				continue;
			int from = S[i].role == ROLE_OWNED ? uf_find(uf, i) : -2;
			for (int k = 0; k < S[i].ncalls; k++) {
				int t = S[i].calls[k];
				if (caller[t] == -1)
					caller[t] = from;
				else if (caller[t] != from)
					caller[t] = -2;
			}
		}
		int changed = 0;
		for (int i = 0; i < n; i++) {
			const struct sym *s = &S[i];
			if (s->role != ROLE_OWNED || s->kind != SYM_FUNC || !(s->flags & SF_LOCAL) || noncall[i] ||
			    s->cost > limit || (s->flags & (SF_USED | SF_CTOR | SF_ALIASEE | SF_IN_ASM)) || caller[i] < 0 ||
			    uf_find(uf, i) == uf_find(uf, caller[i]))
				continue;
			int a = uf_find(uf, i), b = uf_find(uf, caller[i]);
			long sum = ucost[a] + ucost[b];
			if (sum > unit_cap && sum > base[b] + (long)(base[b] * growth))
				continue;
			long bb = base[b];
			uf_union(uf, i, caller[i]);
			ucost[uf_find(uf, i)] = sum;
			base[uf_find(uf, i)] = bb;
			changed = 1;
		}
		if (!changed)
			break;
	}
	free(caller);
	free(noncall);
	free(ucost);
	free(base);
}

/* Number the sets of uf that hold owned symbols as units, by their smallest
 * symbol index, and fill each unit's members, cost and has_asm, and
 * mi->total_cost. A unit's cost is its functions' (variables cost no
 * compile time), at least 1. */
static void number_units(struct module_info *mi, int *uf)
{
	struct sym *S = mi->syms;
	int n = mi->nsyms;
	int *unit_of_root = xmalloc(n * sizeof *unit_of_root);
	mi->nunits = 0;
	for (int i = 0; i < n; i++) {
		unit_of_root[i] = -1;
		S[i].unit = -1;
	}
	for (int i = 0; i < n; i++) {
		if (S[i].role != ROLE_OWNED)
			continue;
		int r = uf_find(uf, i);
		if (unit_of_root[r] < 0)
			unit_of_root[r] = mi->nunits++;
		S[i].unit = unit_of_root[r];
	}
	free(unit_of_root);
	mi->units = xcalloc(mi->nunits, sizeof *mi->units);
	struct intlist *members = xcalloc(mi->nunits, sizeof *members);
	for (int i = 0; i < n; i++)
		if (S[i].unit >= 0) {
			intlist_push(&members[S[i].unit], i);
			mi->units[S[i].unit].cost += S[i].kind == SYM_FUNC ? S[i].cost : 0;
			if (S[i].flags & (SF_IN_ASM | SF_ASM_SECTION))
				mi->units[S[i].unit].has_asm = 1;
		}
	mi->total_cost = 0;
	for (int u = 0; u < mi->nunits; u++) {
		mi->units[u].syms = members[u].v;
		mi->units[u].nsyms = members[u].n;
		if (mi->units[u].cost == 0)
			mi->units[u].cost = 1;
		mi->total_cost += mi->units[u].cost;
	}
	free(members);
}

/* An edge of weight w between units u and t: w entries in each one's list
 * of neighbours, counted into weights by neighbours_to_edges. */
static void add_edge(struct intlist *nb, int u, int t, int w)
{
	for (int r = 0; r < w; r++) {
		intlist_push(&nb[u], t);
		intlist_push(&nb[t], u);
	}
}

/* Unit u's neighbour list as its sorted adjacency with weights. */
static void neighbours_to_edges(struct unit *U, struct intlist *nb)
{
	intlist_sort(nb);
	U->adj = xmalloc((nb->n + 1) * sizeof *U->adj);
	U->adjw = xmalloc((nb->n + 1) * sizeof *U->adjw);
	for (int k = 0; k < nb->n; k++) {
		if (U->nadj && U->adj[U->nadj - 1] == nb->v[k]) {
			U->adjw[U->nadj - 1]++;
		} else {
			U->adj[U->nadj] = nb->v[k];
			U->adjw[U->nadj++] = 1;
		}
	}
	intlist_free(nb);
}

/* The affinity edges between units, which the assignment (assign.c)
 * keeps inside partitions as far as balance allows: a reference from a
 * symbol of one unit to a symbol of another, and a reference made through a
 * duplicated variable (a dispatch table every reader carries ties the reader
 * to the functions in the table).
 *
 * Weights (symmetric). A cut edge costs something different by its kind:
 * - an ordinary reference or call, 1: the call stays a call (the inliner
 *   sees the callee only through an available_externally copy, if the
 *   partition gets one);
 * - a reference to a local, 4: cutting it also promotes the local, which
 *   loses the inliner's last-call bonus for statics and every fact the
 *   backend derives from seeing all of a local's uses, and adds a symbol
 *   the merge has to localize again;
 * - an indirect-call target named by a value profile (!prof "VP"), 2:
 *   together, indirect-call promotion can inline the hot target as in the
 *   unsplit build; but the profile is a training run's guess, not a use the
 *   code makes, so it weighs less than a local.
 * These numbers came with the first versions of the analysis (1 and 4) and
 * of the value-profile support (2) and were never tuned: only their order
 * is argued above, not their ratios. */
static void link_units(struct module_info *mi)
{
	struct sym *S = mi->syms;
	struct intlist *nb = xcalloc(mi->nunits, sizeof *nb);
	for (int i = 0; i < mi->nsyms; i++) {
		int u = S[i].unit;
		if (u < 0)
			continue;
		for (int k = 0; k < S[i].nrefs; k++) {
			int t = S[i].refs[k];
			if (S[t].role == ROLE_DUP && S[t].kind == SYM_VAR) {
				for (int j = 0; j < S[t].nrefs; j++) {
					int t2 = S[t].refs[j];
					if (S[t2].unit >= 0 && S[t2].unit != u)
						add_edge(nb, u, S[t2].unit, 1);
				}
				continue;
			}
			if (S[t].unit < 0 || S[t].unit == u)
				continue;
			add_edge(nb, u, S[t].unit, (S[t].flags & SF_LOCAL) ? 4 : 1);
		}
	}
	for (int i = 0; i < mi->nsyms; i++)
		for (int k = 0; k < S[i].nvp; k++) {
			int u = S[i].unit, t = S[S[i].vp[k]].unit;
			if (u >= 0 && t >= 0 && u != t)
				add_edge(nb, u, t, 2);
		}
	for (int u = 0; u < mi->nunits; u++)
		neighbours_to_edges(&mi->units[u], &nb[u]);
	free(nb);
}

void build_units(struct module_info *mi, int ncomdats, const struct intpairs *blockaddr,
		 const struct intpairs *asm_set, const struct analyze_opts *opt)
{
	int *uf = xmalloc(mi->nsyms * sizeof *uf);
	for (int i = 0; i < mi->nsyms; i++)
		uf[i] = i;
	/* What must share a partition, whatever its size. */
	tie_owned_groups(mi, ncomdats, uf);
	tie_sections(mi, uf);
	/* blockaddress: the function and every user stay together. */
	tie_pairs(mi, uf, blockaddr);
	/* Inline asm using A of `.lto_set_conditional A, B` lives with B: the
	 * assembler makes A only where B is defined. */
	tie_pairs(mi, uf, asm_set);
	join_symver_removed(mi, uf);
	/* Kept: rebuild_units starts again from here for another count. */
	mi->tied = xmalloc((mi->nsyms + 1) * sizeof *mi->tied);
	memcpy(mi->tied, uf, mi->nsyms * sizeof *uf);
	free(uf);
	rebuild_units(mi, opt);
}

/* Free the units and their edges, keeping the symbols. */
static void free_units(struct module_info *mi)
{
	for (int u = 0; u < mi->nunits; u++) {
		free(mi->units[u].syms);
		free(mi->units[u].adj);
		free(mi->units[u].adjw);
	}
	free(mi->units);
	mi->units = NULL;
	mi->nunits = 0;
}

void rebuild_units(struct module_info *mi, const struct analyze_opts *opt)
{
	long limit = scc_cut_limit(mi, opt);
	if (mi->units && limit == mi->scc_limit)
		return; /* the same cut, the same units */
	free_units(mi);
	mi->scc_limit = limit;
	mi->ncut_sccs = 0;
	int *uf = xmalloc((mi->nsyms + 1) * sizeof *uf);
	memcpy(uf, mi->tied, mi->nsyms * sizeof *uf);
	/* The call graph's cycles, and the helpers their callers inline. */
	union_sccs(mi, uf, limit);
	join_single_caller_locals(mi, uf, opt->join_limit, opt->join_growth);
	number_units(mi, uf);
	free(uf);
	link_units(mi);
}
