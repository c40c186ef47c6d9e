/* stable_names.c: see stable_names.h. */
#include "stable_names.h"
#include "buf.h"
#include "hash.h"
#include "ptrmap.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

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

/* Give symbol s the name nm (heap, taken over), unless the module has a
 * global of that name already. */
static void rename_symbol(struct module_info *mi, LLVMModuleRef m, struct sym *s, char *nm)
{
	if (LLVMGetNamedGlobal(m, nm) || LLVMGetNamedFunction(m, nm)) {
		free(nm); /* taken in the module (never in practice): keep the old name */
		return;
	}
	s->orig_name = s->name;
	s->name = nm;
	mi->nstable++;
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

/* The module's own promotion suffix: the most common among the suffixes of
 * its definitions (imported bodies are other modules'). Heap string, or
 * NULL if none has one. */
static char *own_suffix(const struct module_info *mi)
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
	return own_copy;
}

void stabilize_thinlto_names(struct module_info *mi, LLVMModuleRef m, const char *suffixes)
{
	char *own = own_suffix(mi);
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &mi->syms[i];
		const char *x = llvm_suffix(s->name);
		if (!x || (s->flags & SF_ASM_NAME))
			continue; /* asm text names it as it is */
		char *stand_in = own && !strcmp(x, own) ? xstrdup("mtpc") : foreign_suffix(suffixes, x, mi->module_id);
		if (!stand_in)
			continue;
		char *nm = xasprintf("%.*s%s", (int)(x - s->name), s->name, stand_in);
		free(stand_in);
		rename_symbol(mi, m, s, nm);
	}
	free(own);
}

/* A private constant's edit-stable name before the rank among identical
 * definitions is added. */
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

/* A renamed symbol's two names, sorted by the original. */
struct renamed {
	const char *orig, *name;
};

static int cmp_renamed(const void *a, const void *b)
{
	return strcmp(((const struct renamed *)a)->orig, ((const struct renamed *)b)->orig);
}

/* The symbols renamed so far (orig_name set), sorted: heap array, *n set. */
static struct renamed *renamed_table(const struct module_info *mi, int *n)
{
	struct renamed *t = xmalloc((mi->nsyms + 1) * sizeof *t);
	*n = 0;
	for (int i = 0; i < mi->nsyms; i++)
		if (mi->syms[i].orig_name)
			t[(*n)++] = (struct renamed){mi->syms[i].orig_name, mi->syms[i].name};
	if (*n)
		qsort(t, *n, sizeof *t, cmp_renamed);
	return t;
}

/* The name a global goes by in the partitions (the analysis module keeps
 * the original names): its stable one if table has it. */
static const char *current_name(LLVMValueRef g, const struct renamed *table, int n)
{
	size_t len;
	const char *nm = LLVMGetValueName2(g, &len);
	struct renamed key = {len ? nm : "", NULL};
	const struct renamed *r = n ? bsearch(&key, table, n, sizeof *table, cmp_renamed) : NULL;
	return r ? r->name : len ? nm : "?";
}

/* Constant c's text into b, the globals it names by current_name(); sets
 * *waits when one of them is in pending (a private constant whose stable
 * name is not known yet). A constant without operands is printed whole
 * (LLVMPrintValueToString on a constant prints only the constant); an
 * aggregate or expression piecewise, since printing it would name the
 * globals inside by their original names, which an edit renumbers. */
static void constant_text(struct buf *b, LLVMValueRef c, const struct renamed *table, int n,
			  const ptrmap *pending, int *waits)
{
	if (LLVMIsAGlobalValue(c)) {
		if (pending && ptrmap_get(pending, c, 0))
			*waits = 1;
		buf_printf(b, "@%s", current_name(c, table, n));
		return;
	}
	int nops = LLVMGetNumOperands(c);
	if (nops <= 0 || LLVMIsAConstantDataSequential(c)) {
		char *t = LLVMPrintValueToString(c);
		buf_printf(b, "%s", t);
		LLVMDisposeMessage(t);
		return;
	}
	char *type = LLVMPrintTypeToString(LLVMTypeOf(c));
	buf_printf(b, "%s %d", type, (int)LLVMGetValueKind(c));
	LLVMDisposeMessage(type);
	if (LLVMIsAConstantExpr(c)) {
		buf_printf(b, " op%d", (int)LLVMGetConstOpcode(c));
		if (LLVMGetConstOpcode(c) == LLVMGetElementPtr) {
			char *st = LLVMPrintTypeToString(LLVMGetGEPSourceElementType(c));
			buf_printf(b, " %s", st);
			LLVMDisposeMessage(st);
		}
	}
	buf_add(b, "(");
	for (int k = 0; k < nops; k++) {
		buf_add(b, k ? ", " : "");
		constant_text(b, LLVMGetOperand(c, k), table, n, pending, waits);
	}
	buf_add(b, ")");
}

/* The text of a private variable's definition, for its hash: what makes two
 * definitions interchangeable (kind, alignment, section, value, the globals
 * it names by their stable names), without its metadata attachments, which
 * are numbered module-wide. Printed piecewise: LLVMPrintValueToString on a
 * global numbers all of the module's metadata first (with -g, most of the
 * split's analysis time), on a constant only the constant. NULL when it
 * names a pending private constant (*pending: see constant_text). */
static char *private_definition(LLVMValueRef g, const struct renamed *table, int n, const ptrmap *pending)
{
	const char *sec = LLVMGetSection(g);
	LLVMValueRef init = LLVMGetInitializer(g);
	struct buf b = {0};
	int waits = 0;
	char *type = LLVMPrintTypeToString(LLVMGlobalGetValueType(g));
	buf_printf(&b, "%s %s %d %d %d %u [%s] ", LLVMIsGlobalConstant(g) ? "constant" : "global", type,
		   (int)LLVMGetUnnamedAddress(g), (int)LLVMGetThreadLocalMode(g), LLVMIsExternallyInitialized(g),
		   LLVMGetAlignment(g), sec ? sec : "");
	LLVMDisposeMessage(type);
	if (init)
		constant_text(&b, init, table, n, pending, &waits);
	if (waits && pending) {
		free(b.s);
		return NULL;
	}
	return b.s ? b.s : xstrdup("");
}

/* `<name without its trailing .<number>>.k<hash of def>`: heap string;
 * def is freed. */
static char *stable_name(const char *name, char *def)
{
	char hex[MTPC_HASH_HEX_LEN + 1];
	mtpc_hash_hex(def, strlen(def), hex);
	hex[8] = 0;
	free(def);
	size_t len = strlen(name);
	while (len > 0 && name[len - 1] >= '0' && name[len - 1] <= '9')
		len--;
	if (len > 0 && len < strlen(name) && name[len - 1] == '.')
		len--;
	else
		len = strlen(name);
	return xasprintf("%.*s.k%s", (int)len, name, hex);
}

/* Rename the candidates (stable names before ranking, heap; freed):
 * sorted, identical ones sit together in module order, the first keeps the
 * name, the next get .1, .2, ... flag marks the renamed symbols. */
static void rename_ranked(struct module_info *mi, LLVMModuleRef m, struct named *cand, int n, unsigned flag)
{
	if (n)
		qsort(cand, n, sizeof *cand, cmp_named);
	for (int k = 0, rank = 0; k < n; k++) {
		rank = k > 0 && !strcmp(cand[k].name, cand[k - 1].name) ? rank + 1 : 0;
		char *nm = rank ? xasprintf("%s.%d", cand[k].name, rank) : xstrdup(cand[k].name);
		struct sym *s = &mi->syms[cand[k].sym];
		rename_symbol(mi, m, s, nm);
		if (s->orig_name)
			s->flags |= flag;
	}
	for (int k = 0; k < n; k++)
		free(cand[k].name);
}

/* Rounds of stable naming: a definition naming others that get stable
 * names (an array of string literals, an initializer and the destructor it
 * registers) is named after theirs; a deeper nest than this, or a cycle, by
 * what names are known then (stable still, unless an edit renumbers what it
 * names). */
#define NAMING_ROUNDS 4

/* The text a candidate's stable name hashes (private_definition,
 * body_shape): heap, or NULL when it names a candidate still pending. */
typedef char *(*describe_fn)(LLVMValueRef g, const struct renamed *table, int n, const ptrmap *pending);

/* Give the candidates (pending: value -> symbol index + 1) stable names in
 * rounds, each described with the names known after the rounds before;
 * flag marks the renamed symbols. Frees pending. */
static void name_in_rounds(struct module_info *mi, LLVMModuleRef m, ptrmap *pending, describe_fn describe,
			   unsigned flag)
{
	struct named *cand = xmalloc((mi->nsyms + 1) * sizeof *cand);
	for (int round = 0; round <= NAMING_ROUNDS; round++) {
		int nt, n = 0, waiting = 0, last = round == NAMING_ROUNDS;
		struct renamed *table = renamed_table(mi, &nt);
		for (int i = 0; i < mi->nsyms; i++) {
			struct sym *s = &mi->syms[i];
			if (!ptrmap_get(pending, s->v, 0))
				continue;
			char *text = describe(s->v, table, nt, last ? NULL : pending);
			if (text)
				cand[n++] = (struct named){stable_name(s->name, text), i};
			else
				waiting++;
		}
		for (int k = 0; k < n; k++)
			ptrmap_put(pending, mi->syms[cand[k].sym].v, 0);
		free(table);
		rename_ranked(mi, m, cand, n, flag);
		if (!waiting)
			break;
		if (!n) /* a cycle: no round will resolve it, name it now */
			round = NAMING_ROUNDS - 1;
	}
	free(cand);
	ptrmap_free(pending);
}

void stabilize_private_names(struct module_info *mi, LLVMModuleRef m)
{
	ptrmap pending;
	ptrmap_init(&pending);
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &mi->syms[i];
		if (s->kind == SYM_VAR && s->linkage == LLVMPrivateLinkage && s->name[0] && !s->orig_name &&
		    !(s->flags & SF_ASM_NAME) && !LLVMIsDeclaration(s->v))
			ptrmap_put(&pending, s->v, i + 1);
	}
	name_in_rounds(mi, m, &pending, private_definition, 0);
}

/* The shape of function f's body, for its hash: per instruction its opcode
 * and operand count, and of each operand the global it names (a renamed
 * one, e.g. a private constant, by its stable name: table), an integer
 * constant's value, or only what kind of value it is. Printing the body
 * would number the module's metadata; this reads no metadata at all. NULL
 * when it names a function of pending (one whose stable name is not known
 * yet: an initializer names the destructor it registers). */
static char *body_shape(LLVMValueRef f, const struct renamed *table, int ntable, const ptrmap *pending)
{
	struct buf b = {0};
	char *type = LLVMPrintTypeToString(LLVMGlobalGetValueType(f));
	buf_printf(&b, "%s", type);
	LLVMDisposeMessage(type);
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb)) {
		buf_add(&b, "|");
		for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
			int nops = LLVMGetNumOperands(i);
			buf_printf(&b, ";%d/%d", (int)LLVMGetInstructionOpcode(i), nops);
			for (int k = 0; k < nops; k++) {
				LLVMValueRef op = LLVMGetOperand(i, k);
				if (op && LLVMIsAGlobalValue(op)) {
					if (pending && ptrmap_get(pending, op, 0)) {
						free(b.s);
						return NULL;
					}
					buf_printf(&b, " @%s", current_name(op, table, ntable));
				} else if (op && LLVMIsAConstantInt(op) &&
					   LLVMGetIntTypeWidth(LLVMTypeOf(op)) <= 64) {
					buf_printf(&b, " #%llx", LLVMConstIntGetZExtValue(op));
				} else {
					buf_printf(&b, " %d", op ? (int)LLVMGetValueKind(op) : -1);
				}
			}
		}
	}
	return b.s ? b.s : xstrdup("");
}

int numbered_name(const char *name)
{
	size_t len = strlen(name), d = len;
	while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
		d--;
	return d < len && d >= 2 && name[d - 1] == '.';
}

void stabilize_local_names(struct module_info *mi, LLVMModuleRef m)
{
	ptrmap pending;
	ptrmap_init(&pending);
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &mi->syms[i];
		if (s->kind == SYM_FUNC && s->linkage == LLVMInternalLinkage && !s->orig_name &&
		    !(s->flags & SF_ASM_NAME) && !LLVMIsDeclaration(s->v) && numbered_name(s->name))
			ptrmap_put(&pending, s->v, i + 1);
	}
	name_in_rounds(mi, m, &pending, body_shape, SF_STABLE_LOCAL);
}
