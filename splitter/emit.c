/* emit.c: see emit.h. */
#include "emit.h"
#include "asm_names.h"
#include "buf.h"
#include "fold_names.h"
#include "llvm_shim.h"
#include "ptrmap.h"
#include "util.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Comdat.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdlib.h>
#include <string.h>

void emit_capture_error(LLVMDiagnosticInfoRef di, void *ctx)
{
	char **msg = ctx;
	if (LLVMGetDiagInfoSeverity(di) != LLVMDSError || *msg)
		return;
	char *d = LLVMGetDiagInfoDescription(di);
	*msg = xstrdup(d);
	LLVMDisposeMessage(d);
}

/* What every promoted name is: hidden, so the merged object can make it
 * local again, and dso_local, so code reaches it directly. */
static void make_hidden(LLVMValueRef v)
{
	LLVMSetVisibility(v, LLVMHiddenVisibility);
	mtpc_set_dso_local(v, 1);
}

static void make_hidden_local_def(LLVMValueRef v)
{
	LLVMSetLinkage(v, LLVMExternalLinkage);
	make_hidden(v);
}

/* Replace an alias or ifunc that this partition does not define by a plain
 * declaration of the same name, and erase the original at once: the module
 * must stay valid at every step, because loading the rest of a lazily read
 * module with debug info runs the verifier (UpgradeDebugInfo) and aborts on a
 * broken one. */
static void erase_alias_or_ifunc(LLVMValueRef g, int is_ifunc)
{
	if (is_ifunc)
		LLVMEraseGlobalIFunc(g);
	else
		mtpc_erase_alias(g);
}

static LLVMValueRef replace_with_declaration(LLVMModuleRef m, LLVMValueRef g, int is_ifunc)
{
	size_t len;
	char *name = xstrdup(LLVMGetValueName2(g, &len));
	LLVMTypeRef vt = LLVMGlobalGetValueType(g);
	LLVMVisibility vis = LLVMGetVisibility(g);
	int dso = mtpc_is_dso_local(g);
	int tls = !is_ifunc && LLVMGetTypeKind(vt) != LLVMFunctionTypeKind && LLVMIsThreadLocal(g);
	LLVMSetValueName2(g, "", 0);
	LLVMValueRef d;
	if (LLVMGetTypeKind(vt) == LLVMFunctionTypeKind) {
		d = LLVMAddFunction(m, name, vt);
	} else {
		d = LLVMAddGlobalInAddressSpace(m, vt, name, LLVMGetPointerAddressSpace(LLVMTypeOf(g)));
		if (tls)
			LLVMSetThreadLocal(d, 1);
	}
	LLVMSetVisibility(d, vis);
	mtpc_set_dso_local(d, dso);
	LLVMReplaceAllUsesWith(g, d);
	erase_alias_or_ifunc(g, is_ifunc);
	free(name);
	return d;
}

/* A definition another object may replace at link time (weak, linkonce,
 * common) is interposable to LLVM, which then never decides that its
 * address differs from another global's. A plain declaration of it would be
 * a distinct, non-interposable object, a fact the unsplit module does not
 * have. extern_weak is the one declaration linkage LLVM treats as
 * interposable; it also lets the address be null, which is a fact less,
 * never one more (the merged object defines the symbol). */
static LLVMValueRef keep_interposable(const struct sym *s, LLVMValueRef d)
{
	if (s->flags & SF_INTERPOSABLE)
		LLVMSetLinkage(d, LLVMExternalWeakLinkage);
	return d;
}

/* Returns the value that now carries the symbol's name. */
static LLVMValueRef make_declaration(LLVMModuleRef m, const struct sym *s, LLVMValueRef v)
{
	switch (s->kind) {
	case SYM_FUNC:
		mtpc_delete_body(v);
		LLVMSetComdat(v, NULL);
		break;
	case SYM_VAR:
		LLVMSetInitializer(v, NULL);
		LLVMSetComdat(v, NULL);
		LLVMGlobalClearMetadata(v);
		LLVMSetLinkage(v, LLVMExternalLinkage);
		break;
	case SYM_ALIAS:
	case SYM_IFUNC:
		return keep_interposable(s, replace_with_declaration(m, v, s->kind == SYM_IFUNC));
	}
	return keep_interposable(s, v);
}

/* Keep the entries of an llvm.used-style array (or ctor/dtor array, whose
 * entries are {priority, function, key}) whose symbol this partition defines,
 * in their original order. */
static void filter_special_array(LLVMModuleRef m, const char *name, int ctor, const ptrmap *index,
				 const unsigned char *member)
{
	LLVMValueRef g = LLVMGetNamedGlobal(m, name);
	if (!g || LLVMIsDeclaration(g))
		return;
	LLVMValueRef init = LLVMGetInitializer(g);
	int n = LLVMGetNumOperands(init);
	LLVMValueRef *keep = xmalloc((n + 1) * sizeof *keep);
	int k = 0;
	for (int i = 0; i < n; i++) {
		LLVMValueRef e = LLVMGetOperand(init, i);
		LLVMValueRef gv = strip_to_global(ctor ? LLVMGetOperand(e, 1) : e);
		int s = gv ? ptrmap_get(index, gv, -1) : -1;
		if (s >= 0 && (ctor ? member[s] == M_OWN : member[s] >= M_CARRY && member[s] != M_COPY))
			keep[k++] = e;
	}
	if (k == n) {
		free(keep);
		return;
	}
	LLVMTypeRef elt = LLVMGetElementType(LLVMTypeOf(init));
	char *section = xstrdup(LLVMGetSection(g) ? LLVMGetSection(g) : "");
	LLVMDeleteGlobal(g);
	if (k) {
		LLVMValueRef arr = LLVMConstArray2(elt, keep, k);
		LLVMValueRef ng = LLVMAddGlobal(m, LLVMTypeOf(arr), name);
		LLVMSetInitializer(ng, arr);
		LLVMSetLinkage(ng, LLVMAppendingLinkage);
		if (*section)
			LLVMSetSection(ng, section);
	}
	free(section);
	free(keep);
}

/* Module asm belongs to one partition, but for its `.lto_set_conditional`
 * lines (asm_set_line), which every partition keeps. */
static void keep_asm_set_lines(LLVMModuleRef m)
{
	size_t len;
	const char *s = LLVMGetModuleInlineAsm(m, &len);
	struct buf keep = {0};
	for (size_t line = 0, end; s && line < len; line = end + 1) {
		const char *nl = memchr(s + line, '\n', len - line);
		end = nl ? (size_t)(nl - s) : len;
		if (asm_set_line(s + line, end - line))
			buf_printf(&keep, "%.*s\n", (int)(end - line), s + line);
	}
	LLVMSetModuleInlineAsm2(m, keep.s ? keep.s : "", keep.len);
	buf_free(&keep);
}

/* m enumerates as the analysed module did, under the names the analysis
 * read (the edit-stable ones are given below): a partition built from a
 * module that differs would put the plan's decisions on the wrong globals.
 * Returns NULL or an error (heap). */
static char *check_enumeration(LLVMValueRef *vals, int n, const struct module_info *mi)
{
	if (n != mi->nsyms)
		return xasprintf("module enumerates differently (%d vs %d globals)", n, mi->nsyms);
	for (int i = 0; i < n; i++) {
		size_t len;
		const char *nm = LLVMGetValueName2(vals[i], &len);
		const char *want = mi->syms[i].orig_name ? mi->syms[i].orig_name : mi->syms[i].name;
		if (strcmp(nm ? nm : "", want) != 0)
			return xasprintf("module enumerates differently at global %d ('%s' vs '%s')", i, nm ? nm : "",
					 want);
	}
	return NULL;
}

/* The module was opened lazily: load the bodies this partition keeps
 * before anything is replaced, so their references resolve to the
 * original globals. Bodies it drops are never read. Returns NULL or an
 * error (heap). */
static char *load_kept_bodies(LLVMValueRef *vals, const struct module_info *mi, const unsigned char *member)
{
	for (int i = 0; i < mi->nsyms; i++) {
		const struct sym *s = &mi->syms[i];
		char *err = NULL;
		if (s->kind == SYM_FUNC && s->role != ROLE_DECL && member[i] >= M_CARRY &&
		    mtpc_materialize(vals[i], &err) < 0) {
			char *r = xasprintf("cannot load %s: %s", s->name, err);
			free(err);
			return r;
		}
	}
	return NULL;
}

/* Debug info of the variables this partition defines, before any of them
 * becomes a declaration (which drops its !dbg): the compile units list
 * only those (mtpc_restrict_cu_lists, llvm_shim.h). */
static void restrict_debug_globals(LLVMModuleRef m, LLVMValueRef *vals, const struct module_info *mi,
				   const unsigned char *member, int p)
{
	LLVMValueRef *defs = xmalloc((mi->nsyms + 1) * sizeof *defs);
	unsigned ndefs = 0;
	for (int i = 0; i < mi->nsyms; i++)
		if (mi->syms[i].kind == SYM_VAR && mi->syms[i].role != ROLE_DECL &&
		    (member[i] == M_OWN || member[i] == M_CARRY))
			defs[ndefs++] = vals[i];
	mtpc_restrict_cu_lists(m, defs, ndefs, p == 0);
	free(defs);
}

/* The llvm.used-style and ctor/dtor arrays keep the entries of what this
 * partition defines: before any symbol changes, while each still has its
 * index. */
static void filter_special_arrays(LLVMModuleRef m, LLVMValueRef *vals, int n, const unsigned char *member)
{
	ptrmap index;
	ptrmap_init(&index);
	for (int i = 0; i < n; i++)
		ptrmap_put(&index, vals[i], i);
	filter_special_array(m, "llvm.used", 0, &index, member);
	filter_special_array(m, "llvm.compiler.used", 0, &index, member);
	filter_special_array(m, "llvm.global_ctors", 1, &index, member);
	filter_special_array(m, "llvm.global_dtors", 1, &index, member);
	ptrmap_free(&index);
}

/* Make symbol i (value v) what partition p's plan says it is. */
static void place_symbol(LLVMModuleRef m, const struct module_info *mi, const struct split_plan *plan, int p,
			 int i, LLVMValueRef v)
{
	const struct sym *s = &mi->syms[i];
	if (s->role == ROLE_SPECIAL) {
		/* Other llvm.* globals (annotations, embedded bitcode): partition 0 only. */
		if (p != 0 && strcmp(s->name, "llvm.used") && strcmp(s->name, "llvm.compiler.used") &&
		    strcmp(s->name, "llvm.global_ctors") && strcmp(s->name, "llvm.global_dtors") &&
		    LLVMGetNamedGlobal(m, s->name) == v)
			LLVMDeleteGlobal(v);
		return;
	}
	if (s->role == ROLE_DECL)
		return;
	const char *promoted = plan->new_name[i];
	if (promoted)
		LLVMSetValueName2(v, promoted, strlen(promoted));
	switch ((enum member)plan->member[p][i]) {
	case M_OWN:
		if (promoted)
			make_hidden_local_def(v);
		else if (plan->keep[i] && s->linkage == LLVMLinkOnceODRLinkage)
			LLVMSetLinkage(v, LLVMWeakODRLinkage);
		else if (plan->keep[i] && s->linkage == LLVMLinkOnceAnyLinkage)
			LLVMSetLinkage(v, LLVMWeakAnyLinkage);
		break;
	case M_CARRY:
		if (promoted && s->kind == SYM_FUNC) {
			/* A static several partitions carry (partition.c). */
			LLVMSetLinkage(v, LLVMLinkOnceODRLinkage);
			make_hidden(v);
			LLVMSetComdat(v, LLVMGetOrInsertComdat(m, promoted));
		} else if (plan->fold && plan->fold[i]) {
			/* Each carrier's own copy: equal ones keep one body
			 * (common/fold_names.h). */
			LLVMAddAttributeAtIndex(v, LLVMAttributeFunctionIndex,
						LLVMCreateStringAttribute(LLVMGetModuleContext(m), MTPC_FOLD_ATTR,
									  sizeof MTPC_FOLD_ATTR - 1, "", 0));
		}
		break;
	case M_COPY:
		LLVMSetLinkage(v, LLVMAvailableExternallyLinkage);
		LLVMSetComdat(v, NULL);
		if (promoted)
			make_hidden(v);
		break;
	case M_DECL:
		v = make_declaration(m, s, v);
		if (promoted)
			make_hidden(v);
		break;
	case M_NONE:
		if (s->kind == SYM_ALIAS || s->kind == SYM_IFUNC) {
			if (LLVMGetFirstUse(v))
				keep_interposable(s, replace_with_declaration(m, v, s->kind == SYM_IFUNC));
			else
				erase_alias_or_ifunc(v, s->kind == SYM_IFUNC);
		} else {
			make_declaration(m, s, v);
		}
		break;
	}
}

/* After every symbol is placed: load the rest (what the lazy module did
 * not read yet), keep the asm that is not p's, drop what nothing uses any
 * more (GlobalDCE) and put the declarations and private variables in a
 * canonical order (mtpc_sort_globals). Returns
 * NULL or an error (heap). */
static char *clean_module(LLVMModuleRef m, const struct split_plan *plan, int p)
{
	char *merr = NULL;
	if (mtpc_materialize_all(m, &merr) < 0) {
		char *r = xasprintf("cannot load the module: %s", merr);
		free(merr);
		return r;
	}
	if (p != plan->asm_partition)
		keep_asm_set_lines(m);
	LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err = LLVMRunPasses(m, "globaldce", NULL, pbo);
	LLVMDisposePassBuilderOptions(pbo);
	if (err) {
		char *msg = LLVMGetErrorMessage(err);
		char *r = xasprintf("globaldce: %s", msg);
		LLVMDisposeErrorMessage(msg);
		return r;
	}
	mtpc_sort_globals(m);
	mtpc_number_struct_types(m);
	return NULL;
}

/* Turn m into partition p (emit_partition). Returns NULL or an error (heap). */
static char *transform(LLVMModuleRef m, const struct module_info *mi, const struct split_plan *plan, int p)
{
	LLVMValueRef *vals;
	int n = sym_enumerate(m, &vals);
	char *err = check_enumeration(vals, n, mi);
	if (!err) {
		for (int i = 0; i < n; i++)
			if (mi->syms[i].orig_name)
				LLVMSetValueName2(vals[i], mi->syms[i].name, strlen(mi->syms[i].name));
		err = load_kept_bodies(vals, mi, plan->member[p]);
	}
	if (err) {
		free(vals);
		return err;
	}
	restrict_debug_globals(m, vals, mi, plan->member[p], p);
	filter_special_arrays(m, vals, n, plan->member[p]);
	for (int i = 0; i < n; i++)
		place_symbol(m, mi, plan, p, i, vals[i]);
	free(vals);
	return clean_module(m, plan, p);
}

/* One debug-info map of partition p from make (mtpc_placeholder_checksums,
 * mtpc_virtual_lines) into *into. Returns NULL or an error (heap). */
static char *take_debug_map(char *(*make)(LLVMModuleRef, char **), LLVMModuleRef m, int p, const char *what,
			    char **into)
{
	char *e = NULL;
	*into = make(m, &e);
	if (*into)
		return NULL;
	char *r = xasprintf("partition %d: %s: %s", p, what, e ? e : "failed");
	free(e);
	return r;
}

/* After transform(): verify m, take the debug-info maps debug asks for,
 * and serialize it into out. Returns NULL or an error (heap). */
static char *finish_partition(LLVMModuleRef m, int p, int verify, int debug, struct emitted *out)
{
	char *err = NULL;
	if (verify) {
		char *msg = NULL;
		if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
			char *nl = strchr(msg, '\n');
			if (nl)
				*nl = 0;
			err = xasprintf("partition %d fails the LLVM verifier: %s", p, msg);
		}
		LLVMDisposeMessage(msg);
		if (err)
			return err;
	}
	if ((debug & EMIT_PLACEHOLDER_CHECKSUMS) &&
	    (err = take_debug_map(mtpc_placeholder_checksums, m, p, "placeholder checksums", &out->checksums)))
		return err;
	if ((debug & EMIT_VIRTUAL_LINES) &&
	    (err = take_debug_map(mtpc_virtual_lines, m, p, "virtual lines", &out->lines)))
		return err;
	LLVMMemoryBufferRef ob = LLVMWriteBitcodeToMemoryBuffer(m);
	out->len = LLVMGetBufferSize(ob);
	out->data = xmalloc(out->len);
	memcpy(out->data, LLVMGetBufferStart(ob), out->len);
	LLVMDisposeMemoryBuffer(ob);
	return NULL;
}

char *emit_partition(LLVMModuleRef m, const struct emit_job *job, int p, struct emitted *out)
{
	char *err = transform(m, job->mi, job->plan, p);
	return err ? err : finish_partition(m, p, job->verify, job->debug, out);
}

int emit_finish_run(char **errors, struct emitted *out, int n, int rc, char **error)
{
	*error = NULL;
	for (int p = 0; p < n; p++) {
		if (errors[p] && !*error)
			*error = errors[p];
		else
			free(errors[p]);
	}
	free(errors);
	if (!*error)
		return rc;
	for (int p = 0; p < n; p++) {
		free(out[p].data);
		free(out[p].checksums);
		free(out[p].lines);
		out[p].data = out[p].checksums = out[p].lines = NULL;
	}
	return -1;
}

