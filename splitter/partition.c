/* partition.c: see partition.h.
 *
 * partition_module() assigns the units (assign.h), then decides what each
 * partition holds: its owned symbols and what they reach (declarations,
 * carried duplicates and imports), the promotions that makes necessary,
 * available_externally copies within budgets, shared statics, and the
 * promoted names. */
#include "partition.h"
#include "assign.h"
#include "hash.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct ctx {
	const struct module_info *mi;
	const struct partition_opts *opt;
	struct split_plan *plan;
	int *stack, sp;      /* work list of symbols */
	int *stamp, gen;     /* visited marks for reach walks */
	int *promote;        /* locals_reachable's promotions, committed if it succeeds */
	/* Per partition: 1 / (n * its share of the module). Balance compares
	 * loads times this, so with equal shares (exactly 1.0) every decision
	 * is the integer one of an unweighted split. */
	double *scale;
	int weighted;        /* the shares are not all equal */
};

/* A partition's load relative to its share. */
static double rel_load(const struct ctx *c, int p)
{
	return c->plan->cost[p] * c->scale[p];
}

static int owner_of(const struct ctx *c, int s)
{
	int u = c->mi->syms[s].unit;
	return u >= 0 ? c->plan->owner[u] : -1;
}

static void push(struct ctx *c, int s)
{
	c->stack[c->sp++] = s;
}

/* Does partition p define every name of an object with several names that
 * t takes the address of? An imported body using two such names may be
 * carried only there (units.c, flag_alias_names); elsewhere it is declared. */
static int names_defined_in(struct ctx *c, int t, int p)
{
	const struct sym *S = c->mi->syms;
	for (int k = 0; k < S[t].naddr; k++) {
		int a = S[t].addr[k];
		if ((S[a].flags & SF_ALIAS_NAME) && (S[a].role != ROLE_OWNED || owner_of(c, a) != p))
			return 0;
	}
	return 1;
}

/* Mark what partition p needs for the symbols on the work list: referenced
 * owned symbols of other partitions become declarations (locals among them
 * are promoted), duplicated and imported definitions are carried along. */
static void close_over_refs(struct ctx *c, int p)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	unsigned char *m = P->member[p];
	while (c->sp) {
		const struct sym *s = &mi->syms[c->stack[--c->sp]];
		for (int k = 0; k < s->nrefs; k++) {
			int t = s->refs[k];
			const struct sym *T = &mi->syms[t];
			switch (T->role) {
			case ROLE_OWNED:
				if (owner_of(c, t) == p)
					break;
				if (m[t] < M_DECL)
					m[t] = M_DECL;
				P->keep[t] = 1;
				break;
			case ROLE_IMPORTED:
				if ((T->flags & SF_ALIAS_ADDR) && !names_defined_in(c, t, p)) {
					if (m[t] < M_DECL)
						m[t] = M_DECL;
					break;
				}
				/* fallthrough */
			case ROLE_DUP:
				if (m[t] < M_CARRY) {
					m[t] = M_CARRY;
					push(c, t);
				}
				break;
			case ROLE_DECL:
				if (m[t] < M_DECL)
					m[t] = M_DECL;
				break;
			case ROLE_SPECIAL:
			case ROLE_DEAD: /* live code never reaches dead code */
				break;
			}
		}
	}
}

/* Could partition p use its own copy of function t without forcing a new
 * promotion? Every local reachable from t through duplicated definitions
 * must already be promoted or live in p; with copies_promote_noinline, one
 * that no inliner can take may be promoted now (done here when the answer is
 * yes: every caller takes the copy then). Promoting a static costs its owner
 * what the optimizer does with a function nothing outside sees (the inliner's
 * last-call bonus, deleting it once inlined, changing its signature); a copy
 * that forced that on an inlinable one would trade one partition's inlining
 * for another's. */
static int locals_reachable(struct ctx *c, int t, int p)
{
	const struct sym *S = c->mi->syms;
	c->gen++;
	int sp0 = c->sp, ok = 1, np = 0;
	push(c, t);
	c->stamp[t] = c->gen;
	while (c->sp > sp0) {
		const struct sym *s = &S[c->stack[--c->sp]];
		for (int k = 0; k < s->nrefs && ok; k++) {
			int r = s->refs[k];
			if (c->stamp[r] == c->gen)
				continue;
			c->stamp[r] = c->gen;
			if (S[r].role == ROLE_OWNED && (S[r].flags & SF_LOCAL) && !c->plan->new_name[r] &&
			    owner_of(c, r) != p) {
				if (c->opt->copies_promote_noinline && S[r].kind == SYM_FUNC &&
				    (S[r].flags & SF_NOINLINE))
					c->promote[np++] = r;
				else
					ok = 0;
			} else if (S[r].role == ROLE_DUP) {
				push(c, r);
			}
		}
	}
	c->sp = sp0;
	for (int k = 0; ok && k < np; k++) {
		c->plan->new_name[c->promote[k]] = xstrdup("");
		c->plan->keep[c->promote[k]] = 1;
	}
	return ok;
}

/* Could p get an available_externally copy of function t? Within
 * --copy-limit, except an alwaysinline one with always_inline_copies. */
static int copyable(struct ctx *c, int t, int p)
{
	const struct sym *T = &c->mi->syms[t];
	return T->role == ROLE_OWNED && T->kind == SYM_FUNC && owner_of(c, t) != p &&
	       !(T->flags & (SF_NOINLINE | SF_BLOCKADDR | SF_IN_ASM | SF_INTERPOSABLE | SF_ALIASEE | SF_ASM_NAME |
			     SF_INLINE_ASM | SF_ALIAS_ADDR)) &&
	       (T->cost <= c->opt->copy_limit ||
		((T->flags & SF_ALWAYS_INLINE) && c->opt->always_inline_copies)) &&
	       (!(T->flags & SF_LOCAL) || c->plan->new_name[t]) && locals_reachable(c, t, p);
}

/* With always_inline_copies: a copy of every alwaysinline function p's code
 * calls (and of those the copies call), whatever the budget. A link's
 * module has calls to them only where a compile's join left them for the
 * backend's inliner (join.c); a partition without the body could not inline
 * them (zstd through both splits: 1.7% more instructions). */
static void add_always_inline_copies(struct ctx *c, int p)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	unsigned char *m = P->member[p];
	for (int added = 1; added && c->opt->always_inline_copies;) {
		added = 0;
		for (int i = 0; i < mi->nsyms; i++) {
			const struct sym *s = &mi->syms[i];
			if (m[i] < M_CARRY || s->kind != SYM_FUNC)
				continue;
			for (int j = 0; j < s->ncalls; j++) {
				int t = s->calls[j];
				if (m[t] != M_DECL || !(mi->syms[t].flags & SF_ALWAYS_INLINE) || !copyable(c, t, p))
					continue;
				m[t] = M_COPY;
				P->copy_cost[p] += mi->syms[t].cost;
				P->keep[t] = 1;
				P->ncopies++;
				push(c, t);
				added = 1;
			}
		}
		close_over_refs(c, p);
	}
}

struct cand {
	int sym, callers;
	long cost;
};

/* Most callers first (one copy serves them all), then cheapest, then index. */
static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->callers != y->callers)
		return x->callers > y->callers ? -1 : 1;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return (x->sym > y->sym) - (x->sym < y->sym);
}

/* The copy budget of p. Copies cost optimization time in p, and in the
 * costliest partition (with enough cores, the build's critical path; with a
 * unit bigger than the fair share, whatever the others do) they lengthen
 * the build directly: that one gets --critical-copy-budget. The others get
 * --copy-budget but may not end up costlier than it, copies included:
 * crit_total is its load with its copies, relative to its share (< 0 for
 * the critical partition itself, and for every partition in the first round
 * of a fresh plan, which measures how many copies each would take). */
static long copy_budget(const struct ctx *c, int p, double crit_total)
{
	long own = c->plan->cost[p];
	double crit = c->opt->critical_copy_budget < c->opt->copy_budget ? c->opt->critical_copy_budget
									  : c->opt->copy_budget;
	if (crit_total < 0)
		return (long)(own * crit);
	long budget = (long)(own * c->opt->copy_budget), room = (long)(crit_total / c->scale[p]) - own;
	return room < budget ? (room > 0 ? room : 0) : budget;
}

/* Give p available_externally copies of small callees owned elsewhere, two
 * call levels deep, within the copy budget: at each level the callees that
 * the most functions of p call first. */
static void add_copies(struct ctx *c, int p, double crit_total)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	unsigned char *m = P->member[p];
	long budget = copy_budget(c, p, crit_total);
	/* Constants defined elsewhere: an available_externally copy with the
	 * initializer lets loads from tables fold as in the unsplit module; it
	 * costs no code generation. */
	for (int i = 0; i < mi->nsyms; i++) {
		const struct sym *T = &mi->syms[i];
		if (m[i] == M_DECL && T->role == ROLE_OWNED && T->kind == SYM_VAR && (T->flags & SF_CONST) &&
		    !LLVMIsThreadLocal(T->v) &&
		    !(T->flags & (SF_INTERPOSABLE | SF_IN_ASM | SF_ASM_NAME | SF_BLOCKADDR | SF_ALIAS_ADDR)) &&
		    (!(T->flags & SF_LOCAL) || P->new_name[i]) && locals_reachable(c, i, p)) {
			m[i] = M_COPY;
			push(c, i);
		}
	}
	close_over_refs(c, p);
	add_always_inline_copies(c, p);
	/* The first level's callers: the functions p owns (and, with
	 * copies_for_carried, those it carries) before any budgeted copy, so
	 * that a seeded plan weighs the same callers as the fresh one (a copy's
	 * own references carry more definitions, whose callees the fresh plan
	 * never weighed at the first level). */
	int *level = xmalloc((mi->nsyms + 1) * sizeof *level), nl = 0;
	for (int i = 0; i < mi->nsyms; i++)
		if ((m[i] == M_OWN || (m[i] == M_CARRY && c->opt->copies_for_carried)) &&
		    mi->syms[i].kind == SYM_FUNC)
			level[nl++] = i;
	/* The previous plan's copies first, whatever the budget says now
	 * (partition_opts.seed_copy): only a real change of the code may change
	 * a partition. What they use comes with them. */
	for (int depth = 0; c->opt->seed && c->opt->seed_copy && depth < 2; depth++) {
		/* Two rounds: a copy's own callees can be copies (two call levels). */
		for (int i = 0; i < mi->nsyms; i++) {
			const struct sym *T = &mi->syms[i];
			if (m[i] == M_DECL && T->kind == SYM_FUNC && T->cost <= c->opt->copy_limit &&
			    c->opt->seed_copy(c->opt->seed_ctx, T->name, p) && copyable(c, i, p)) {
				m[i] = M_COPY;
				P->copy_cost[p] += T->cost;
				P->keep[i] = 1;
				P->ncopies++;
				push(c, i);
			}
		}
		close_over_refs(c, p);
	}
	int *callers = xcalloc(mi->nsyms + 1, sizeof *callers);
	struct cand *cand = xmalloc((mi->nsyms + 1) * sizeof *cand);
	for (int depth = 0; depth < 2 && nl; depth++) {
		int nc = 0;
		for (int k = 0; k < nl; k++) {
			const struct sym *s = &mi->syms[level[k]];
			for (int j = 0; j < s->ncalls; j++) {
				int t = s->calls[j];
				if (m[t] >= M_COPY || mi->syms[t].cost > budget - P->copy_cost[p])
					continue;
				if (callers[t]++ == 0)
					cand[nc++] = (struct cand){t, 0, mi->syms[t].cost};
			}
		}
		for (int k = 0; k < nc; k++) {
			cand[k].callers = callers[cand[k].sym];
			callers[cand[k].sym] = 0;
		}
		qsort(cand, nc, sizeof *cand, cmp_cand);
		nl = 0;
		for (int k = 0; k < nc; k++) {
			int t = cand[k].sym;
			if (P->copy_cost[p] + cand[k].cost > budget || !copyable(c, t, p))
				continue;
			m[t] = M_COPY;
			P->copy_cost[p] += cand[k].cost;
			P->keep[t] = 1;
			P->ncopies++;
			level[nl++] = t;
			push(c, t);
		}
		close_over_refs(c, p);
	}
	free(cand);
	free(callers);
	free(level);
}

struct shared_static {
	long cost;
	int sym, carriers;
};

static int cmp_shared(const void *a, const void *b)
{
	const struct shared_static *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return (x->sym > y->sym) - (x->sym < y->sym);
}

/* A duplicated static function that several partitions carry becomes a hidden
 * linkonce_odr in a comdat of its own under a promoted name (emit.c); carried
 * by one partition it stays internal and keeps the inliner's last-call bonus.
 * With shared_statics_local each carrier keeps its own internal copy instead,
 * unless code takes the function's address: copies would have one address
 * each, where the program may compare it (SQLite compares destructor
 * pointers); one linkonce_odr copy has one. Every extra carrier optimizes it
 * once more, so the smallest are shared while that extra work fits
 * --local-dup-budget; the others are promoted as usual, owned by their first
 * carrier and declared in the rest. */
static void share_statics(struct ctx *c)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	struct shared_static *v = xmalloc((mi->nsyms + 1) * sizeof *v);
	int nv = 0;
	unsigned char *taken = xcalloc(mi->nsyms + 1, 1);
	for (int i = 0; i < mi->nsyms; i++)
		for (int k = 0; k < mi->syms[i].naddr; k++)
			taken[mi->syms[i].addr[k]] = 1;
	for (int i = 0; i < mi->nsyms; i++) {
		const struct sym *s = &mi->syms[i];
		if (s->role != ROLE_DUP || s->kind != SYM_FUNC || !(s->flags & SF_LOCAL))
			continue;
		int carriers = 0;
		for (int p = 0; p < P->n; p++)
			carriers += P->member[p][i] == M_CARRY;
		if (carriers > 1)
			v[nv++] = (struct shared_static){s->cost, i, carriers};
	}
	if (nv)
		qsort(v, nv, sizeof *v, cmp_shared);
	long budget = (long)(c->opt->local_dup_budget * mi->total_cost), used = 0;
	for (int k = 0; k < nv; k++) {
		int i = v[k].sym;
		/* (named later, edit-stably; a native split's stay unnamed) */
		P->new_name[i] = xstrdup("");
		/* An alwaysinline one (analyze_opts.always_inline_dup) is inlined
		 * into every caller whatever the split: no out-of-line body is
		 * left to duplicate, so it costs no budget. */
		long extra = mi->syms[i].flags & SF_ALWAYS_INLINE ? 0 : v[k].cost * (v[k].carriers - 1);
		if (used + extra <= budget) {
			used += extra;
			P->nshared_dups++;
			if (c->opt->shared_statics_local && !taken[i]) {
				free(P->new_name[i]);
				P->new_name[i] = NULL;
				P->fold[i] = 1;
			}
			continue;
		}
		int owner = -1;
		P->npromoted++;
		for (int p = 0; p < P->n; p++)
			if (P->member[p][i] == M_CARRY) {
				if (owner < 0) {
					owner = p;
					P->member[p][i] = M_OWN;
				} else {
					P->member[p][i] = M_DECL;
				}
			}
	}
	free(v);
	free(taken);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int name_taken(char **sorted, int n, const char *name)
{
	return bsearch(&name, sorted, n, sizeof *sorted, cmp_str) != NULL;
}

/* Collision-free, edit-stable names for promoted locals: the name plus a hash
 * of the source file name, so two modules' helpers never meet.
 *
 * Except a local that asm names as text (module asm, a function's inline
 * asm): the text cannot be rewritten, so it is promoted under its own name
 * (hidden, like any promotion) and made local again by the merge
 * (localize.txt; nothing to rename back). That is safe: names are unique in
 * the module, so no other symbol of the merged object has it, and the merge
 * localizes it before the final link, where another module's static of the
 * same name may exist. A `.symver` of it gives a versioned name with its
 * binding: that name is localized too (local_extra). */
static void name_promoted(struct ctx *c)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	char hex[MTPC_HASH_HEX_LEN + 1];
	const char *key = mi->source_file[0] ? mi->source_file : mi->module_id;
	mtpc_hash_hex(key, strlen(key), hex);
	hex[8] = 0;
	char **names = xmalloc((mi->nsyms + 1) * sizeof *names);
	int nn = 0;
	for (int i = 0; i < mi->nsyms; i++)
		if (mi->syms[i].name[0])
			names[nn++] = mi->syms[i].name;
	qsort(names, nn, sizeof *names, cmp_str);
	for (int i = 0; i < mi->nsyms; i++) {
		if (!P->new_name[i])
			continue;
		free(P->new_name[i]);
		if (mi->syms[i].role != ROLE_DUP)
			P->npromoted++;
		if (mi->syms[i].flags & SF_ASM_NAME) {
			P->new_name[i] = xstrdup(mi->syms[i].name);
			continue;
		}
		const char *base = mi->syms[i].name;
		char *anon = base[0] ? NULL : xasprintf("__mtpc_anon%d", i);
		char *nm = xasprintf("%s.mtpc.%s", anon ? anon : base, hex);
		for (int k = 1; name_taken(names, nn, nm); k++) {
			free(nm);
			nm = xasprintf("%s.mtpc.%s.%d", anon ? anon : base, hex, k);
		}
		free(anon);
		P->new_name[i] = nm;
	}
	free(names);
	for (int k = 0; k < mi->nsymvers; k++)
		if (P->new_name[mi->symvers[k].sym]) {
			P->local_extra = xrealloc(P->local_extra, (P->nlocal_extra + 1) * sizeof *P->local_extra);
			P->local_extra[P->nlocal_extra++] = xstrdup(mi->symvers[k].name);
		}
}

/* What each partition holds: its owned symbols, what they reach, the
 * promotions that makes necessary, and its copies. appetite: the first round
 * of a fresh plan, every partition gets the critical copy budget, uncapped. */
static void place_symbols(struct ctx *c, int appetite)
{
	const struct module_info *mi = c->mi;
	struct split_plan *P = c->plan;
	int n = P->n;
	/* Owned symbols, then what they reach. */
	for (int i = 0; i < mi->nsyms; i++)
		if (mi->syms[i].role == ROLE_OWNED)
			P->member[owner_of(c, i)][i] = M_OWN;
	for (int p = 0; p < n; p++) {
		for (int i = 0; i < mi->nsyms; i++)
			if (P->member[p][i] == M_OWN)
				push(c, i);
		close_over_refs(c, p);
	}
	/* A local needed outside its owner is promoted. Mark before copies so
	 * copies can use promoted locals but never cause new promotions. */
	for (int i = 0; i < mi->nsyms; i++)
		if (P->keep[i] && (mi->syms[i].flags & SF_LOCAL))
			P->new_name[i] = xstrdup("");
	if (n == 1)
		return;
	/* The critical partition first: the others' copies may not take them
	 * past its load with its copies. */
	int crit = 0;
	for (int p = 1; p < n; p++)
		if (rel_load(c, p) > rel_load(c, crit))
			crit = p;
	add_copies(c, crit, -1);
	double crit_total = appetite ? -1 : (P->cost[crit] + P->copy_cost[crit]) * c->scale[crit];
	for (int p = 0; p < n; p++)
		if (p != crit)
			add_copies(c, p, crit_total);
}

/* Undo place_symbols(), keeping the assignment. */
static void unplace_symbols(struct ctx *c)
{
	struct split_plan *P = c->plan;
	for (int p = 0; p < P->n; p++) {
		memset(P->member[p], 0, P->nsyms + 1);
		P->copy_cost[p] = 0;
	}
	memset(P->keep, 0, P->nsyms + 1);
	for (int i = 0; i < P->nsyms; i++) {
		free(P->new_name[i]);
		P->new_name[i] = NULL;
	}
	P->ncopies = 0;
}

void partition_module(const struct module_info *mi, const struct partition_opts *opt, struct split_plan *P)
{
	memset(P, 0, sizeof *P);
	int n = opt->max_partitions < 1 ? 1 : opt->max_partitions;
	if (n > mi->nunits)
		n = mi->nunits > 0 ? mi->nunits : 1;
	if (opt->min_cost > 0 && mi->total_cost / opt->min_cost < n)
		n = mi->total_cost / opt->min_cost > 0 ? (int)(mi->total_cost / opt->min_cost) : 1;
	P->n = n;
	P->nsyms = mi->nsyms;
	P->owner = xmalloc((mi->nunits + 1) * sizeof *P->owner);
	P->cost = xcalloc(n, sizeof *P->cost);
	P->copy_cost = xcalloc(n, sizeof *P->copy_cost);
	P->member = xmalloc(n * sizeof *P->member);
	for (int p = 0; p < n; p++)
		P->member[p] = xcalloc(mi->nsyms + 1, 1);
	P->new_name = xcalloc(mi->nsyms + 1, sizeof *P->new_name);
	P->keep = xcalloc(mi->nsyms + 1, 1);
	P->fold = xcalloc(mi->nsyms + 1, 1);
	for (int u = 0; u < mi->nunits; u++)
		P->owner[u] = -1;

	struct ctx c = {mi, opt, P, xmalloc((mi->nsyms + 1) * sizeof(int)), 0,
			xcalloc(mi->nsyms + 1, sizeof(int)), 0, xmalloc((mi->nsyms + 1) * sizeof(int)),
			xmalloc(n * sizeof(double)), 0};
	double wsum = 0;
	for (int p = 0; opt->weights && opt->nweights >= n && p < n; p++)
		wsum += opt->weights[p];
	for (int p = 0; p < n; p++) {
		c.scale[p] = wsum > 0 ? wsum / (n * opt->weights[p]) : 1.0;
		c.weighted |= c.scale[p] != 1.0;
	}
	long *ucost = assign_unit_costs(mi, opt);
	assign_units(mi, opt, P, c.scale, c.weighted, ucost);
	if (n > 1 && !P->nseeded) {
		/* Copies are lopsided: a partition of small callers takes many
		 * copies of callees owned by one of big callees, which takes few
		 * (SQLite at 2 partitions: 4.1% against 0.1% of their cost, and
		 * the first one ends up the costlier). Balance cost and copies
		 * together: measure each partition's copies, rebalance with them,
		 * and place afresh. Fresh plans only, like the rebalancing
		 * of assign_units (assign.h). */
		place_symbols(&c, 1);
		long *copies = xmalloc(n * sizeof *copies);
		for (int p = 0; p < n; p++) {
			copies[p] = P->copy_cost[p];
			P->cost[p] += copies[p];
		}
		assign_rebalance(mi, P, c.scale, ucost);
		for (int p = 0; p < n; p++)
			P->cost[p] -= copies[p];
		free(copies);
		unplace_symbols(&c);
	}
	assign_data_follows_code(mi, P, ucost);
	free(ucost);

	P->asm_partition = 0;
	for (int u = 0; u < mi->nunits; u++)
		if (mi->units[u].has_asm)
			P->asm_partition = P->owner[u];
	place_symbols(&c, 0);
	share_statics(&c);
	/* Copies may carry duplicated constants whose references reach further
	 * locals: promote those too (correctness first; they are rare). */
	for (int i = 0; i < mi->nsyms; i++)
		if (P->keep[i] && (mi->syms[i].flags & SF_LOCAL) && !P->new_name[i])
			P->new_name[i] = xstrdup("");
	name_promoted(&c);
	free(c.stack);
	free(c.stamp);
	free(c.promote);
	free(c.scale);
}

void split_plan_free(struct split_plan *P)
{
	for (int p = 0; p < P->n; p++)
		free(P->member[p]);
	free(P->member);
	free(P->owner);
	free(P->cost);
	free(P->copy_cost);
	free(P->keep);
	free(P->fold);
	for (int i = 0; i < P->nsyms; i++)
		free(P->new_name[i]);
	free(P->new_name);
	for (int k = 0; k < P->nlocal_extra; k++)
		free(P->local_extra[k]);
	free(P->local_extra);
	memset(P, 0, sizeof *P);
}
