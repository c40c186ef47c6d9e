/* join.c: see join.h. */
#include "join.h"
#include "llvm_shim.h"
#include "util.h"

#include <jansson.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdlib.h>
#include <string.h>

/* What the original module said about one named global. */
struct orig_sym {
	char *name;
	LLVMLinkage linkage;
	LLVMVisibility visibility;
	LLVMUnnamedAddr unnamed_addr;
	int dso_local;
};

struct orig_table {
	struct orig_sym *v;
	size_t n;
};

static int cmp_orig(const void *a, const void *b)
{
	return strcmp(((const struct orig_sym *)a)->name, ((const struct orig_sym *)b)->name);
}

static const struct orig_sym *orig_find(const struct orig_table *t, const char *name)
{
	struct orig_sym key = {.name = (char *)name};
	return t->n ? bsearch(&key, t->v, t->n, sizeof *t->v, cmp_orig) : NULL;
}

static void orig_add(struct orig_table *t, LLVMValueRef g)
{
	size_t len;
	const char *name = LLVMGetValueName2(g, &len);
	if (!len)
		return;
	t->v = xrealloc(t->v, (t->n + 1) * sizeof *t->v);
	t->v[t->n++] = (struct orig_sym){xstrdup(name), LLVMGetLinkage(g), LLVMGetVisibility(g),
					 LLVMGetUnnamedAddress(g), mtpc_is_dso_local(g)};
}

/* The names, linkages and visibilities of the original module's globals,
 * read lazily (no function body is loaded), in a context of its own. */
static int read_original(const char *path, struct orig_table *t, char **error)
{
	LLVMMemoryBufferRef mb;
	char *msg = NULL;
	if (LLVMCreateMemoryBufferWithContentsOfFile(path, &mb, &msg)) {
		*error = xasprintf("%s: %s", path, msg);
		LLVMDisposeMessage(msg);
		return -1;
	}
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m;
	if (LLVMGetBitcodeModuleInContext2(ctx, mb, &m)) {
		*error = xasprintf("%s: not LLVM bitcode this LLVM can read", path);
		LLVMDisposeMemoryBuffer(mb);
		LLVMContextDispose(ctx);
		return -1;
	}
	for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
		orig_add(t, f);
	for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g))
		orig_add(t, g);
	for (LLVMValueRef a = LLVMGetFirstGlobalAlias(m); a; a = LLVMGetNextGlobalAlias(a))
		orig_add(t, a);
	for (LLVMValueRef i = LLVMGetFirstGlobalIFunc(m); i; i = LLVMGetNextGlobalIFunc(i))
		orig_add(t, i);
	LLVMDisposeModule(m); /* owns mb */
	LLVMContextDispose(ctx);
	if (t->n)
		qsort(t->v, t->n, sizeof *t->v, cmp_orig);
	return 0;
}

static LLVMValueRef named(LLVMModuleRef m, const char *name)
{
	LLVMValueRef v = LLVMGetNamedFunction(m, name);
	if (!v)
		v = LLVMGetNamedGlobal(m, name);
	if (!v)
		v = LLVMGetNamedGlobalAlias(m, name, strlen(name));
	if (!v)
		v = LLVMGetNamedGlobalIFunc(m, name, strlen(name));
	return v;
}

/* A global of the joined module as the original had it: its linkage (an
 * owner the split made weak_odr is linkonce_odr again), visibility,
 * dso_local and unnamed_addr. The last matters: a partition's GlobalOpt saw
 * no comparison of an address that another partition compares, and marked
 * it insignificant; the linker's identical code folding would then merge
 * two functions whose addresses the program tells apart. Declarations keep
 * what the partitions gave them. */
static void restore(LLVMValueRef v, const struct orig_sym *o)
{
	if (LLVMIsDeclaration(v) && !LLVMIsAGlobalAlias(v))
		return;
	if (LLVMGetLinkage(v) != o->linkage)
		LLVMSetLinkage(v, o->linkage);
	if (!LLVMIsAGlobalAlias(v) && !LLVMIsAGlobalIFunc(v))
		LLVMSetUnnamedAddress(v, o->unnamed_addr);
	if (o->linkage == LLVMInternalLinkage || o->linkage == LLVMPrivateLinkage)
		LLVMSetVisibility(v, LLVMDefaultVisibility);
	else
		LLVMSetVisibility(v, o->visibility);
	mtpc_set_dso_local(v, o->dso_local);
}

/* Give the split's promotions back their original names (plan.json's
 * "promoted": from the original name to the partitions' one) and linkage.
 * A private constant keeps its edit-stable name (its "original" says which
 * global of the original it is; private names never reach the object), an
 * unnamed global is unnamed and local again: left hidden and global, two
 * objects with the same literal would both define its name (pugixml's and
 * double-conversion's tests through the compile split: "duplicate symbol:
 * .str.k<hash>"). A numbered local function gets its original name back
 * (its "original"; those never promoted are in "renamed"): that one is in
 * the object's symbol table, in backtraces and debuggers. */
static int unpromote(LLVMModuleRef m, const char *plan_path, const struct orig_table *orig, char **error)
{
	json_error_t jerr;
	json_t *plan = json_load_file(plan_path, 0, &jerr);
	if (!plan) {
		*error = xasprintf("%s: %s", plan_path, jerr.text);
		return -1;
	}
	json_t *promoted = json_object_get(plan, "promoted");
	for (size_t i = 0; i < json_array_size(promoted); i++) {
		json_t *p = json_array_get(promoted, i);
		const char *from = json_string_value(json_object_get(p, "from"));
		const char *to = json_string_value(json_object_get(p, "to"));
		const char *original = json_string_value(json_object_get(p, "original"));
		LLVMValueRef v = from && to ? named(m, to) : NULL;
		if (!v)
			continue; /* inlined everywhere and dropped */
		if (original && !*original) {
			LLVMSetValueName2(v, "", 0);
			LLVMSetLinkage(v, LLVMIsAFunction(v) ? LLVMInternalLinkage : LLVMPrivateLinkage);
			LLVMSetVisibility(v, LLVMDefaultVisibility);
			continue;
		}
		const struct orig_sym *o = orig_find(orig, original ? original : from);
		const char *name = original && o && o->linkage != LLVMPrivateLinkage ? original : from;
		if (strcmp(name, to)) {
			if (*name && named(m, name)) {
				*error = xasprintf("%s: %s and its promotion %s are both in the joined module", plan_path,
						   name, to);
				json_decref(plan);
				return -1;
			}
			LLVMSetValueName2(v, name, strlen(name));
		}
		if (o)
			restore(v, o);
	}
	json_t *renamed = json_object_get(plan, "renamed");
	for (size_t i = 0; i < json_array_size(renamed); i++) {
		json_t *r = json_array_get(renamed, i);
		const char *to = json_string_value(json_object_get(r, "to"));
		const char *original = json_string_value(json_object_get(r, "original"));
		LLVMValueRef v = to && original ? named(m, to) : NULL;
		if (!v)
			continue; /* inlined everywhere and dropped */
		if (named(m, original)) {
			*error = xasprintf("%s: %s and its edit-stable name %s are both in the joined module", plan_path,
					   original, to);
			json_decref(plan);
			return -1;
		}
		LLVMSetValueName2(v, original, strlen(original));
	}
	json_decref(plan);
	return 0;
}

/* The join's inliner. A partition's pre-link inliner saw every call whose
 * callee had a body in that partition (its own function or an
 * available_externally copy) and decided it; a call to a function that was
 * only declared there (defined in another partition, no copy) it could not
 * see at all, where the unsplit compile's inliner would have weighed it
 * (Duktape: a small API function called from a hundred places in other
 * partitions stayed a call from each, and the split backend, with the
 * callee again elsewhere, did not recover it either). So the join runs the
 * inliner once more on the whole module, for those calls only: every call
 * the partition decided is marked noinline for that run (and with
 * JOIN_SEEN, which says the mark is the join's), so the inliner passes it
 * over at the cost of an attribute test, and the marks are taken off after.
 * A call the program itself marked noinline is left as it is. */
static const char JOIN_SEEN[] = "mtpc-join-seen";

/* The inliner as the pre-link pipeline runs it, bottom-up over the call
 * graph with each function cleaned up before its callers weigh it (the
 * clean-up the unsplit pipeline interleaves, in short: without it a callee
 * inlined here stays as big as its body before the constants of the call
 * site folded, and fewer of the calls above it are inlined: Duktape ran
 * 1.3% more instructions than plain ThinLTO with the inliner alone, 0.3%
 * with this). Only the SCCs where something was inlined are cleaned up
 * (mtpc_join_inline; the textual pipeline
 * "cgscc(inline,function(<cleanup>))" cleans every function, and made the
 * join of SQLite 1.79 s where this takes 1.56 s, Duktape's 1.0-1.3 s where
 * this takes 0.8 s, the same bytes of program). The cost is serial: the
 * join without it takes about 0.45 s (SQLite) and 0.15 s (Duktape). */
#define JOIN_CLEANUP "sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg"
/* What must see the whole module (step 4 of join.h). */
#define JOIN_WHOLE "globalopt,globaldce,constmerge"

static int is_call(LLVMValueRef i)
{
	return LLVMIsACallInst(i) || LLVMIsAInvokeInst(i);
}

/* Mark the calls of partition p's own functions that p's inliner saw, and
 * those to alwaysinline functions it did not see: the join's inliner would
 * inline those whatever their size, and its short clean-up is not the
 * function passes the unsplit pipeline runs on the caller after inlining
 * them (zstd's match finders: an alwaysinline search of about 1,000 lines
 * of IR behind 36 small wrappers; inlined at the join, the hottest wrapper
 * ran 2.4% more instructions than the unsplit compile's). Left as calls, the
 * ThinLTO backend inlines them and runs its whole pipeline on the caller
 * (a link's split gives its partitions copies of them, partition.c). */
static void mark_seen_calls(LLVMModuleRef p)
{
	LLVMContextRef ctx = LLVMGetModuleContext(p);
	unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
	unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
	LLVMAttributeRef ni = LLVMCreateEnumAttribute(ctx, noinline, 0);
	LLVMAttributeRef seen = LLVMCreateStringAttribute(ctx, JOIN_SEEN, sizeof JOIN_SEEN - 1, "", 0);
	for (LLVMValueRef f = LLVMGetFirstFunction(p); f; f = LLVMGetNextFunction(f)) {
		if (LLVMIsDeclaration(f) || LLVMGetLinkage(f) == LLVMAvailableExternallyLinkage)
			continue;
		for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
			for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
				if (!is_call(i))
					continue;
				LLVMValueRef callee = LLVMGetCalledValue(i);
				if (!LLVMIsAFunction(callee) ||
				    LLVMGetCallSiteEnumAttribute(i, LLVMAttributeFunctionIndex, noinline))
					continue;
				if (LLVMIsDeclaration(callee) &&
				    !LLVMGetEnumAttributeAtIndex(callee, LLVMAttributeFunctionIndex, always))
					continue;
				LLVMAddCallSiteAttribute(i, LLVMAttributeFunctionIndex, ni);
				LLVMAddCallSiteAttribute(i, LLVMAttributeFunctionIndex, seen);
			}
	}
}

/* Take the join's marks off every call of m (those inlined went with
 * their callers' copies: the marks travel with the calls). */
static void unmark_seen_calls(LLVMModuleRef m)
{
	unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
	for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
		for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
			for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
				if (is_call(i) && LLVMGetCallSiteStringAttribute(i, LLVMAttributeFunctionIndex,
										 JOIN_SEEN, sizeof JOIN_SEEN - 1)) {
					LLVMRemoveCallSiteStringAttribute(i, LLVMAttributeFunctionIndex, JOIN_SEEN,
									  sizeof JOIN_SEEN - 1);
					LLVMRemoveCallSiteEnumAttribute(i, LLVMAttributeFunctionIndex, noinline);
				}
}

static LLVMModuleRef load(LLVMContextRef ctx, const char *path, char **error)
{
	LLVMMemoryBufferRef mb;
	char *msg = NULL;
	if (LLVMCreateMemoryBufferWithContentsOfFile(path, &mb, &msg)) {
		*error = xasprintf("%s: %s", path, msg);
		LLVMDisposeMessage(msg);
		return NULL;
	}
	LLVMModuleRef m = NULL;
	if (LLVMParseBitcodeInContext2(ctx, mb, &m))
		*error = xasprintf("%s: not LLVM bitcode this LLVM can read", path);
	LLVMDisposeMemoryBuffer(mb);
	return m;
}

int join_partitions(const char *original, const char *plan, char *const *parts, int n, const char *out,
		    int inline_calls, char **error)
{
	*error = NULL;
	struct orig_table orig = {0};
	if (n < 1) {
		*error = xstrdup("no partitions to join");
		return -1;
	}
	if (read_original(original, &orig, error) < 0)
		return -1;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m = load(ctx, parts[0], error);
	if (m && inline_calls)
		mark_seen_calls(m);
	for (int i = 1; m && i < n; i++) {
		LLVMModuleRef p = load(ctx, parts[i], error);
		if (p && inline_calls)
			mark_seen_calls(p);
		if (!p || LLVMLinkModules2(m, p)) { /* consumes p */
			if (!*error)
				*error = xasprintf("%s: cannot be linked with the other partitions", parts[i]);
			LLVMDisposeModule(m);
			m = NULL;
		}
	}
	int r = m ? unpromote(m, plan, &orig, error) : -1;
	if (r == 0) {
		/* Everything the split touched, back as the original had it. */
		for (size_t i = 0; i < orig.n; i++) {
			LLVMValueRef v = named(m, orig.v[i].name);
			if (v)
				restore(v, &orig.v[i]);
		}
		/* What the pre-link pipeline does with the whole module and a
		 * partition could not: the inliner on the calls no partition
		 * saw (above; with the statics internal again, so that one
		 * inlined into its every caller is gone), GlobalOpt's facts
		 * about addresses and
		 * statics (an address no code of the module compares is
		 * local_unnamed_addr, which lets the thin link hide a
		 * linkonce_odr function rather than export it from a shared
		 * library; a promoted static never written is constant again),
		 * then drop statics inlined into every caller and merge the
		 * partitions' copies of small constants. */
		LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
		LLVMErrorRef err = NULL;
		char *why = NULL;
		if (inline_calls && mtpc_join_inline(m, JOIN_CLEANUP, &why) < 0) {
			*error = xasprintf("joining into %s: %s", out, why);
			free(why);
			r = -1;
		} else {
			err = LLVMRunPasses(m, JOIN_WHOLE, NULL, pbo);
		}
		LLVMDisposePassBuilderOptions(pbo);
		if (inline_calls)
			unmark_seen_calls(m);
		if (err) {
			char *msg = LLVMGetErrorMessage(err);
			*error = xasprintf("joining into %s: %s", out, msg);
			LLVMDisposeErrorMessage(msg);
			r = -1;
		}
	}
	if (r == 0) {
		char *msg = NULL;
		size_t len = 0;
		char *bytes = mtpc_thinlto_bitcode(m, &len, &msg);
		if (!bytes) {
			*error = xasprintf("writing %s: %s", out, msg ? msg : "failed");
			free(msg);
			r = -1;
		} else if (mtpc_write_file(out, bytes, len, MTPC_WRITE_IF_CHANGED) < 0) {
			*error = xasprintf("%s: cannot write", out);
			r = -1;
		}
		free(bytes);
	}
	if (m)
		LLVMDisposeModule(m);
	LLVMContextDispose(ctx);
	for (size_t i = 0; i < orig.n; i++)
		free(orig.v[i].name);
	free(orig.v);
	return r;
}
