/* Unit test for common/bitcode_cost.c: the summary costs read in C are
 * LLVM's (`mtpc-split --print-cost`, which reads them through LLVM) on
 * ThinLTO objects clang compiles here: C and C++, with debug info, a split
 * LTO unit (CFI: two modules in one file), full LTO, and bitcode without a
 * summary (0 instructions in 0 functions, as LLVM reads it); the same inside a bitcode wrapper header; non-bitcode and every
 * truncation of an object are refused or read right, never misread (and,
 * under ASan, never read out of bounds). Takes a scratch directory; prints
 * "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#include "bitcode_cost.h"
#include "check.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *dir;

static char *path_of(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static void write_text(const char *name, const char *text)
{
	char *p = path_of(name);
	CHECK(mtpc_write_file(p, text, strlen(text), 0) >= 0);
	free(p);
}

static int sh(const char *cmd)
{
	int r = system(cmd);
	if (r != 0)
		fprintf(stderr, "failed (%d): %s\n", r, cmd);
	return r;
}

/* What `mtpc-split --print-cost` says of file: 0 with the figures, 1 for
 * "- -", -1 when it fails. */
static int llvm_cost(const char *file, long long *insts, long long *funcs)
{
	char *out = path_of("cost.txt");
	char *cmd = xasprintf("'%s' --print-cost -o '%s' '%s' 2>/dev/null", MTPC_SPLIT_TOOL, out, file);
	int r = -1;
	char *text = NULL;
	size_t len;
	if (system(cmd) == 0 && mtpc_read_file(out, &text, &len) == 0) {
		if (!strncmp(text, "- - ", 4))
			r = 1;
		else if (sscanf(text, "%lld %lld", insts, funcs) == 2)
			r = 0;
	}
	free(text);
	free(cmd);
	free(out);
	return r;
}

/* Compile source name with flags to name.o and compare both readers. */
static void check_object(const char *name, const char *flags, int want)
{
	char *src = path_of(name), *obj = xasprintf("%s/%s.o", dir, name);
	int cxx = strstr(name, ".cpp") != NULL;
	char *cmd = xasprintf("%s/%s %s -c '%s' -o '%s'", MTPC_LLVM_BIN_DIR, cxx ? "clang++" : "clang", flags, src, obj);
	if (sh(cmd) != 0) {
		failed++;
		goto done;
	}
	long long li = -1, lf = -1, ci = -2, cf = -2;
	int lr = llvm_cost(obj, &li, &lf);
	char *data;
	size_t len;
	CHECK(mtpc_read_file(obj, &data, &len) == 0);
	int cr = mtpc_bitcode_cost(data, len, &ci, &cf);
	if (cr != lr || (lr == 0 && (ci != li || cf != lf)) || lr != want) {
		failed++;
		fprintf(stderr, "%s (%s): C reader %d %lld %lld, LLVM's %d %lld %lld, expected status %d\n", name, flags,
			cr, ci, cf, lr, li, lf, want);
	} else {
		passed++;
	}
	/* in a wrapper header: magic, version, offset, size, CPU type */
	unsigned char *w = xmalloc(len + 20);
	uint32_t hdr[5] = {0x0B17C0DE, 0, 20, (uint32_t)len, 0};
	memcpy(w, hdr, sizeof hdr);
	memcpy(w + 20, data, len);
	long long wi, wf;
	CHECK(mtpc_bitcode_cost(w, len + 20, &wi, &wf) == cr && (cr != 0 || (wi == ci && wf == cf)));
	/* every truncation: no read out of bounds (ASan), and none read as
	 * more than the whole; a cut inside a block is refused (one between
	 * top-level blocks leaves a shorter file that is whole) */
	int bad = 0, refused = 0, cuts = 0;
	for (size_t cut = 0; cut < len; cut += cut < 64 ? 1 : 4, cuts++) {
		long long ti, tf;
		int tr = mtpc_bitcode_cost(data, cut, &ti, &tf);
		refused += tr == -1;
		if (tr == 0 && (ti > ci || tf > cf))
			bad++;
	}
	CHECK(refused * 100 >= cuts * 95);
	CHECK(bad == 0);
	free(w);
	free(data);
done:
	free(cmd);
	free(src);
	free(obj);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	write_text("a.c", "#include <string.h>\n"
			  "static int helper(const char *s, int k) { int t = 0; for (int i = 0; i < k; i++) t += s[i % 7] * i; return t; }\n"
			  "struct S { int a; double b; const char *n; };\n"
			  "int api(struct S *s, int n) { int r = helper(s->n, n); if (r > 10) s->b += strlen(s->n); return r + s->a; }\n"
			  "int (*table[2])(struct S *, int) = {api, 0};\n"
			  "__attribute__((noinline)) double cold(double x) { return x * x / 3.0; }\n"
			  "int main(int argc, char **argv) { struct S s = {argc, 1.5, argv[0]}; return api(&s, argc) + (int)cold(s.b); }\n");
	write_text("b.cpp", "#include <vector>\n#include <string>\n#include <map>\n"
			    "struct Base { virtual ~Base(); virtual int f(int) const = 0; };\n"
			    "struct D : Base { int k; D(int x) : k(x) {} int f(int x) const override { return x * k; } };\n"
			    "Base::~Base() {}\n"
			    "template <class T> T sum(const std::vector<T> &v) { T t{}; for (auto &x : v) t += x; return t; }\n"
			    "int run(int n) { std::vector<int> v(n, 3); std::map<std::string, int> m; m[\"x\"] = sum(v);\n"
			    "  D d(n); const Base &b = d; return b.f(m[\"x\"]); }\n");
	char *text = path_of("text.txt");
	CHECK(mtpc_write_file(text, "not bitcode at all\n", 19, 0) >= 0);
	check_object("a.c", "-O2 -flto=thin", 0);
	check_object("a.c", "-O0 -g -flto=thin", 0);
	check_object("a.c", "-O2 -flto=full", 0);
	check_object("a.c", "-O2 -emit-llvm", 0); /* no summary: 0 0, as LLVM reads it */
	check_object("b.cpp", "-O2 -g -flto=thin", 0);
	check_object("b.cpp", "-O2 -flto=thin -fvisibility=hidden -fsanitize=cfi -fno-sanitize-trap=all "
			      "-fsanitize-recover=all", 0);
	char *data;
	size_t len;
	long long i, f;
	CHECK(mtpc_read_file(text, &data, &len) == 0);
	CHECK(mtpc_bitcode_cost(data, len, &i, &f) == -1);
	CHECK(mtpc_bitcode_cost(data, 0, &i, &f) == -1);
	CHECK(mtpc_bitcode_cost("BC\xc0\xde", 4, &i, &f) == 1); /* bitcode with no module */
	free(data);
	free(text);
	return CHECK_REPORT();
}
