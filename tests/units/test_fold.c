/* Unit test for splitter/fold.c: which copies of a carried static share a
 * body. Modules parsed from IR text, as two partitions would hold them:
 * equal bodies get one name whatever the module numbers (attribute groups,
 * metadata, struct type names); different code, different layouts or
 * different attributes get different names; a body reaching a local
 * variable, or a cycle of marked functions, stays internal; callees go
 * first; debug info changes no name; the printer given is used. Prints "N passed, N failed". */
#include "check.h"
#include "fold.h"
#include "fold_names.h"

#include <llvm-c/Comdat.h>
#include <llvm-c/IRReader.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static LLVMContextRef ctx;

static LLVMModuleRef parse(const char *ir)
{
	LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "test");
	LLVMModuleRef m = NULL;
	char *err = NULL;
	if (LLVMParseIRInContext(ctx, mb, &m, &err)) {
		fprintf(stderr, "parse error: %s\n%s\n", err, ir);
		LLVMDisposeMessage(err);
		exit(2);
	}
	return m;
}

/* The n-th function of m. */
static LLVMValueRef fn_at(LLVMModuleRef m, int n)
{
	LLVMValueRef f = LLVMGetFirstFunction(m);
	while (n-- > 0 && f)
		f = LLVMGetNextFunction(f);
	return f;
}

/* Its name now ("" if there is none). */
static const char *fn_name(LLVMModuleRef m, int n)
{
	LLVMValueRef f = fn_at(m, n);
	size_t len;
	return f ? LLVMGetValueName2(f, &len) : "";
}

/* Fold one module; the name its function n has then (heap). */
static char *folded(const char *ir, int n, int *count)
{
	LLVMModuleRef m = parse(ir);
	*count = mtpc_fold_marked(m, NULL, NULL);
	char *name = strdup(fn_name(m, n));
	LLVMDisposeModule(m);
	return name;
}

#define MARK "attributes #9 = { \"mtpc-fold\" }\n"

/* @h with the module numbering of one partition (attribute groups, metadata
 * and the struct type's name come in a different order in the other);
 * variant() makes it with another layout or without the call's attribute. */
static const char *const SAME_A =
	"%struct.S.mtpc3 = type { i32, i64 }\n"
	"define internal i64 @h(ptr %p) #9 {\n"
	"  %q = getelementptr inbounds %struct.S.mtpc3, ptr %p, i64 1\n"
	"  %v = load i64, ptr %q, align 8, !tbaa !0\n"
	"  %c = call i64 @ext(i64 %v) #1\n"
	"  ret i64 %c\n}\n"
	"declare i64 @ext(i64)\n" MARK "attributes #1 = { nounwind }\n"
	"!0 = !{!\"long\", !1, i64 0}\n!1 = !{!\"tbaa\"}\n";
static const char *const SAME_B =
	"%struct.T.mtpc1 = type { i8 }\n"
	"%struct.S.mtpc7 = type { i32, i64 }\n"
	"define void @other() #3 { ret void }\n"
	"define internal i64 @h(ptr %p) #9 {\n"
	"  %q = getelementptr inbounds %struct.S.mtpc7, ptr %p, i64 1\n"
	"  %v = load i64, ptr %q, align 8, !tbaa !3\n"
	"  %c = call i64 @ext(i64 %v) #2\n"
	"  ret i64 %c\n}\n"
	"declare i64 @ext(i64)\n" MARK "attributes #2 = { nounwind }\n attributes #3 = { noinline }\n"
	"!2 = !{!\"tbaa\"}\n!3 = !{!\"long\", !2, i64 0}\n";
/* @h of SAME_A with the struct type's layout and the call's attribute
 * group given (heap). */
static char *variant(const char *layout, const char *call_attr)
{
	const char *fmt = "%%struct.S.mtpc3 = type %s\n"
			  "define internal i64 @h(ptr %%p) #9 {\n"
			  "  %%q = getelementptr inbounds %%struct.S.mtpc3, ptr %%p, i64 1\n"
			  "  %%v = load i64, ptr %%q, align 8, !tbaa !0\n"
			  "  %%c = call i64 @ext(i64 %%v)%s\n"
			  "  ret i64 %%c\n}\n"
			  "declare i64 @ext(i64)\n" MARK "attributes #1 = { nounwind }\n"
			  "!0 = !{!\"long\", !1, i64 0}\n!1 = !{!\"tbaa\"}\n";
	size_t n = strlen(fmt) + strlen(layout) + strlen(call_attr) + 1;
	char *ir = malloc(n);
	snprintf(ir, n, fmt, layout, call_attr);
	return ir;
}

static void test_equal_bodies_share_a_name(void)
{
	int na, nb, nc, nd, ne;
	char *layout = variant("{ i64, i64 }", " #1"), *attrs = variant("{ i32, i64 }", "");
	char *same = variant("{ i32, i64 }", " #1");
	char *a = folded(SAME_A, 0, &na), *b = folded(SAME_B, 1, &nb);
	char *c = folded(layout, 0, &nc), *d = folded(attrs, 0, &nd), *e = folded(same, 0, &ne);
	size_t base = 0;
	CHECK(na == 1 && nb == 1 && nc == 1 && nd == 1 && ne == 1);
	CHECK(mtpc_fold_name(a, &base) && base == 1 && !strncmp(a, "h", 1));
	CHECK(!strcmp(a, b) && !strcmp(a, e));
	CHECK(strcmp(a, c) != 0);
	CHECK(strcmp(a, d) != 0);
	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
	free(layout);
	free(attrs);
	free(same);
}

static void test_what_a_folded_body_is(void)
{
	LLVMModuleRef m = parse(SAME_A);
	CHECK(mtpc_fold_marked(m, NULL, NULL) == 1);
	LLVMValueRef h = fn_at(m, 0);
	size_t len;
	const char *name = LLVMGetValueName2(h, &len);
	CHECK(LLVMGetLinkage(h) == LLVMLinkOnceODRLinkage);
	CHECK(LLVMGetVisibility(h) == LLVMHiddenVisibility);
	LLVMComdatRef cd = LLVMGetComdat(h);
	CHECK(cd && LLVMGetComdatSelectionKind(cd) == LLVMAnyComdatSelectionKind);
	CHECK(LLVMGetNamedFunction(m, name) == h);
	CHECK(!LLVMGetStringAttributeAtIndex(h, LLVMAttributeFunctionIndex, MTPC_FOLD_ATTR,
					     sizeof MTPC_FOLD_ATTR - 1));
	LLVMDisposeModule(m);
}

static void test_different_code_or_parameter_attributes(void)
{
	const char *one = "define internal i32 @h(i32 %x) #9 {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n" MARK;
	const char *two = "define internal i32 @h(i32 %x) #9 {\n  %y = add i32 %x, 2\n  ret i32 %y\n}\n" MARK;
	const char *nz = "define internal i32 @h(i32 noundef %x) #9 {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n" MARK;
	int n;
	char *a = folded(one, 0, &n), *b = folded(two, 0, &n), *c = folded(nz, 0, &n), *d = folded(one, 0, &n);
	CHECK(strcmp(a, b) != 0 && strcmp(a, c) != 0);
	CHECK(!strcmp(a, d)); /* deterministic */
	free(a);
	free(b);
	free(c);
	free(d);
}

static void test_local_variables_and_constants(void)
{
	/* a local variable: each partition's own, so the body stays */
	const char *var = "@count = internal global i32 0\n"
			  "define internal void @h() #9 {\n  %v = load i32, ptr @count\n"
			  "  %w = add i32 %v, 1\n  store i32 %w, ptr @count\n  ret void\n}\n" MARK;
	/* a local constant: its contents are part of the body's */
	const char *k1 = "@t = private unnamed_addr constant [2 x i32] [i32 1, i32 2]\n"
			 "define internal i32 @h(i64 %i) #9 {\n  %p = getelementptr [2 x i32], ptr @t, i64 0, i64 %i\n"
			 "  %v = load i32, ptr %p\n  ret i32 %v\n}\n" MARK;
	const char *k2 = "@t = private unnamed_addr constant [2 x i32] [i32 1, i32 3]\n"
			 "define internal i32 @h(i64 %i) #9 {\n  %p = getelementptr [2 x i32], ptr @t, i64 0, i64 %i\n"
			 "  %v = load i32, ptr %p\n  ret i32 %v\n}\n" MARK;
	int n1, n2, n3;
	char *a = folded(var, 0, &n1), *b = folded(k1, 0, &n2), *c = folded(k2, 0, &n3);
	CHECK(n1 == 0 && !strcmp(a, "h"));
	CHECK(n2 == 1 && n3 == 1 && strcmp(b, c) != 0);
	free(a);
	free(b);
	free(c);
}

static void test_callees_first_and_cycles(void)
{
	/* g calls h, both marked; u is marked-free and calls h */
	const char *chain = "define internal i32 @g(i32 %x) #9 {\n  %y = call i32 @h(i32 %x)\n  ret i32 %y\n}\n"
			    "define internal i32 @h(i32 %x) #9 {\n  %y = mul i32 %x, 3\n  ret i32 %y\n}\n"
			    "define i32 @u(i32 %x) {\n  %y = call i32 @h(i32 %x)\n  ret i32 %y\n}\n" MARK;
	LLVMModuleRef m = parse(chain);
	CHECK(mtpc_fold_marked(m, NULL, NULL) == 2);
	size_t base;
	CHECK(mtpc_fold_name(fn_name(m, 0), &base) && mtpc_fold_name(fn_name(m, 1), &base));
	CHECK(!strcmp(fn_name(m, 2), "u"));
	LLVMDisposeModule(m);
	/* g calls an internal function that is not marked: left */
	const char *unmarked = "define internal i32 @g(i32 %x) #9 {\n  %y = call i32 @h(i32 %x)\n  ret i32 %y\n}\n"
			       "define internal i32 @h(i32 %x) {\n  %y = mul i32 %x, 3\n  ret i32 %y\n}\n" MARK;
	int n;
	char *g = folded(unmarked, 0, &n);
	CHECK(n == 0 && !strcmp(g, "g"));
	free(g);
	/* a and b call each other: neither goes first, both stay */
	const char *cycle = "define internal i32 @a(i32 %x) #9 {\n  %y = call i32 @b(i32 %x)\n  ret i32 %y\n}\n"
			    "define internal i32 @b(i32 %x) #9 {\n  %c = icmp eq i32 %x, 0\n  br i1 %c, label %z, label %r\n"
			    "z:\n  ret i32 0\nr:\n  %d = sub i32 %x, 1\n  %y = call i32 @a(i32 %d)\n  ret i32 %y\n}\n" MARK;
	m = parse(cycle);
	CHECK(mtpc_fold_marked(m, NULL, NULL) == 0);
	CHECK(!strcmp(fn_name(m, 0), "a") && !strcmp(fn_name(m, 1), "b"));
	CHECK(LLVMGetLinkage(fn_at(m, 0)) == LLVMInternalLinkage);
	CHECK(!LLVMGetStringAttributeAtIndex(fn_at(m, 1), LLVMAttributeFunctionIndex, MTPC_FOLD_ATTR,
					     sizeof MTPC_FOLD_ATTR - 1));
	LLVMDisposeModule(m);
}

/* @h with debug info; line is its first line, pad some metadata first that
 * renumbers the rest. */
static char *with_debug_info(int line, int pad)
{
	const char *fmt = "define internal i32 @h(i32 %%x) #9 !dbg !%d {\n"
			  "  %%y = add i32 %%x, 1, !dbg !%d\n  ret i32 %%y, !dbg !%d\n}\n" MARK
			  "!llvm.dbg.cu = !{!%d}\n!llvm.module.flags = !{!%d}\n!pad = !{%s}\n"
			  "!%d = distinct !DICompileUnit(language: DW_LANG_C11, file: !%d, producer: \"t\", "
			  "isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug)\n"
			  "!%d = !DIFile(filename: \"t.c\", directory: \"/\")\n"
			  "!%d = !{i32 2, !\"Debug Info Version\", i32 3}\n"
			  "!%d = distinct !DISubprogram(name: \"h\", scope: !%d, file: !%d, line: %d, type: !%d, "
			  "scopeLine: %d, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition | DISPFlagOptimized, "
			  "unit: !%d)\n!%d = !DISubroutineType(types: !{})\n"
			  "!%d = !DILocation(line: %d, column: 3, scope: !%d)\n%s";
	int k = pad; /* !0 .. !pad-1: the padding */
	int cu = k, file = k + 1, flags = k + 2, sp = k + 3, ty = k + 4, loc = k + 5;
	char pads[64] = "", padmd[256] = "";
	for (int i = 0; i < pad; i++) {
		size_t l = strlen(pads), m = strlen(padmd);
		snprintf(pads + l, sizeof pads - l, "%s!%d", i ? ", " : "", i);
		snprintf(padmd + m, sizeof padmd - m, "!%d = !{!\"pad%d\"}\n", i, i);
	}
	size_t n = strlen(fmt) + sizeof pads + sizeof padmd + 200;
	char *ir = malloc(n);
	snprintf(ir, n, fmt, sp, loc, loc, cu, flags, pads, cu, file, file, flags, sp, file, file, line, ty, line, cu,
		 ty, loc, line + 1, sp, padmd);
	return ir;
}

/* Counts the calls of the printer given to mtpc_fold_marked. */
static char *counting_printer(LLVMValueRef v, void *arg)
{
	++*(int *)arg;
	return LLVMPrintValueToString(v);
}

static void test_debug_info(void)
{
	/* Equal code with other lines and other metadata numbers: one body
	 * (the merge marks the dropped copy's subprogram dead). */
	char *a = with_debug_info(3, 0), *b = with_debug_info(30, 2);
	int na = 0, nb = 0, printed = 0;
	char *fa = folded(a, 0, &na), *fb = folded(b, 0, &nb);
	CHECK(na == 1 && nb == 1 && mtpc_fold_name(fa, &(size_t){0}) && !strcmp(fa, fb));
	/* The printer given is the one used. */
	LLVMModuleRef m = parse(a);
	CHECK(LLVMGetNamedMetadataNumOperands(m, "llvm.dbg.cu") == 1);
	CHECK(mtpc_fold_marked(m, counting_printer, &printed) == 1 && printed == 1);
	LLVMDisposeModule(m);
	free(a);
	free(b);
	free(fa);
	free(fb);
}

static void test_fold_names(void)
{
	size_t base = 0;
	CHECK(mtpc_fold_name("sqlite3DbStrDup.mtpc.f0123456789abcdef", &base) && base == 15);
	CHECK(mtpc_fold_name(".text.x.mtpc.f0123456789abcdef", &base) && base == 7);
	CHECK(!mtpc_fold_name("x.mtpc.f0123456789abcdeF", &base));
	CHECK(!mtpc_fold_name("x.mtpc.f0123456789abcde", &base));
	CHECK(!mtpc_fold_name(".mtpc.f0123456789abcdef", &base));
	CHECK(!mtpc_fold_name("x.mtpc.31fb78d8", &base));
}

int main(void)
{
	ctx = LLVMContextCreate();
	test_equal_bodies_share_a_name();
	test_what_a_folded_body_is();
	test_different_code_or_parameter_attributes();
	test_local_variables_and_constants();
	test_callees_first_and_cycles();
	test_debug_info();
	test_fold_names();
	LLVMContextDispose(ctx);
	return CHECK_REPORT();
}
