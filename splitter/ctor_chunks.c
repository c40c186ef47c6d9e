/* ctor_chunks.c: a module constructor cut into chunks (ctor_chunks.h says
 * why and when). LLVM-C, but for a chunk's subprogram (llvm_shim.h): the
 * calls are moved, not copied, so nothing about them (attributes, calling
 * convention) can change; with debug info, each keeps its line and column
 * in its chunk's subprogram. */
#include "ctor_chunks.h"
#include "buf.h"
#include "hash.h"
#include "llvm_shim.h"
#include "stable_names.h"
#include "util.h"

#include <llvm-c/DebugInfo.h>

#include <stdlib.h>
#include <string.h>

static int is_local(LLVMValueRef g)
{
	LLVMLinkage l = LLVMGetLinkage(g);
	return l == LLVMInternalLinkage || l == LLVMPrivateLinkage;
}

static int use_count(LLVMValueRef v)
{
	int n = 0;
	for (LLVMUseRef u = LLVMGetFirstUse(v); u && n < 2; u = LLVMGetNextUse(u))
		n++;
	return n;
}

/* The instructions of f. */
static long cost_of(LLVMValueRef f)
{
	long n = 0;
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
		for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
			n++;
	return n;
}

/* The hash of f's shape: its opcodes and the names of the globals it uses
 * that an edit elsewhere does not renumber (hex, MTPC_HASH_HEX_LEN). */
static void shape_hash(LLVMValueRef f, char hex[MTPC_HASH_HEX_LEN + 1])
{
	struct buf b = {0};
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
		for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
			buf_printf(&b, ";%d", (int)LLVMGetInstructionOpcode(i));
			int n = LLVMGetNumOperands(i);
			for (int k = 0; k < n; k++) {
				LLVMValueRef op = LLVMGetOperand(i, (unsigned)k);
				size_t len;
				const char *name = op && LLVMIsAGlobalValue(op) ? LLVMGetValueName2(op, &len) : NULL;
				if (name && !numbered_name(name))
					buf_printf(&b, " @%.*s", (int)len, name);
			}
		}
	mtpc_hash_hex(b.s ? b.s : "", b.len, hex);
	buf_free(&b);
}

/* The callee of call instruction i if the cut may move i: a direct call
 * without arguments or bundles, returning nothing, to an internal function
 * defined here and called from nowhere else; NULL otherwise. */
static LLVMValueRef movable_call(LLVMValueRef i, LLVMValueRef ctor)
{
	if (!LLVMIsACallInst(i) || LLVMGetNumArgOperands(i) != 0 || LLVMGetNumOperandBundles(i) != 0)
		return NULL;
	LLVMValueRef f = LLVMGetCalledValue(i);
	if (!f || !LLVMIsAFunction(f) || f == ctor || LLVMIsDeclaration(f) || !is_local(f) || use_count(f) != 1)
		return NULL;
	LLVMTypeRef t = LLVMGlobalGetValueType(f);
	if (LLVMGetTypeKind(LLVMGetReturnType(t)) != LLVMVoidTypeKind || LLVMIsFunctionVarArg(t))
		return NULL;
	return f;
}

/* A name for a new chunk, unused in m (heap). */
static char *chunk_name(LLVMModuleRef m, LLVMValueRef ctor, const char *hex)
{
	size_t len;
	const char *base = LLVMGetValueName2(ctor, &len);
	char *name = xasprintf("%.*s.c%.8s", (int)len, base, hex);
	for (int k = 1; LLVMGetNamedFunction(m, name); k++) {
		free(name);
		name = xasprintf("%.*s.c%.8s.%d", (int)len, base, hex, k);
	}
	return name;
}

/* A new internal function like ctor (type, attributes, section, a copy of
 * its subprogram), whose body is calls[0..n) moved there in order, then
 * ret. */
static LLVMValueRef make_chunk(LLVMModuleRef m, LLVMBuilderRef b, LLVMValueRef ctor, LLVMValueRef *calls, int n,
			       const char *hex)
{
	char *name = chunk_name(m, ctor, hex);
	LLVMValueRef g = LLVMAddFunction(m, name, LLVMGlobalGetValueType(ctor));
	LLVMMetadataRef sp = mtpc_copy_subprogram(ctor, g, name);
	free(name);
	LLVMSetLinkage(g, LLVMInternalLinkage);
	LLVMSetUnnamedAddress(g, LLVMGetUnnamedAddress(ctor));
	LLVMSetFunctionCallConv(g, LLVMGetFunctionCallConv(ctor));
	if (LLVMGetSection(ctor))
		LLVMSetSection(g, LLVMGetSection(ctor));
	unsigned na = LLVMGetAttributeCountAtIndex(ctor, LLVMAttributeFunctionIndex);
	LLVMAttributeRef *attrs = xmalloc((na + 1) * sizeof *attrs);
	LLVMGetAttributesAtIndex(ctor, LLVMAttributeFunctionIndex, attrs);
	for (unsigned k = 0; k < na; k++)
		LLVMAddAttributeAtIndex(g, LLVMAttributeFunctionIndex, attrs[k]);
	free(attrs);
	LLVMContextRef ctx = LLVMGetModuleContext(m);
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, g, ""));
	for (int k = 0; k < n; k++) {
		LLVMMetadataRef loc = sp ? LLVMInstructionGetDebugLoc(calls[k]) : NULL;
		LLVMInstructionRemoveFromParent(calls[k]);
		LLVMInsertIntoBuilder(b, calls[k]);
		if (loc)
			LLVMInstructionSetDebugLoc(calls[k], LLVMDIBuilderCreateDebugLocation(
				ctx, LLVMDILocationGetLine(loc), LLVMDILocationGetColumn(loc), sp, NULL));
	}
	LLVMBuildRetVoid(b);
	return g;
}

/* Whether call i's location (if any) may move to a chunk: with debug info
 * (sp, the constructor's subprogram), a location in sp itself. */
static int movable_location(LLVMValueRef i, LLVMMetadataRef sp)
{
	LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(i);
	if (!sp)
		return !loc;
	return loc && LLVMDILocationGetScope(loc) == sp && !LLVMDILocationGetInlinedAt(loc);
}

/* Cut ctor if it is such a constructor; the chunks made. */
static int cut(LLVMModuleRef m, LLVMBuilderRef b, LLVMValueRef ctor, long target, int debug)
{
	if (!LLVMIsAFunction(ctor) || LLVMIsDeclaration(ctor) || !is_local(ctor) || use_count(ctor) != 1 ||
	    LLVMCountBasicBlocks(ctor) != 1)
		return 0;
	LLVMValueRef ret = LLVMGetLastInstruction(LLVMGetEntryBasicBlock(ctor));
	if (!ret || LLVMGetInstructionOpcode(ret) != LLVMRet || LLVMGetNumOperands(ret) != 0)
		return 0;
	int n = 0;
	long total = 0;
	LLVMMetadataRef sp = LLVMGetSubprogram(ctor);
	if (!sp && debug)
		return 0;
	for (LLVMValueRef i = LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(ctor)); i != ret;
	     i = LLVMGetNextInstruction(i)) {
		LLVMValueRef f = movable_call(i, ctor);
		if (!f || !movable_location(i, sp))
			return 0;
		total += cost_of(f);
		n++;
	}
	if (n < 8 || total < 2 * target)
		return 0;
	LLVMValueRef *calls = xmalloc((size_t)n * sizeof *calls), *chunks = xmalloc((size_t)n * sizeof *chunks);
	char (*hex)[MTPC_HASH_HEX_LEN + 1] = xmalloc((size_t)n * sizeof *hex);
	n = 0;
	for (LLVMValueRef i = LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(ctor)); i != ret;
	     i = LLVMGetNextInstruction(i)) {
		calls[n] = i;
		shape_hash(LLVMGetCalledValue(i), hex[n]);
		n++;
	}
	/* Boundaries from the content (ctor_chunks.h), decided before
	 * anything moves. */
	int nchunks = 0, first = 0;
	long acc = 0;
	int *starts = xmalloc((size_t)(n + 1) * sizeof *starts);
	for (int k = 0; k < n; k++) {
		acc += cost_of(LLVMGetCalledValue(calls[k]));
		int mark = strchr("048c", hex[k][MTPC_HASH_HEX_LEN - 1]) != NULL;
		if (k == n - 1 || (acc >= target / 2 && mark) || acc >= 2 * target) {
			starts[nchunks++] = first;
			first = k + 1;
			acc = 0;
		}
	}
	starts[nchunks] = n;
	int made = 0;
	if (nchunks >= 2) {
		/* each chunk's call where its first call was, at its location */
		LLVMMetadataRef *locs = xmalloc((size_t)nchunks * sizeof *locs);
		for (int c = 0; c < nchunks; c++) {
			locs[c] = LLVMInstructionGetDebugLoc(calls[starts[c]]);
			chunks[c] = make_chunk(m, b, ctor, calls + starts[c], starts[c + 1] - starts[c], hex[starts[c]]);
		}
		LLVMTypeRef t = LLVMGlobalGetValueType(ctor);
		LLVMPositionBuilderBefore(b, ret);
		for (int c = 0; c < nchunks; c++) {
			LLVMValueRef call = LLVMBuildCall2(b, t, chunks[c], NULL, 0, "");
			LLVMSetInstructionCallConv(call, LLVMGetFunctionCallConv(chunks[c]));
			if (locs[c])
				LLVMInstructionSetDebugLoc(call, locs[c]);
		}
		free(locs);
		made = nchunks;
	}
	free(starts);
	free(hex);
	free(chunks);
	free(calls);
	return made;
}

int ctor_chunks(LLVMModuleRef m)
{
	int debug = LLVMGetNamedMetadataNumOperands(m, "llvm.dbg.cu") > 0;
	LLVMValueRef ctors = LLVMGetNamedGlobal(m, "llvm.global_ctors");
	LLVMValueRef init = ctors ? LLVMGetInitializer(ctors) : NULL;
	if (!init || !LLVMIsAConstantArray(init))
		return 0;
	/* 1/64 of the module, as a power of two (an edit seldom moves it):
	 * the constructor's unit takes chunks up to 1/16 of it (units.c). */
	long total = 0, target = 32;
	for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
		total += cost_of(f);
	while (target * 2 <= total / 64)
		target *= 2;
	LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(m));
	int made = 0, n = LLVMGetNumOperands(init);
	for (int k = 0; k < n; k++) {
		LLVMValueRef entry = LLVMGetOperand(init, (unsigned)k);
		if (entry && LLVMIsAConstantStruct(entry) && LLVMGetNumOperands(entry) >= 2)
			made += cut(m, b, LLVMGetOperand(entry, 1), target, debug);
	}
	LLVMDisposeBuilder(b);
	return made;
}
