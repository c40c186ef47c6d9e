/* fold.c: equal copies of a carried static folded into one body (fold.h). */
#include "fold.h"
#include "buf.h"
#include "fold_names.h"
#include "hash.h"
#include "ptrmap.h"
#include "util.h"

#include <llvm-c/Comdat.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum state { PENDING, FOLDED, LEFT };
/* What a body's references allow: fold now, wait for a callee, never. */
enum verdict { OK, WAIT, REFUSE };

static const unsigned FN = (unsigned)LLVMAttributeFunctionIndex;

static int is_local(LLVMValueRef g)
{
	LLVMLinkage l = LLVMGetLinkage(g);
	return l == LLVMInternalLinkage || l == LLVMPrivateLinkage;
}

/* Whether the line text[0..len) contains needle. */
static int line_has(const char *text, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(text + i, needle, n))
			return 1;
	return 0;
}

/* A type by its structure: a named struct type's name is the partition's
 * (mtpc_number_struct_types numbers them by first use, llvm_shim.h), so two
 * partitions may give one type two names, and one name to two types.
 * Pointers are opaque: a struct cannot contain itself. */
static void add_type(struct buf *b, LLVMTypeRef t)
{
	LLVMTypeKind k = LLVMGetTypeKind(t);
	if (k == LLVMStructTypeKind && !LLVMIsOpaqueStruct(t)) {
		unsigned n = LLVMCountStructElementTypes(t);
		LLVMTypeRef *el = xmalloc((n + 1) * sizeof *el);
		LLVMGetStructElementTypes(t, el);
		buf_add(b, LLVMIsPackedStruct(t) ? "<{" : "{");
		for (unsigned i = 0; i < n; i++) {
			add_type(b, el[i]);
			buf_addc(b, ',');
		}
		buf_add(b, LLVMIsPackedStruct(t) ? "}>" : "}");
		free(el);
	} else if (k == LLVMArrayTypeKind) {
		buf_printf(b, "[%llu x ", (unsigned long long)LLVMGetArrayLength2(t));
		add_type(b, LLVMGetElementType(t));
		buf_addc(b, ']');
	} else if (k == LLVMVectorTypeKind || k == LLVMScalableVectorTypeKind) {
		buf_printf(b, "<%s%u x ", k == LLVMScalableVectorTypeKind ? "vscale " : "", LLVMGetVectorSize(t));
		add_type(b, LLVMGetElementType(t));
		buf_addc(b, '>');
	} else {
		char *s = LLVMPrintTypeToString(t);
		buf_add(b, s);
		LLVMDisposeMessage(s);
	}
}

/* Printed IR without its metadata: the lines of debug records and debug
 * intrinsics dropped, every "!name", "!12", "!DIExpression(...)" and
 * "!{...}" token and every "#12" attribute group reference removed (their
 * numbers are the module's; the attributes are hashed from the API), each
 * "%name" of a struct type of ctx replaced by its structure (add_type),
 * quoted strings kept as they are. */
static void add_stripped(struct buf *b, const char *text, LLVMContextRef ctx)
{
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
		const char *q = p;
		while (*q == ' ')
			q++;
		if (!strncmp(q, "#dbg_", 5) || line_has(p, len, "@llvm.dbg.")) {
			p += len;
			continue;
		}
		for (size_t i = 0; i < len;) {
			char c = p[i];
			if (c == '"') {
				size_t j = i + 1;
				while (j < len && p[j] != '"')
					j++;
				j = j < len ? j + 1 : len;
				buf_addn(b, p + i, j - i);
				i = j;
			} else if (c == '!') {
				i++;
				while (i < len && (isalnum((unsigned char)p[i]) || strchr("_.$-", p[i])))
					i++;
				if (i < len && (p[i] == '(' || p[i] == '{')) {
					int depth = 0, quoted = 0;
					for (; i < len; i++) {
						if (p[i] == '"')
							quoted = !quoted;
						else if (!quoted && (p[i] == '(' || p[i] == '{'))
							depth++;
						else if (!quoted && (p[i] == ')' || p[i] == '}') && --depth == 0) {
							i++;
							break;
						}
					}
				}
			} else if (c == '%' && i + 1 < len && (isalpha((unsigned char)p[i + 1]) || p[i + 1] == '"')) {
				/* a value's or a named type's name */
				size_t j = i + 1, from, to;
				if (p[j] == '"') {
					for (from = ++j; j < len && p[j] != '"';)
						j++;
					to = j;
					j = j < len ? j + 1 : len;
				} else {
					for (from = j; j < len && (isalnum((unsigned char)p[j]) || strchr("_.$-", p[j]));)
						j++;
					to = j;
				}
				char *name = xasprintf("%.*s", (int)(to - from), p + from);
				LLVMTypeRef t = ctx ? LLVMGetTypeByName2(ctx, name) : NULL;
				if (t)
					add_type(b, t);
				else
					buf_addn(b, p + i, j - i);
				free(name);
				i = j;
			} else if (c == '#' && i + 1 < len && isdigit((unsigned char)p[i + 1])) {
				for (i++; i < len && isdigit((unsigned char)p[i]);)
					i++;
			} else {
				buf_addc(b, c);
				i++;
			}
		}
		p += len;
	}
}

/* The attributes a[0..n) as text; -1 for a kind the C API cannot read
 * (a constant range on the function itself): such a body is left. */
static int add_attrs(struct buf *b, LLVMAttributeRef *a, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		if (LLVMIsStringAttribute(a[k])) {
			unsigned kl, vl;
			const char *kind = LLVMGetStringAttributeKind(a[k], &kl);
			const char *val = LLVMGetStringAttributeValue(a[k], &vl);
			buf_printf(b, " \"%.*s\"=\"%.*s\"", (int)kl, kind, (int)vl, val);
		} else if (LLVMIsTypeAttribute(a[k])) {
			char *t = LLVMPrintTypeToString(LLVMGetTypeAttributeValue(a[k]));
			buf_printf(b, " %u(%s)", LLVMGetEnumAttributeKind(a[k]), t);
			LLVMDisposeMessage(t);
		} else if (LLVMIsEnumAttribute(a[k])) {
			buf_printf(b, " %u=%llu", LLVMGetEnumAttributeKind(a[k]),
				   (unsigned long long)LLVMGetEnumAttributeValue(a[k]));
		} else {
			return -1;
		}
	}
	buf_addc(b, '\n');
	return 0;
}

static int add_attrs_of(struct buf *b, LLVMValueRef v, int call)
{
	unsigned n = call ? LLVMGetCallSiteAttributeCount(v, FN) : LLVMGetAttributeCountAtIndex(v, FN);
	LLVMAttributeRef *a = xmalloc((n + 1) * sizeof *a);
	if (call)
		LLVMGetCallSiteAttributes(v, FN, a);
	else
		LLVMGetAttributesAtIndex(v, FN, a);
	int r = add_attrs(b, a, n);
	free(a);
	return r;
}

struct ctx {
	mtpc_fold_printer print; /* how IR is printed (fold.h) */
	void *print_arg;
	ptrmap index;          /* marked function -> its slot */
	enum state *state;
	LLVMValueRef self;     /* the function being hashed */
	int depth;
};

/* What a reference to v (an operand, or within a constant) allows; the
 * local constants it reaches are printed into b. */
static enum verdict visit_ref(struct ctx *c, struct buf *b, LLVMValueRef v)
{
	if (c->depth > 64)
		return REFUSE;
	if (!v || !LLVMIsAConstant(v)) /* an instruction, argument, block or metadata */
		return OK;
	if (LLVMIsAFunction(v)) {
		if (v == c->self || !is_local(v))
			return OK;
		int k = ptrmap_get(&c->index, v, -1);
		return k >= 0 && c->state[k] == PENDING ? WAIT : REFUSE;
	}
	if (LLVMIsAGlobalVariable(v)) {
		if (!is_local(v))
			return OK;
		if (!LLVMIsGlobalConstant(v) || !LLVMGetInitializer(v))
			return REFUSE;
		char *t = c->print(v, c->print_arg);
		add_stripped(b, t, LLVMGetTypeContext(LLVMTypeOf(v)));
		LLVMDisposeMessage(t);
		c->depth++;
		/* its initializer may hold no local function's address */
		LLVMValueRef self = c->self;
		c->self = NULL;
		enum verdict r = visit_ref(c, b, LLVMGetInitializer(v));
		c->self = self;
		c->depth--;
		return r == WAIT ? REFUSE : r;
	}
	if (LLVMIsAGlobalValue(v))  /* an alias or ifunc */
		return is_local(v) ? REFUSE : OK;
	enum verdict worst = OK;
	int n = LLVMGetNumOperands(v);
	c->depth++;
	for (int k = 0; k < n && worst != REFUSE; k++) {
		enum verdict r = visit_ref(c, b, LLVMGetOperand(v, (unsigned)k));
		if (r > worst)
			worst = r;
	}
	c->depth--;
	return worst;
}

/* The content of f into b: OK, or WAIT / REFUSE (see visit_ref). */
static enum verdict body_content(struct ctx *c, struct buf *b, LLVMValueRef f)
{
	c->self = f;
	if (add_attrs_of(b, f, 0) < 0)
		return REFUSE;
	enum verdict worst = OK;
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
		for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
			if ((LLVMIsACallInst(i) || LLVMIsAInvokeInst(i) || LLVMIsACallBrInst(i)) &&
			    add_attrs_of(b, i, 1) < 0)
				return REFUSE;
			int n = LLVMGetNumOperands(i);
			for (int k = 0; k < n; k++) {
				enum verdict r = visit_ref(c, b, LLVMGetOperand(i, (unsigned)k));
				if (r == REFUSE)
					return REFUSE;
				if (r > worst)
					worst = r;
			}
		}
	if (worst != OK)
		return worst;
	char *t = c->print(f, c->print_arg);
	add_stripped(b, t, LLVMGetTypeContext(LLVMTypeOf(f)));
	LLVMDisposeMessage(t);
	return OK;
}

static void rename_folded(LLVMModuleRef m, LLVMValueRef f, const struct buf *b)
{
	char hex[MTPC_HASH_HEX_LEN + 1];
	mtpc_hash_hex(b->s ? b->s : "", b->len, hex);
	size_t len;
	const char *name = LLVMGetValueName2(f, &len);
	char *nn = xasprintf("%.*s" MTPC_FOLD_SUFFIX "%.*s", (int)len, name, MTPC_FOLD_HEX, hex);
	LLVMSetValueName2(f, nn, strlen(nn));
	LLVMSetLinkage(f, LLVMLinkOnceODRLinkage);
	LLVMSetVisibility(f, LLVMHiddenVisibility);
	LLVMSetComdat(f, LLVMGetOrInsertComdat(m, nn));
	free(nn);
}

/* The C API's printer: numbers the whole module's metadata at each call. */
static char *print_value(LLVMValueRef v, void *arg)
{
	(void)arg;
	return LLVMPrintValueToString(v);
}

int mtpc_fold_marked(LLVMModuleRef m, mtpc_fold_printer print, void *print_arg)
{
	struct ctx c = {.print = print ? print : print_value, .print_arg = print_arg, .depth = 0};
	ptrmap_init(&c.index);
	LLVMValueRef *fs = NULL;
	int n = 0, folded = 0;
	for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
		if (!LLVMGetStringAttributeAtIndex(f, FN, MTPC_FOLD_ATTR, sizeof MTPC_FOLD_ATTR - 1))
			continue;
		LLVMRemoveStringAttributeAtIndex(f, FN, MTPC_FOLD_ATTR, sizeof MTPC_FOLD_ATTR - 1);
		if (LLVMIsDeclaration(f) || !is_local(f))
			continue;
		fs = xrealloc(fs, (size_t)(n + 1) * sizeof *fs);
		ptrmap_put(&c.index, f, n);
		fs[n++] = f;
	}
	c.state = xcalloc((size_t)n + 1, sizeof *c.state);
	/* Callees first: a caller's content names its folded callees' new
	 * names. Bodies in a cycle wait for each other and stay internal. */
	for (int progress = 1; progress;) {
		progress = 0;
		for (int k = 0; k < n; k++) {
			if (c.state[k] != PENDING)
				continue;
			struct buf b = {0};
			enum verdict r = body_content(&c, &b, fs[k]);
			if (r == OK) {
				rename_folded(m, fs[k], &b);
				c.state[k] = FOLDED;
				folded++;
			} else if (r == REFUSE) {
				c.state[k] = LEFT;
			}
			progress |= r != WAIT;
			buf_free(&b);
		}
	}
	free(c.state);
	free(fs);
	ptrmap_free(&c.index);
	return folded;
}
