/* analyze.c: see analyze.h. */
#include "analyze.h"
#include "buf.h"
#include "hash.h"
#include "llvm_shim.h"
#include "ptrmap.h"
#include "util.h"

#include <llvm-c/Comdat.h>
#include <llvm-c/Target.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* A growable int list. */
struct ilist {
	int *v, n, cap;
};

static void ilist_push(struct ilist *l, int x)
{
	if (l->n == l->cap)
		l->v = xrealloc(l->v, (l->cap = l->cap ? l->cap * 2 : 8) * sizeof *l->v);
	l->v[l->n++] = x;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Sort and deduplicate; returns the new length. */
static int sort_unique(int *v, int n)
{
	if (n < 2)
		return n;
	qsort(v, n, sizeof *v, cmp_int);
	int k = 1;
	for (int i = 1; i < n; i++)
		if (v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

static int is_c_ident(const char *s);

struct name_idx {
	const char *name;
	int idx;
};

static int cmp_name_idx(const void *a, const void *b)
{
	const struct name_idx *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* Names sorted for lookups by the text of asm: symbol names, or the section
 * names of globals. */
struct name_table {
	struct name_idx *v;
	int n;
};

/* First entry named name, or -1 (entries of one name are adjacent). */
static int name_table_find(const struct name_table *t, const char *name)
{
	int lo = 0, hi = t->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (strcmp(t->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && strcmp(t->v[lo].name, name) == 0 ? lo : -1;
}

static int is_ident_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '$';
}

/* The next identifier-like token of asm text from *pos into tok (room for
 * len + 1 bytes); 0 at the end. Over-approximate on purpose: a token that
 * happens to equal a symbol's name only keeps that symbol's name and place. */
static int asm_next_token(const char *s, size_t len, size_t *pos, char *tok)
{
	size_t i = *pos;
	while (i < len && !is_ident_char((unsigned char)s[i]))
		i++;
	if (i == len)
		return 0;
	size_t j = i;
	while (j < len && is_ident_char((unsigned char)s[j]))
		j++;
	memcpy(tok, s + i, j - i);
	tok[j - i] = 0;
	*pos = j;
	return 1;
}

/* The symbol a token names, or -1. An AT&T immediate (`$sym`, `$$sym` in
 * inline asm) is the symbol too; '$' may also be part of a name. */
static int asm_token_symbol(const struct name_table *names, const char *tok)
{
	int k = name_table_find(names, tok);
	while (k < 0 && *tok == '$')
		k = name_table_find(names, ++tok);
	return k < 0 ? -1 : names->v[k].idx;
}

/* State of the reference walk. */
struct walker {
	struct module_info *mi;
	ptrmap index;   /* LLVMValueRef global -> sym index */
	ptrmap seen;    /* constant -> generation it was walked in */
	int gen;
	struct ilist refs, calls, addr, vp;
	unsigned prof_kind;          /* metadata kind id of !prof */
	uint64_t *guids;             /* defined functions' GUIDs, sorted, with */
	int *guid_sym, nguids;       /* their symbols */
	struct ilist ba_fn, ba_user; /* blockaddress(fn) used by user, pairs */
	int cur;                     /* symbol being walked */
	struct name_table names;     /* symbols by their names in the module */
	struct name_table set_names; /* A -> B of module asm's `.lto_set_conditional A, B`
	                                lines (names owned: heap) */
	struct ilist set_user, set_target; /* inline asm of set_user names set_target
	                                      through its local alias A: pairs */
	char *tok;                   /* token buffer for asm text */
	size_t tok_cap;
};

static int sym_of(struct walker *w, LLVMValueRef v)
{
	return ptrmap_get(&w->index, v, -1);
}

static void walk_const(struct walker *w, LLVMValueRef c)
{
	if (LLVMIsAGlobalValue(c)) {
		int s = sym_of(w, c);
		if (s >= 0) {
			ilist_push(&w->refs, s);
			ilist_push(&w->addr, s);
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
			ilist_push(&w->ba_fn, s);
			ilist_push(&w->ba_user, w->cur);
			ilist_push(&w->refs, s);
			ilist_push(&w->addr, s);
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
					ilist_push(&w->vp, t);
			}
	free(ops);
}

/* Inline asm inside a function can name a symbol as text (`call helper`,
 * `lea x(%rip)`), which no operand shows: count it as a reference, so the
 * symbol stays alive, is promoted when the function lands elsewhere, and keeps
 * its name (the asm cannot be rewritten). ThinLTO does not import such
 * functions either; they are never copied. */
static void inline_asm_refs(struct walker *w, struct sym *s, LLVMValueRef asm_val)
{
	size_t len = 0;
	const char *text = LLVMGetInlineAsmAsmString(asm_val, &len);
	if (!text || !len)
		return;
	if (len + 1 > w->tok_cap)
		w->tok = xrealloc(w->tok, w->tok_cap = len + 1);
	for (size_t pos = 0; asm_next_token(text, len, &pos, w->tok);) {
		int t = asm_token_symbol(&w->names, w->tok);
		if (t < 0 && (t = asm_token_symbol(&w->set_names, w->tok)) >= 0) {
			/* The alias A exists only in the object that defines B. */
			ilist_push(&w->set_user, w->cur);
			ilist_push(&w->set_target, t);
		}
		if (t < 0)
			continue;
		ilist_push(&w->refs, t);
		w->mi->syms[t].flags |= SF_ASM_NAME;
		s->flags |= SF_INLINE_ASM;
	}
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
				inline_asm_refs(w, s, callee);
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
						ilist_push(&w->calls, t);
						ilist_push(&w->refs, t);
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

/* The global value at the bottom of constant casts (for aliases, ctors, used). */
LLVMValueRef strip_to_global(LLVMValueRef c)
{
	while (c && !LLVMIsAGlobalValue(c)) {
		if (!LLVMIsAConstantExpr(c) || LLVMGetNumOperands(c) < 1)
			return NULL;
		c = LLVMGetOperand(c, 0);
	}
	return c;
}

static int has_attr(LLVMValueRef f, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
	return kind && LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, kind) != NULL;
}

static int is_local(LLVMLinkage l)
{
	return l == LLVMInternalLinkage || l == LLVMPrivateLinkage;
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

/* `.symver target, name@V[, ...]` after the `.symver` token: record the
 * versioned name as the object file will hold it (`@@@` defines `name@@V`
 * and drops the target's own name). */
static void parse_symver(struct walker *w, const char *s, size_t len, size_t *pos)
{
	struct module_info *mi = w->mi;
	if (!asm_next_token(s, len, pos, w->tok))
		return;
	int t = asm_token_symbol(&w->names, w->tok);
	if (t >= 0)
		mi->syms[t].flags |= SF_IN_ASM | SF_ASM_NAME;
	size_t i = *pos;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (t < 0 || i == len || s[i] != ',')
		return;
	for (i++; i < len && (s[i] == ' ' || s[i] == '\t');)
		i++;
	size_t j = i;
	while (j < len && !strchr(" \t\r\n,;#\"", s[j]))
		j++;
	char *name = xasprintf("%.*s", (int)(j - i), s + i);
	char *at3 = strstr(name, "@@@");
	if (at3)
		memmove(at3 + 2, at3 + 3, strlen(at3 + 3) + 1);
	if (!strchr(name, '@')) {
		free(name);
		return;
	}
	mi->symvers = xrealloc(mi->symvers, (mi->nsymvers + 1) * sizeof *mi->symvers);
	mi->symvers[mi->nsymvers++] = (struct asm_symver){t, name, at3 != NULL};
}

/* Globals with an explicit section that could have __start_/__stop_ symbols. */
static void section_table(const struct module_info *mi, struct name_table *t)
{
	t->v = xmalloc((mi->nsyms + 1) * sizeof *t->v);
	t->n = 0;
	for (int i = 0; i < mi->nsyms; i++) {
		const struct sym *s = &mi->syms[i];
		if (!(s->flags & SF_SECTION) || (s->kind != SYM_VAR && s->kind != SYM_FUNC))
			continue;
		const char *sec = LLVMGetSection(s->v);
		if (sec && is_c_ident(sec))
			t->v[t->n++] = (struct name_idx){sec, i};
	}
	qsort(t->v, t->n, sizeof *t->v, cmp_name_idx);
}

static void scan_asm_line(struct walker *w, const char *s, size_t end, size_t pos, unsigned flags,
			  const struct name_table *sect_names);

/* Module asm can name any symbol (.symver, .set/.equ, calls, data): flag
 * every symbol whose name appears in it as a token, so they all stay with the
 * asm and keep their names. A section it names (directly, or through
 * __start_/__stop_) keeps its globals with the asm too: `ld -r` concatenates a
 * section's pieces in partition order, and the unsplit object has the asm's
 * pieces first. */
static void scan_module_asm(struct walker *w)
{
	struct module_info *mi = w->mi;
	size_t len;
	const char *s = LLVMGetModuleInlineAsm(mi->mod, &len);
	if (!s || !len)
		return;
	mi->has_asm = 1;
	struct name_table sect;
	section_table(mi, &sect);
	if (len + 1 > w->tok_cap)
		w->tok = xrealloc(w->tok, w->tok_cap = len + 1);
	for (size_t line = 0, end; line < len; line = end + 1) {
		const char *nl = memchr(s + line, '\n', len - line);
		end = nl ? (size_t)(nl - s) : len;
		size_t pos = line;
		if (asm_set_line(s + line, end - line) && asm_next_token(s, end, &pos, w->tok) &&
		    asm_next_token(s, end, &pos, w->tok)) {
			char *alias = xstrdup(w->tok);
			int b = asm_next_token(s, end, &pos, w->tok) ? asm_token_symbol(&w->names, w->tok) : -1;
			if (b >= 0) {
				w->set_names.v = xrealloc(w->set_names.v, (w->set_names.n + 1) * sizeof *w->set_names.v);
				w->set_names.v[w->set_names.n++] = (struct name_idx){alias, b};
			} else {
				free(alias);
			}
		}
	}
	if (w->set_names.n)
		qsort(w->set_names.v, w->set_names.n, sizeof *w->set_names.v, cmp_name_idx);
	for (size_t line = 0, end; line < len; line = end + 1) {
		const char *nl = memchr(s + line, '\n', len - line);
		end = nl ? (size_t)(nl - s) : len;
		/* `.lto_set_conditional` lines go to every partition (asm_set_line):
		 * the names they use keep them, but need not stay with the asm. */
		unsigned flags = asm_set_line(s + line, end - line) ? SF_ASM_NAME : SF_IN_ASM | SF_ASM_NAME;
		scan_asm_line(w, s, end, line, flags, &sect);
	}
	free(sect.v);
}

int asm_set_line(const char *line, size_t len)
{
	static const char directive[] = ".lto_set_conditional";
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	return len > sizeof directive - 1 && !memcmp(line, directive, sizeof directive - 1) &&
	       (line[sizeof directive - 1] == ' ' || line[sizeof directive - 1] == '\t');
}

/* The tokens of module asm s from pos to end (one line). */
static void scan_asm_line(struct walker *w, const char *s, size_t end, size_t pos, unsigned flags,
			  const struct name_table *sect_names)
{
	struct module_info *mi = w->mi;
	const struct name_table *sect = sect_names;
	while (asm_next_token(s, end, &pos, w->tok)) {
		const char *tok = w->tok;
		int t = asm_token_symbol(&w->names, tok);
		if (t < 0 && !(flags & SF_IN_ASM))
			continue; /* A of a `.lto_set_conditional` line */
		if (t < 0)
			t = asm_token_symbol(&w->set_names, tok);
		if (t >= 0)
			mi->syms[t].flags |= flags;
		if (strncmp(tok, "__start_", 8) == 0)
			tok += 8;
		else if (strncmp(tok, "__stop_", 7) == 0)
			tok += 7;
		for (int k = name_table_find(sect, tok); k >= 0 && k < sect->n && !strcmp(sect->v[k].name, tok); k++)
			mi->syms[sect->v[k].idx].flags |= SF_ASM_SECTION;
		if (strcmp(w->tok, ".symver") == 0)
			parse_symver(w, s, end, &pos);
	}
}

/* Union-find over symbols. */
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

static int is_c_ident(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* Size in bytes of a global variable's value. */
static unsigned long long var_bytes(LLVMValueRef v)
{
	LLVMTargetDataRef td = LLVMGetModuleDataLayout(LLVMGetGlobalParent(v));
	return LLVMABISizeOfType(td, LLVMGlobalGetValueType(v));
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
static void flag_alias_names(struct module_info *mi)
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
	 * does; where two partitions keep it, the comdat leaves one (partition.c). */
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &S[i];
		if (s->role == ROLE_OWNED && s->kind == SYM_FUNC && (s->flags & SF_LOCAL) && s->comdat < 0 &&
		    !(s->flags & (never_dup | SF_NOINLINE)) && s->cost <= opt->local_dup_limit)
			s->role = ROLE_DUP;
	}
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

static void build_units(struct module_info *mi, int ncomdats, struct walker *w, const struct analyze_opts *opt)
{
	struct sym *S = mi->syms;
	int n = mi->nsyms;
	int *uf = xmalloc(n * sizeof *uf);
	for (int i = 0; i < n; i++)
		uf[i] = i;
	int *comdat_first = xmalloc((ncomdats + 1) * sizeof *comdat_first);
	for (int c = 0; c <= ncomdats; c++)
		comdat_first[c] = -1;
	int asm_first = -1, ctor_first = -1;
	struct name_idx *sect = xmalloc((n + 1) * sizeof *sect);
	int nsect = 0;
	for (int i = 0; i < n; i++) {
		struct sym *s = &S[i];
		if (s->role != ROLE_OWNED)
			continue;
		if (s->base >= 0 && S[s->base].role == ROLE_OWNED)
			uf_union(uf, i, s->base);
		/* Users of several names of one object live with them (flag_alias_names). */
		for (int k = 0; k < s->naddr && (s->flags & SF_ALIAS_ADDR); k++)
			if ((S[s->addr[k]].flags & SF_ALIAS_NAME) && S[s->addr[k]].role == ROLE_OWNED)
				uf_union(uf, i, s->addr[k]);
		if (s->comdat >= 0) {
			if (comdat_first[s->comdat] < 0)
				comdat_first[s->comdat] = i;
			else
				uf_union(uf, i, comdat_first[s->comdat]);
		}
		if (s->flags & (SF_IN_ASM | SF_ASM_SECTION)) {
			if (asm_first < 0)
				asm_first = i;
			else
				uf_union(uf, i, asm_first);
		}
		if (s->flags & SF_CTOR) {
			if (ctor_first < 0)
				ctor_first = i;
			else
				uf_union(uf, i, ctor_first);
		}
		if ((s->flags & SF_SECTION) && (s->kind == SYM_VAR || s->kind == SYM_FUNC)) {
			const char *sec = LLVMGetSection(s->v);
			if (sec && is_c_ident(sec))
				sect[nsect++] = (struct name_idx){sec, i};
		}
	}
	/* Each __start_/__stop_ section stays in one partition, in order. */
	qsort(sect, nsect, sizeof *sect, cmp_name_idx);
	for (int i = 1; i < nsect; i++)
		if (strcmp(sect[i].name, sect[i - 1].name) == 0)
			uf_union(uf, sect[i].idx, sect[i - 1].idx);
	free(sect);
	/* blockaddress: the function and every user stay together. */
	for (int k = 0; k < w->ba_fn.n; k++) {
		int f = w->ba_fn.v[k], u = w->ba_user.v[k];
		if (S[f].role == ROLE_OWNED && S[u].role == ROLE_OWNED)
			uf_union(uf, f, u);
	}
	/* Inline asm using A of `.lto_set_conditional A, B` lives with B: the
	 * assembler makes A only where B is defined. */
	for (int k = 0; k < w->set_user.n; k++) {
		int f = w->set_user.v[k], b = w->set_target.v[k];
		if (S[f].role == ROLE_OWNED && S[b].role == ROLE_OWNED)
			uf_union(uf, f, b);
	}
	join_symver_removed(mi, uf);
	long owned = 0;
	for (int i = 0; i < n; i++)
		if (S[i].role == ROLE_OWNED && S[i].kind == SYM_FUNC)
			owned += S[i].cost;
	long limit = opt->scc_cut > 0 && opt->partitions > 1
			     ? (long)(opt->scc_cut * (double)owned / opt->partitions) : 0;
	union_sccs(mi, uf, limit);
	join_single_caller_locals(mi, uf, opt->join_limit, opt->join_growth);
	free(comdat_first);

	/* Number the units by their smallest symbol index. */
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
	mi->units = xcalloc(mi->nunits, sizeof *mi->units);
	struct ilist *members = xcalloc(mi->nunits, sizeof *members);
	for (int i = 0; i < n; i++)
		if (S[i].unit >= 0) {
			ilist_push(&members[S[i].unit], i);
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

	/* Affinity edges between units: direct references, and references made
	 * through duplicated constants (dispatch tables). Cutting an edge to a
	 * local symbol forces a promotion, so those weigh more. */
	struct ilist *nb = xcalloc(mi->nunits, sizeof *nb);
	for (int i = 0; i < n; i++) {
		int u = S[i].unit;
		if (u < 0)
			continue;
		for (int k = 0; k < S[i].nrefs; k++) {
			int t = S[i].refs[k];
			int direct = 1;
			if (S[t].role == ROLE_DUP && S[t].kind == SYM_VAR) {
				for (int j = 0; j < S[t].nrefs; j++) {
					int t2 = S[t].refs[j];
					if (S[t2].unit >= 0 && S[t2].unit != u) {
						ilist_push(&nb[u], S[t2].unit);
						ilist_push(&nb[S[t2].unit], u);
					}
				}
				direct = 0;
			}
			if (!direct || S[t].unit < 0 || S[t].unit == u)
				continue;
			int reps = (S[t].flags & SF_LOCAL) ? 4 : 1;
			for (int r = 0; r < reps; r++) {
				ilist_push(&nb[u], S[t].unit);
				ilist_push(&nb[S[t].unit], u);
			}
		}
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < S[i].nvp; k++) {
			int u = S[i].unit, t = S[S[i].vp[k]].unit;
			if (u >= 0 && t >= 0 && u != t)
				for (int r = 0; r < 2; r++) {
					ilist_push(&nb[u], t);
					ilist_push(&nb[t], u);
				}
		}
	for (int u = 0; u < mi->nunits; u++) {
		struct unit *U = &mi->units[u];
		if (nb[u].n)
			qsort(nb[u].v, nb[u].n, sizeof(int), cmp_int);
		U->adj = xmalloc((nb[u].n + 1) * sizeof *U->adj);
		U->adjw = xmalloc((nb[u].n + 1) * sizeof *U->adjw);
		for (int k = 0; k < nb[u].n; k++) {
			if (U->nadj && U->adj[U->nadj - 1] == nb[u].v[k]) {
				U->adjw[U->nadj - 1]++;
			} else {
				U->adj[U->nadj] = nb[u].v[k];
				U->adjw[U->nadj++] = 1;
			}
		}
		free(nb[u].v);
	}
	free(nb);
	free(unit_of_root);
	free(uf);
}

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

/* The digits of `name.llvm.<digits>`, or NULL. */
const char *llvm_suffix(const char *name)
{
	const char *p = strstr(name, ".llvm.");
	if (!p)
		return NULL;
	for (;;) {
		const char *q = strstr(p + 1, ".llvm.");
		if (!q)
			break;
		p = q;
	}
	p += 6;
	if (!*p)
		return NULL;
	for (const char *d = p; *d; d++)
		if (*d < '0' || *d > '9')
			return NULL;
	return p;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Path `to` (len bytes) relative to the directory of path `from`, both
 * absolute or both relative to one directory: heap string. */
static char *relative_to(const char *from, const char *to, size_t len)
{
	size_t common = 0; /* length of the directories both start with */
	for (size_t i = 0; from[i] && i < len && from[i] == to[i]; i++)
		if (from[i] == '/')
			common = i + 1;
	struct buf b = {0};
	for (const char *p = from + common; (p = strchr(p, '/')); p++)
		buf_add(&b, "../");
	buf_printf(&b, "%.*s", (int)(len - common), to + common);
	return b.s ? b.s : xstrdup("");
}

/* The stable stand-in for another module's promotion suffix x: "mtpc" and
 * a hash of that module's path relative to this module's (module_id), so
 * the same in every build directory; from suffixes (mtpc_index_suffixes'
 * lines). Heap string, or NULL if the index does not name x. */
static char *foreign_suffix(const char *suffixes, const char *x, const char *module_id)
{
	size_t xl = strlen(x);
	for (const char *l = suffixes; l && *l;) {
		const char *end = strchr(l, '\n');
		size_t ll = end ? (size_t)(end - l) : strlen(l);
		if (ll > xl && !strncmp(l, x, xl) && l[xl] == ' ') {
			char *rel = relative_to(module_id, l + xl + 1, ll - xl - 1);
			char hex[MTPC_HASH_HEX_LEN + 1];
			mtpc_hash_hex(rel, strlen(rel), hex);
			free(rel);
			hex[8] = 0;
			return xasprintf("mtpc%s", hex);
		}
		l = end ? end + 1 : NULL;
	}
	return NULL;
}

/* ThinLTO names the module's own promoted locals `f.llvm.<hash of the
 * module>`: the most common suffix among its definitions. Any edit changes the
 * hash and so every partition naming one of them; partitions use
 * `f.llvm.mtpc` instead and the merge restores the real names (rename.txt).
 * Likewise the locals of other modules this one imports or references get
 * `f.llvm.mtpc<hash of that module's relative path>` (suffixes: the index's list), so
 * that an edit of another module leaves an importer's partitions as they
 * were unless the code it imports changed. */
static void stabilize_thinlto_names(struct module_info *mi, LLVMModuleRef m, const char *suffixes)
{
	const char **suf = xmalloc((mi->nsyms + 1) * sizeof *suf);
	int n = 0;
	for (int i = 0; i < mi->nsyms; i++) {
		const struct sym *s = &mi->syms[i];
		const char *x = llvm_suffix(s->name);
		if (x && (s->kind == SYM_FUNC || s->kind == SYM_VAR) && !LLVMIsDeclaration(s->v) &&
		    s->linkage != LLVMAvailableExternallyLinkage)
			suf[n++] = x;
	}
	const char *own = NULL;
	if (n) {
		qsort(suf, n, sizeof *suf, cmp_cstr);
		int best = 0;
		for (int i = 0, run = 1; i < n; i++, run++) {
			if (i + 1 < n && strcmp(suf[i], suf[i + 1]) == 0)
				continue;
			if (run > best) {
				best = run;
				own = suf[i];
			}
			run = 0;
		}
	}
	char *own_copy = own ? xstrdup(own) : NULL;
	free(suf);
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &mi->syms[i];
		const char *x = llvm_suffix(s->name);
		if (!x || (s->flags & SF_ASM_NAME))
			continue; /* asm text names it as it is */
		char *stand_in = own_copy && !strcmp(x, own_copy) ? xstrdup("mtpc")
								  : foreign_suffix(suffixes, x, mi->module_id);
		if (!stand_in)
			continue;
		char *nm = xasprintf("%.*s%s", (int)(x - s->name), s->name, stand_in);
		free(stand_in);
		if (LLVMGetNamedGlobal(m, nm) || LLVMGetNamedFunction(m, nm)) {
			free(nm); /* taken in the module (never in practice): keep the old name */
			continue;
		}
		s->orig_name = s->name;
		s->name = nm;
		mi->nstable++;
	}
	free(own_copy);
}

/* Private constants (clang's string literals `.str.<n>`, `__const.f.x`, ...)
 * are numbered in the order clang emitted them: a literal added anywhere
 * renumbers all the later ones, and with them every partition naming one.
 * Their names never reach an object file (private symbols are local
 * labels), so partitions use `<name without the number>.k<hash of the
 * definition>` instead; identical definitions get .1, .2... in module order. */
struct named {
	char *name;
	int sym;
};

static int cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->sym > y->sym) - (x->sym < y->sym);
}

/* The text of a private variable's definition, for its hash: what makes two
 * definitions interchangeable (kind, alignment, section, value), without its
 * metadata attachments, which are numbered module-wide. Printed piecewise:
 * LLVMPrintValueToString on a global numbers all of the module's metadata
 * first (with -g, most of the split's analysis time), on a constant only
 * the constant. */
static char *private_definition(LLVMValueRef g)
{
	const char *sec = LLVMGetSection(g);
	LLVMValueRef init = LLVMGetInitializer(g);
	char *type = LLVMPrintTypeToString(LLVMGlobalGetValueType(g));
	size_t nl;
	const char *iname = init && LLVMIsAGlobalValue(init) ? LLVMGetValueName2(init, &nl) : NULL;
	char *itext = init && !iname ? LLVMPrintValueToString(init) : NULL;
	char *def = xasprintf("%s %s %d %d %d %u [%s] %s%s", LLVMIsGlobalConstant(g) ? "constant" : "global",
			      type, (int)LLVMGetUnnamedAddress(g), (int)LLVMGetThreadLocalMode(g),
			      LLVMIsExternallyInitialized(g), LLVMGetAlignment(g), sec ? sec : "",
			      iname ? "@" : "", iname ? iname : itext ? itext : "");
	LLVMDisposeMessage(type);
	if (itext)
		LLVMDisposeMessage(itext);
	return def;
}

static void stabilize_private_names(struct module_info *mi, LLVMModuleRef m)
{
	struct named *cand = xmalloc((mi->nsyms + 1) * sizeof *cand);
	int n = 0;
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &mi->syms[i];
		if (s->kind != SYM_VAR || s->linkage != LLVMPrivateLinkage || !s->name[0] || s->orig_name ||
		    (s->flags & SF_ASM_NAME) ||
		    LLVMIsDeclaration(s->v))
			continue;
		char *def = private_definition(s->v);
		char hex[MTPC_HASH_HEX_LEN + 1];
		mtpc_hash_hex(def, strlen(def), hex);
		hex[8] = 0;
		free(def);
		size_t len = strlen(s->name);
		while (len > 0 && s->name[len - 1] >= '0' && s->name[len - 1] <= '9')
			len--;
		if (len > 0 && len < strlen(s->name) && s->name[len - 1] == '.')
			len--;
		else
			len = strlen(s->name);
		cand[n++] = (struct named){xasprintf("%.*s.k%s", (int)len, s->name, hex), i};
	}
	/* Sorted, identical definitions sit together in module order: the
	 * first keeps the name, the next get .1, .2, ... */
	if (n)
		qsort(cand, n, sizeof *cand, cmp_named);
	for (int k = 0, rank = 0; k < n; k++) {
		rank = k > 0 && !strcmp(cand[k].name, cand[k - 1].name) ? rank + 1 : 0;
		struct sym *s = &mi->syms[cand[k].sym];
		char *nm = rank ? xasprintf("%s.%d", cand[k].name, rank) : xstrdup(cand[k].name);
		if (LLVMGetNamedGlobal(m, nm) || LLVMGetNamedFunction(m, nm)) {
			free(nm); /* taken in the module (never in practice): keep the old name */
			continue;
		}
		s->orig_name = s->name;
		s->name = nm;
		mi->nstable++;
	}
	for (int k = 0; k < n; k++)
		free(cand[k].name);
	free(cand);
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
		struct sym *s = &mi->syms[i];
		LLVMValueRef v = vals[i];
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
				ptrmap_add(&comdats, c, ncomdats);
				s->comdat = ptrmap_get(&comdats, c, -1);
				if (s->comdat == ncomdats)
					ncomdats++;
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
		ptrmap_put(&w.index, v, i);
	}
	w.prof_kind = LLVMGetMDKindIDInContext(LLVMGetModuleContext(m), "prof", 4);
	build_guid_table(&w);
	/* By the names the module (and so any asm text) uses: before the
	 * edit-stable renaming, which skips the symbols asm names. */
	w.names.v = xmalloc((mi->nsyms + 1) * sizeof *w.names.v);
	for (int i = 0; i < mi->nsyms; i++)
		if (mi->syms[i].name[0])
			w.names.v[w.names.n++] = (struct name_idx){mi->syms[i].name, i};
	qsort(w.names.v, w.names.n, sizeof *w.names.v, cmp_name_idx);
	scan_module_asm(&w);
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &mi->syms[i];
		w.cur = i;
		w.gen++;
		w.refs.n = w.calls.n = w.addr.n = w.vp.n = 0;
		if (s->kind == SYM_FUNC && !LLVMIsDeclaration(s->v)) {
			walk_function(&w, s);
			mi->nfuncs_defined++;
		} else if (s->kind == SYM_VAR && !LLVMIsDeclaration(s->v)) {
			LLVMValueRef init = LLVMGetInitializer(s->v);
			if (init)
				walk_const(&w, init);
			s->cost = 0;
		} else if (s->kind == SYM_ALIAS || s->kind == SYM_IFUNC) {
			LLVMValueRef target = s->kind == SYM_ALIAS ? LLVMAliasGetAliasee(s->v) : LLVMGetGlobalIFuncResolver(s->v);
			if (target)
				walk_const(&w, target);
			LLVMValueRef base = strip_to_global(target);
			/* Follow alias chains down to the object. */
			for (int hops = 0; base && LLVMIsAGlobalAlias(base) && hops < 64; hops++)
				base = strip_to_global(LLVMAliasGetAliasee(base));
			s->base = base ? sym_of(&w, base) : -1;
			if (s->base >= 0)
				mi->syms[s->base].flags |= SF_ALIASEE;
		}
		int nr = sort_unique(w.refs.v, w.refs.n), nc = sort_unique(w.calls.v, w.calls.n);
		s->refs = xmalloc((nr + 1) * sizeof(int));
		if (nr)
			memcpy(s->refs, w.refs.v, nr * sizeof(int));
		s->nrefs = nr;
		s->calls = xmalloc((nc + 1) * sizeof(int));
		if (nc)
			memcpy(s->calls, w.calls.v, nc * sizeof(int));
		s->ncalls = nc;
		int na = sort_unique(w.addr.v, w.addr.n);
		s->addr = xmalloc((na + 1) * sizeof(int));
		if (na)
			memcpy(s->addr, w.addr.v, na * sizeof(int));
		s->naddr = na;
		int nv = sort_unique(w.vp.v, w.vp.n);
		s->vp = xmalloc((nv + 1) * sizeof(int));
		if (nv)
			memcpy(s->vp, w.vp.v, nv * sizeof(int));
		s->nvp = nv;
		mi->nvp_targets += nv;
	}
	for (int k = 0; k < w.ba_fn.n; k++) {
		mi->syms[w.ba_fn.v[k]].flags |= SF_BLOCKADDR;
		mi->syms[w.ba_user.v[k]].flags |= SF_BLOCKADDR;
	}
	flag_special_array(&w, "llvm.global_ctors", SF_CTOR, 1);
	flag_special_array(&w, "llvm.global_dtors", SF_CTOR, 1);
	flag_special_array(&w, "llvm.used", SF_USED, 0);
	flag_special_array(&w, "llvm.compiler.used", SF_USED, 0);
	free(w.names.v);
	for (int k = 0; k < w.set_names.n; k++)
		free((char *)w.set_names.v[k].name);
	free(w.set_names.v);
	free(w.tok);
	stabilize_thinlto_names(mi, m, opt->module_suffixes);
	stabilize_private_names(mi, m);
	flag_alias_names(mi);
	decide_roles(mi, ncomdats, opt);
	mark_dead(mi, ncomdats);
	build_units(mi, ncomdats, &w, opt);

	free(vals);
	ptrmap_free(&w.index);
	ptrmap_free(&w.seen);
	ptrmap_free(&comdats);
	free(w.refs.v);
	free(w.calls.v);
	free(w.addr.v);
	free(w.vp.v);
	free(w.guids);
	free(w.guid_sym);
	free(w.ba_fn.v);
	free(w.ba_user.v);
	free(w.set_user.v);
	free(w.set_target.v);
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
	if (s->orig_name && s->linkage != LLVMPrivateLinkage)
		return xstrdup(s->orig_name);
	if (s->name[0])
		return xstrdup(s->name);
	static const char *kinds[] = {"func", "var", "alias", "ifunc"};
	return xasprintf("<anon-%s-%d>", kinds[s->kind], i);
}
