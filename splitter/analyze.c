/* analyze.c: see analyze.h.
 *
 * The symbol table, the reference walk and the roles; the steps with a
 * concern of their own live beside it: asm_names.c (names asm text uses),
 * stable_names.c (edit-stable names), units.c (units and their affinity
 * edges). analyze_module() runs them all in order. */
#include "analyze.h"
#include "asm_names.h"
#include "intlist.h"
#include "llvm_shim.h"
#include "ptrmap.h"
#include "stable_names.h"
#include "units.h"
#include "util.h"

#include <llvm-c/Comdat.h>
#include <llvm-c/Target.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The symbol table. */

int sym_enumerate(LLVMModuleRef m, LLVMValueRef **vals)
{
	int n = 0, cap = 256;
	LLVMValueRef *v = xmalloc(cap * sizeof *v);
#define PUSH(x)                                             \
	do {                                                \
		if (n == cap)                               \
			v = xrealloc(v, (cap *= 2) * sizeof *v); \
		v[n++] = (x);                               \
	} while (0)
	for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
		PUSH(f);
	for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
		PUSH(g);
	for (LLVMValueRef a = LLVMGetFirstGlobalAlias(m); a; a = LLVMGetNextGlobalAlias(a))
		PUSH(a);
	for (LLVMValueRef i = LLVMGetFirstGlobalIFunc(m); i; i = LLVMGetNextGlobalIFunc(i))
		PUSH(i);
#undef PUSH
	*vals = v;
	return n;
}

static int has_attr(LLVMValueRef f, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
	return kind && LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, kind) != NULL;
}

/* Function f's string attribute name ("" when it has none) in *len bytes. */
static const char *str_attr(LLVMValueRef f, const char *name, unsigned *len)
{
	LLVMAttributeRef a = LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, name, (unsigned)strlen(name));
	*len = 0;
	return a ? LLVMGetStringAttributeValue(a, len) : "";
}

/* Whether callee can never be inlined into caller for its target: it
 * needs a feature ("+x" of its target-features) that the caller, compiled
 * for the same CPU, does not have (x86's __attribute__((target("bmi2")))
 * versions of a function, called from their portable dispatcher). LLVM
 * inlines only a callee whose features are a subset of the caller's. A
 * feature the caller's list implies without naming it (+avx2 implies
 * +avx) counts as missing: the only wrong answer is "never" for a callee
 * that could be inlined, which costs a call, never correctness. */
static int target_forbids_inlining(LLVMValueRef caller, LLVMValueRef callee)
{
	unsigned clen, elen, ccpu, ecpu;
	const char *cf = str_attr(caller, "target-features", &clen), *ef = str_attr(callee, "target-features", &elen);
	const char *cc = str_attr(caller, "target-cpu", &ccpu), *ec = str_attr(callee, "target-cpu", &ecpu);
	if (ccpu != ecpu || memcmp(cc, ec, ccpu))
		return 0;
	for (unsigned i = 0; i < elen;) {
		unsigned j = i;
		while (j < elen && ef[j] != ',')
			j++;
		if (ef[i] == '+') {
			int found = 0;
			for (unsigned k = 0; k < clen && !found;) {
				unsigned l = k;
				while (l < clen && cf[l] != ',')
					l++;
				found = l - k == j - i && !memcmp(cf + k, ef + i, j - i);
				k = l + 1;
			}
			if (!found)
				return 1;
		}
		i = j + 1;
	}
	return 0;
}

static int is_local(LLVMLinkage l)
{
	return l == LLVMInternalLinkage || l == LLVMPrivateLinkage;
}

/* Fill symbol s from global v: name, kind, linkage, comdat (numbered in
 * order of first use through comdats / *ncomdats) and the flags that the
 * declaration alone shows. */
static void read_symbol(struct sym *s, LLVMValueRef v, ptrmap *comdats, int *ncomdats)
{
	s->v = v;
	size_t nl;
	const char *nm = LLVMGetValueName2(v, &nl);
	s->name = xstrdup(nm ? nm : "");
	s->kind = LLVMIsAFunction(v) ? SYM_FUNC : LLVMIsAGlobalVariable(v) ? SYM_VAR
						: LLVMIsAGlobalAlias(v) ? SYM_ALIAS : SYM_IFUNC;
	s->linkage = LLVMGetLinkage(v);
	s->comdat = -1;
	s->unit = -1;
	s->base = -1;
	if (is_local(s->linkage))
		s->flags |= SF_LOCAL;
	if (s->linkage == LLVMWeakAnyLinkage || s->linkage == LLVMLinkOnceAnyLinkage ||
	    s->linkage == LLVMCommonLinkage || s->linkage == LLVMExternalWeakLinkage)
		s->flags |= SF_INTERPOSABLE;
	if (s->kind == SYM_FUNC || s->kind == SYM_VAR) {
		LLVMComdatRef c = LLVMGetComdat(v);
		if (c) {
			ptrmap_add(comdats, c, *ncomdats);
			s->comdat = ptrmap_get(comdats, c, -1);
			if (s->comdat == *ncomdats)
				(*ncomdats)++;
		}
		const char *sec = LLVMGetSection(v);
		if (sec && *sec)
			s->flags |= SF_SECTION;
	}
	if (s->kind == SYM_VAR && LLVMIsGlobalConstant(v))
		s->flags |= SF_CONST;
	if (s->kind == SYM_FUNC &&
	    (has_attr(v, "noinline") || has_attr(v, "optnone") || has_attr(v, "naked") ||
	     LLVMIsFunctionVarArg(LLVMGlobalGetValueType(v))))
		s->flags |= SF_NOINLINE;
	else if (s->kind == SYM_FUNC && has_attr(v, "alwaysinline"))
		s->flags |= SF_ALWAYS_INLINE;
}

/* References. */

/* State of the reference walk. */
struct walker {
	struct module_info *mi;
	ptrmap index;                /* LLVMValueRef global -> sym index */
	ptrmap seen;                 /* constant -> generation it was walked in */
	int gen;
	struct intlist refs, calls, addr, vp; /* of the symbol being walked */
	unsigned prof_kind;          /* metadata kind id of !prof */
	uint64_t *guids;             /* defined functions' GUIDs, sorted, with */
	int *guid_sym, nguids;       /* their symbols */
	struct intpairs blockaddr;   /* (fn, user): user holds blockaddress(fn) */
	int cur;                     /* symbol being walked */
	struct asm_scan asm_names;   /* names that module asm and inline asm use */
};

struct guid_sym {
	uint64_t guid;
	int sym;
};

static int cmp_guid_sym(const void *a, const void *b)
{
	const struct guid_sym *x = a, *y = b;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (x->sym > y->sym) - (x->sym < y->sym);
}

/* GUIDs of the defined functions, for value-profile lookups. */
static void build_guid_table(struct walker *w)
{
	struct module_info *mi = w->mi;
	struct guid_sym *t = xmalloc((mi->nsyms + 1) * sizeof *t);
	int n = 0;
	for (int i = 0; i < mi->nsyms; i++)
		if (mi->syms[i].kind == SYM_FUNC && mi->syms[i].name[0] && !LLVMIsDeclaration(mi->syms[i].v))
			t[n++] = (struct guid_sym){mtpc_global_guid(mi->syms[i].v), i};
	if (n)
		qsort(t, n, sizeof *t, cmp_guid_sym);
	w->guids = xmalloc((n + 1) * sizeof *w->guids);
	w->guid_sym = xmalloc((n + 1) * sizeof *w->guid_sym);
	for (int i = 0; i < n; i++) {
		w->guids[i] = t[i].guid;
		w->guid_sym[i] = t[i].sym;
	}
	w->nguids = n;
	free(t);
}

static int sym_of(struct walker *w, LLVMValueRef v)
{
	return ptrmap_get(&w->index, v, -1);
}

static void walk_const(struct walker *w, LLVMValueRef c)
{
	if (LLVMIsAGlobalValue(c)) {
		int s = sym_of(w, c);
		if (s >= 0) {
			intlist_push(&w->refs, s);
			intlist_push(&w->addr, s);
		}
		return;
	}
	int n = LLVMGetNumOperands(c);
	if (n == 0)
		return;
	/* Constants form a DAG; walk each once per symbol. */
	if (ptrmap_get(&w->seen, c, 0) == w->gen)
		return;
	ptrmap_put(&w->seen, c, w->gen);
	if (LLVMIsABlockAddress(c)) {
		/* Not operand 0: LLVM 22 keeps only the block as an operand. */
		LLVMValueRef fn = LLVMGetBlockAddressFunction(c);
		int s = fn ? sym_of(w, fn) : -1;
		if (s >= 0) {
			intpairs_push(&w->blockaddr, s, w->cur);
			intlist_push(&w->refs, s);
			intlist_push(&w->addr, s);
		}
		return;
	}
	for (int i = 0; i < n; i++) {
		LLVMValueRef op = LLVMGetOperand(c, i);
		if (op && LLVMIsAConstant(op))
			walk_const(w, op);
	}
}

static int guid_symbol(const struct walker *w, uint64_t g)
{
	int lo = 0, hi = w->nguids;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (w->guids[mid] < g)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->nguids && w->guids[lo] == g ? w->guid_sym[lo] : -1;
}

/* An indirect call's !prof {"VP", i32 0, total, guid1, count1, ...} names its
 * hot targets by GUID. They are affinity only: keeping a target with its
 * caller lets indirect-call promotion see its body, as in the unsplit module. */
static void value_profile_targets(struct walker *w, LLVMValueRef call)
{
	LLVMValueRef md = LLVMGetMetadata(call, w->prof_kind);
	if (!md)
		return;
	unsigned n = LLVMGetMDNodeNumOperands(md);
	if (n < 5)
		return;
	LLVMValueRef *ops = xmalloc(n * sizeof *ops);
	LLVMGetMDNodeOperands(md, ops);
	unsigned len = 0;
	const char *tag = ops[0] ? LLVMGetMDString(ops[0], &len) : NULL;
	if (tag && len == 2 && memcmp(tag, "VP", 2) == 0 && ops[1] && LLVMIsAConstantInt(ops[1]) &&
	    LLVMConstIntGetZExtValue(ops[1]) == 0)
		for (unsigned i = 3; i + 1 < n; i += 2)
			if (ops[i] && LLVMIsAConstantInt(ops[i])) {
				int t = guid_symbol(w, LLVMConstIntGetZExtValue(ops[i]));
				if (t >= 0)
					intlist_push(&w->vp, t);
			}
	free(ops);
}

static void walk_function(struct walker *w, struct sym *s)
{
	long cost = 0;
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(s->v); bb; bb = LLVMGetNextBasicBlock(bb)) {
		for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
			cost++;
			LLVMValueRef callee = NULL;
			if (LLVMIsACallInst(in) || LLVMIsAInvokeInst(in) || LLVMIsACallBrInst(in))
				callee = LLVMGetCalledValue(in);
			if (callee && LLVMIsAInlineAsm(callee))
				asm_scan_inline(&w->asm_names, w->cur, callee, &w->refs);
			else if (callee && !LLVMIsAGlobalValue(callee))
				value_profile_targets(w, in);
			int n = LLVMGetNumOperands(in);
			for (int i = 0; i < n; i++) {
				LLVMValueRef op = LLVMGetOperand(in, i);
				if (!op || !LLVMIsAConstant(op))
					continue;
				/* The callee is a call's last operand; the same
				 * function passed as an argument is an address use. */
				if (callee && i == n - 1 && op == callee && LLVMIsAGlobalValue(op)) {
					int t = sym_of(w, op);
					if (t >= 0) {
						intlist_push(&w->calls, t);
						intlist_push(&w->refs, t);
					}
					continue;
				}
				walk_const(w, op);
			}
		}
	}
	if (LLVMHasPersonalityFn(s->v))
		walk_const(w, LLVMGetPersonalityFn(s->v));
	s->cost = cost + 1;
}

LLVMValueRef strip_to_global(LLVMValueRef c)
{
	while (c && !LLVMIsAGlobalValue(c)) {
		if (!LLVMIsAConstantExpr(c) || LLVMGetNumOperands(c) < 1)
			return NULL;
		c = LLVMGetOperand(c, 0);
	}
	return c;
}

/* Flag the members of an llvm.* array of pointers or of {prio, fn, key} structs. */
static void flag_special_array(struct walker *w, const char *name, unsigned flag, int ctor)
{
	LLVMValueRef g = LLVMGetNamedGlobal(w->mi->mod, name);
	if (!g || LLVMIsDeclaration(g))
		return;
	LLVMValueRef init = LLVMGetInitializer(g);
	int n = init ? LLVMGetNumOperands(init) : 0;
	for (int i = 0; i < n; i++) {
		LLVMValueRef e = LLVMGetOperand(init, i);
		if (ctor) {
			for (int k = 1; k <= 2 && k < LLVMGetNumOperands(e); k++) {
				LLVMValueRef gv = strip_to_global(LLVMGetOperand(e, k));
				int s = gv ? sym_of(w, gv) : -1;
				if (s >= 0)
					w->mi->syms[s].flags |= flag;
			}
		} else {
			LLVMValueRef gv = strip_to_global(e);
			int s = gv ? sym_of(w, gv) : -1;
			if (s >= 0)
				w->mi->syms[s].flags |= flag;
		}
	}
}

/* Walk symbol i: its references, direct calls, addresses taken and
 * value-profile targets into its sym (each distinct and ascending), its
 * cost, and for an alias or ifunc its base object. */
static void walk_symbol(struct walker *w, int i)
{
	struct module_info *mi = w->mi;
	struct sym *s = &mi->syms[i];
	w->cur = i;
	w->gen++;
	w->refs.n = w->calls.n = w->addr.n = w->vp.n = 0;
	if (s->kind == SYM_FUNC && !LLVMIsDeclaration(s->v)) {
		walk_function(w, s);
		mi->nfuncs_defined++;
	} else if (s->kind == SYM_VAR && !LLVMIsDeclaration(s->v)) {
		LLVMValueRef init = LLVMGetInitializer(s->v);
		if (init)
			walk_const(w, init);
		s->cost = 0;
	} else if (s->kind == SYM_ALIAS || s->kind == SYM_IFUNC) {
		LLVMValueRef target = s->kind == SYM_ALIAS ? LLVMAliasGetAliasee(s->v) : LLVMGetGlobalIFuncResolver(s->v);
		if (target)
			walk_const(w, target);
		LLVMValueRef base = strip_to_global(target);
		/* Follow alias chains down to the object. */
		for (int hops = 0; base && LLVMIsAGlobalAlias(base) && hops < 64; hops++)
			base = strip_to_global(LLVMAliasGetAliasee(base));
		s->base = base ? sym_of(w, base) : -1;
		if (s->base >= 0)
			mi->syms[s->base].flags |= SF_ALIASEE;
	}
	s->refs = intlist_distinct(&w->refs, &s->nrefs);
	s->calls = intlist_distinct(&w->calls, &s->ncalls);
	s->addr = intlist_distinct(&w->addr, &s->naddr);
	s->vp = intlist_distinct(&w->vp, &s->nvp);
	mi->nvp_targets += s->nvp;
}

/* Roles and liveness. */

/* Size in bytes of a global variable's value. */
static unsigned long long var_bytes(LLVMValueRef v)
{
	LLVMTargetDataRef td = LLVMGetModuleDataLayout(LLVMGetGlobalParent(v));
	return LLVMABISizeOfType(td, LLVMGlobalGetValueType(v));
}

/* Each symbol's role (analyze.h, enum sym_role). Duplicated: small
 * linkonce_odr groups (the linker keeps one copy), small local constants
 * with a global unnamed_addr (copies are local and nobody compares their
 * addresses), and with --local-dup-limit small static functions; never
 * what must exist once (never_dup). */
/* Per symbol: a defined function that has direct callers and that none of
 * them can inline for its target (target_forbids_inlining). */
static char *never_inlined(const struct module_info *mi)
{
	const struct sym *S = mi->syms;
	char *called = xcalloc((size_t)mi->nsyms + 1, 1), *never = xcalloc((size_t)mi->nsyms + 1, 1);
	for (int i = 0; i < mi->nsyms; i++)
		for (int k = 0; k < S[i].ncalls; k++) {
			int c = S[i].calls[k];
			if (S[c].kind != SYM_FUNC || S[c].role == ROLE_DECL)
				continue;
			int forbids = target_forbids_inlining(S[i].v, S[c].v);
			never[c] = called[c] ? never[c] && forbids : forbids;
			called[c] = 1;
		}
	free(called);
	return never;
}

static void decide_roles(struct module_info *mi, int ncomdats, const struct analyze_opts *opt)
{
	struct sym *S = mi->syms;
	const unsigned never_dup = SF_BLOCKADDR | SF_IN_ASM | SF_CTOR | SF_USED | SF_ALIASEE | SF_SECTION |
				   SF_ASM_NAME | SF_INLINE_ASM | SF_ASM_SECTION | SF_ALIAS_NAME | SF_ALIAS_ADDR;
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &S[i];
		if (s->kind == SYM_VAR && strncmp(s->name, "llvm.", 5) == 0)
			s->role = ROLE_SPECIAL;
		else if ((s->kind == SYM_FUNC || s->kind == SYM_VAR) && LLVMIsDeclaration(s->v))
			s->role = ROLE_DECL;
		else if (s->linkage == LLVMAvailableExternallyLinkage)
			s->role = ROLE_IMPORTED;
		else if (s->kind == SYM_VAR && (s->flags & SF_LOCAL) && (s->flags & SF_CONST) &&
			 LLVMGetUnnamedAddress(s->v) == LLVMGlobalUnnamedAddr && !LLVMIsThreadLocal(s->v) &&
			 s->comdat < 0 && !(s->flags & never_dup) && var_bytes(s->v) <= (unsigned long long)opt->const_dup_limit)
			/* Small: every reader carries it (only with a global
			 * unnamed_addr: local_unnamed_addr lets code outside the
			 * module compare the copies' addresses). A big table would be
			 * duplicated data in the output (only strings merge), so it
			 * is owned once and the readers get copies to fold loads. */
			s->role = ROLE_DUP;
		else
			s->role = ROLE_OWNED;
	}
	/* linkonce_odr groups (a comdat, or one symbol without comdat): duplicate when
	 * small and free of anything that must exist once. */
	long *gcost = xcalloc(ncomdats + 1, sizeof *gcost);
	char *gbad = xcalloc(ncomdats + 1, 1);
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &S[i];
		if (s->comdat < 0)
			continue;
		gcost[s->comdat] += s->kind == SYM_FUNC ? s->cost : 0;
		if (s->role != ROLE_OWNED || s->linkage != LLVMLinkOnceODRLinkage || (s->flags & never_dup) ||
		    (s->kind == SYM_VAR && LLVMIsThreadLocal(s->v)))
			gbad[s->comdat] = 1;
	}
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &S[i];
		if (s->role != ROLE_OWNED || s->linkage != LLVMLinkOnceODRLinkage || (s->kind != SYM_FUNC && s->kind != SYM_VAR))
			continue;
		if (s->comdat >= 0 ? (!gbad[s->comdat] && gcost[s->comdat] <= opt->dup_limit)
				   : (!(s->flags & never_dup) && (s->kind == SYM_VAR ? !LLVMIsThreadLocal(s->v) : s->cost <= opt->dup_limit)))
			s->role = ROLE_DUP;
	}
	free(gcost);
	free(gbad);
	/* Small static functions: duplicated rather than promoted, so every
	 * partition calling one can inline it and drop it, as the unsplit module
	 * does; where two partitions keep it, the comdat leaves one (partition.c).
	 * Not one that no caller can inline for its target (never_inlined): the
	 * unsplit module keeps it out of line once, and each partition's copy
	 * would be out of line too (zstd's HUF_compress1X_usingCTable_internal_bmi2,
	 * 14 KB once its alwaysinline body is in). */
	char *never = never_inlined(mi);
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &S[i];
		if (s->role == ROLE_OWNED && s->kind == SYM_FUNC && (s->flags & SF_LOCAL) && s->comdat < 0 &&
		    !(s->flags & (never_dup | SF_NOINLINE)) && !never[i] &&
		    (s->cost <= opt->local_dup_limit || (opt->always_inline_dup && (s->flags & SF_ALWAYS_INLINE))))
			s->role = ROLE_DUP;
	}
	free(never);
	/* Aliases and ifuncs follow their base object. */
	for (int i = 0; i < mi->nsyms; i++)
		if ((S[i].kind == SYM_ALIAS || S[i].kind == SYM_IFUNC))
			S[i].role = ROLE_OWNED;
}

static int discardable(LLVMLinkage l)
{
	return l == LLVMInternalLinkage || l == LLVMPrivateLinkage || l == LLVMLinkOnceAnyLinkage ||
	       l == LLVMLinkOnceODRLinkage || l == LLVMAvailableExternallyLinkage;
}

/* GlobalDCE's liveness on the whole module: roots are definitions the linker
 * may need (non-discardable linkage), everything llvm.* arrays name, and
 * symbols module asm names; a comdat is live as a whole. Unreachable
 * definitions would vanish from the unsplit module; split, they could be
 * promoted and then kept, so they go into no partition. llvm.used and the
 * ctor arrays are walked as references, not applied per partition here. */
static void mark_dead(struct module_info *mi, int ncomdats)
{
	struct sym *S = mi->syms;
	int n = mi->nsyms, sp = 0;
	char *live = xcalloc(n + 1, 1), *comdat_live = xcalloc(ncomdats + 1, 1);
	int *stack = xmalloc((n + 1) * sizeof *stack);
	for (int i = 0; i < n; i++)
		if (S[i].role == ROLE_SPECIAL || S[i].role == ROLE_DECL || (S[i].flags & SF_IN_ASM) ||
		    !discardable(S[i].linkage)) {
			live[i] = 1;
			stack[sp++] = i;
		}
	for (;;) {
		while (sp) {
			const struct sym *s = &S[stack[--sp]];
			if (s->comdat >= 0)
				comdat_live[s->comdat] = 1;
			for (int k = 0; k < s->nrefs; k++)
				if (!live[s->refs[k]]) {
					live[s->refs[k]] = 1;
					stack[sp++] = s->refs[k];
				}
		}
		for (int i = 0; i < n; i++)
			if (!live[i] && S[i].comdat >= 0 && comdat_live[S[i].comdat]) {
				live[i] = 1;
				stack[sp++] = i;
			}
		if (!sp)
			break;
	}
	for (int i = 0; i < n; i++)
		if (!live[i]) {
			S[i].role = ROLE_DEAD;
			mi->ndead++;
		}
	free(live);
	free(comdat_live);
	free(stack);
}

void analyze_module(LLVMModuleRef m, const struct analyze_opts *opt, struct module_info *mi)
{
	memset(mi, 0, sizeof *mi);
	mi->mod = m;
	size_t len;
	const char *sf = LLVMGetSourceFileName(m, &len);
	mi->source_file = xstrdup(sf ? sf : "");
	const char *id = LLVMGetModuleIdentifier(m, &len);
	mi->module_id = xstrdup(id ? id : "");

	/* The symbol table. */
	LLVMValueRef *vals;
	mi->nsyms = sym_enumerate(m, &vals);
	mi->syms = xcalloc(mi->nsyms + 1, sizeof *mi->syms);
	struct walker w;
	memset(&w, 0, sizeof w);
	w.mi = mi;
	ptrmap_init(&w.index);
	ptrmap_init(&w.seen);
	ptrmap comdats;
	ptrmap_init(&comdats);
	int ncomdats = 0;
	for (int i = 0; i < mi->nsyms; i++) {
		read_symbol(&mi->syms[i], vals[i], &comdats, &ncomdats);
		ptrmap_put(&w.index, vals[i], i);
	}
	free(vals);
	ptrmap_free(&comdats);

	/* References, with what asm text names (asm_names.h: by the names
	 * the module uses, so before the edit-stable renaming). */
	w.prof_kind = LLVMGetMDKindIDInContext(LLVMGetModuleContext(m), "prof", 4);
	build_guid_table(&w);
	asm_scan_init(&w.asm_names, mi);
	asm_scan_module(&w.asm_names);
	for (int i = 0; i < mi->nsyms; i++)
		walk_symbol(&w, i);
	for (int k = 0; k < w.blockaddr.first.n; k++) {
		mi->syms[w.blockaddr.first.v[k]].flags |= SF_BLOCKADDR;
		mi->syms[w.blockaddr.second.v[k]].flags |= SF_BLOCKADDR;
	}
	flag_special_array(&w, "llvm.global_ctors", SF_CTOR, 1);
	flag_special_array(&w, "llvm.global_dtors", SF_CTOR, 1);
	flag_special_array(&w, "llvm.used", SF_USED, 0);
	flag_special_array(&w, "llvm.compiler.used", SF_USED, 0);

	/* Names, roles, liveness, units. */
	stabilize_thinlto_names(mi, m, opt->module_suffixes);
	stabilize_private_names(mi, m);
	if (opt->stable_local_names)
		stabilize_local_names(mi, m);
	flag_alias_names(mi);
	decide_roles(mi, ncomdats, opt);
	mark_dead(mi, ncomdats);
	build_units(mi, ncomdats, &w.blockaddr, &w.asm_names.set_uses, opt);

	asm_scan_free(&w.asm_names);
	ptrmap_free(&w.index);
	ptrmap_free(&w.seen);
	intlist_free(&w.refs);
	intlist_free(&w.calls);
	intlist_free(&w.addr);
	intlist_free(&w.vp);
	free(w.guids);
	free(w.guid_sym);
	intpairs_free(&w.blockaddr);
}

void module_info_free(struct module_info *mi)
{
	for (int i = 0; i < mi->nsyms; i++) {
		free(mi->syms[i].name);
		free(mi->syms[i].orig_name);
		free(mi->syms[i].refs);
		free(mi->syms[i].calls);
		free(mi->syms[i].addr);
		free(mi->syms[i].vp);
	}
	for (int u = 0; u < mi->nunits; u++) {
		free(mi->units[u].syms);
		free(mi->units[u].adj);
		free(mi->units[u].adjw);
	}
	for (int k = 0; k < mi->nsymvers; k++)
		free(mi->symvers[k].name);
	free(mi->symvers);
	free(mi->syms);
	free(mi->units);
	free(mi->tied);
	free(mi->source_file);
	free(mi->module_id);
	memset(mi, 0, sizeof *mi);
}

char *sym_display_name(const struct module_info *mi, int i)
{
	const struct sym *s = &mi->syms[i];
	/* Private constants keep their edit-stable name: it is what the
	 * partitions hold, and what the next build's seed looks up (clang's
	 * numbers change with an edit; ThinLTO's .llvm.<hash> is mapped back
	 * by the seed reader). */
	if (s->orig_name && s->linkage != LLVMPrivateLinkage && !(s->flags & SF_STABLE_LOCAL))
		return xstrdup(s->orig_name);
	if (s->name[0])
		return xstrdup(s->name);
	static const char *kinds[] = {"func", "var", "alias", "ifunc"};
	return xasprintf("<anon-%s-%d>", kinds[s->kind], i);
}
