/* stable_names.c: see stable_names.h. */
#include "stable_names.h"
#include "buf.h"
#include "hash.h"
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

/* `<name without its trailing .<number>>.k<hash of def>`: heap string. */
static char *private_stable_name(const char *name, LLVMValueRef def_of)
{
	char *def = private_definition(def_of);
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

void stabilize_private_names(struct module_info *mi, LLVMModuleRef m)
{
	struct named *cand = xmalloc((mi->nsyms + 1) * sizeof *cand);
	int n = 0;
	for (int i = 0; i < mi->nsyms; i++) {
		struct sym *s = &mi->syms[i];
		if (s->kind != SYM_VAR || s->linkage != LLVMPrivateLinkage || !s->name[0] || s->orig_name ||
		    (s->flags & SF_ASM_NAME) || LLVMIsDeclaration(s->v))
			continue;
		cand[n++] = (struct named){private_stable_name(s->name, s->v), i};
	}
	/* Sorted, identical definitions sit together in module order: the
	 * first keeps the name, the next get .1, .2, ... */
	if (n)
		qsort(cand, n, sizeof *cand, cmp_named);
	for (int k = 0, rank = 0; k < n; k++) {
		rank = k > 0 && !strcmp(cand[k].name, cand[k - 1].name) ? rank + 1 : 0;
		char *nm = rank ? xasprintf("%s.%d", cand[k].name, rank) : xstrdup(cand[k].name);
		rename_symbol(mi, m, &mi->syms[cand[k].sym], nm);
	}
	for (int k = 0; k < n; k++)
		free(cand[k].name);
	free(cand);
}
