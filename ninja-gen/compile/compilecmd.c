/* compilecmd.c: see compilecmd.h. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "compilecmd.h"
#include "rsp.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Driver options whose value is the next word (the value is never a source). */
static const char *const with_value[] = {
	"-o", "-x", "-MF", "-MT", "-MQ", "-MJ", "-I", "-D", "-U", "-include", "-imacros", "-isystem",
	"-iquote", "-idirafter", "-isysroot", "--sysroot", "-iprefix", "-iwithprefix", "-iwithprefixbefore",
	"-cxx-isystem", "-target", "--target", "-arch", "-Xclang", "-Xlinker", "-Xassembler",
	"-Xpreprocessor", "-mllvm", "-F", "-L", "-l", "-u", "-z", "-T", "-serialize-diagnostics",
	"-ivfsoverlay", "--param", "-Xopenmp-target", "-fmodule-file", "-ccc-gcc-name", "-working-directory",
	"-include-pch", NULL,
};

/* The preprocessor's and the dependency files' options, separate or joined
 * to their value: a partition (LLVM IR) has no use for them. */
static const char *const preprocessor[] = {
	"-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-isysroot",
	"--sysroot", "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-cxx-isystem", "-MF", "-MT",
	"-MQ", "-MJ", "-ivfsoverlay", "-include-pch", NULL,
};
static const char *const preprocessor_flags[] = {
	"-MD", "-MMD", "-MP", "-MG", "-MV", "-nostdinc", "-nostdinc++", "-H", "-P", "-C", "-CC", NULL,
};

/* Options after which a compile is not split (the reason for the message):
 * output other than an object, or work inside LLVM's pipeline that must see
 * the whole module (instrumentation, IR profiles) or writes files of its own
 * per module (optimization records, time traces, temporaries). */
static const struct {
	const char *prefix, *why;
} blockers[] = {
	{"-E", "preprocesses only"},
	{"-S", "writes assembly"},
	{"-fsyntax-only", "checks syntax only"},
	{"-M", "writes dependencies only"},
	{"-save-temps", "keeps temporary files (-save-temps)"},
	{"-fembed-bitcode", "embeds bitcode"},
	{"-fsave-optimization-record", "writes optimization records"},
	{"-ftime-trace", "writes a time trace"},
	{"-fprofile-generate", "instruments in LLVM's pipeline (IR profile)"},
	{"-fprofile-instr-generate", "instruments for profiling"},
	{"-fcs-profile-generate", "instruments in LLVM's pipeline (IR profile)"},
	{"-fprofile-use", "uses a profile in LLVM's pipeline"},
	{"-fprofile-instr-use", "uses a profile in LLVM's pipeline"},
	{"-fprofile-sample-use", "uses a sample profile in LLVM's pipeline"},
	{"-fprofile-arcs", "instruments for coverage"},
	{"--coverage", "instruments for coverage"},
	{"-fmemory-profile", "instruments for memory profiling"},
	{"-fsanitize-coverage", "instruments for sanitizer coverage"},
	{"-fxray-instrument", "instruments for XRay"},
	{"-emit-pch", "writes a precompiled header"},
	{"-fmodules", "uses modules"},
	{"-fthinlto-index", "is a ThinLTO backend compile"},
	{"-emit-llvm", "writes LLVM IR"},
};

/* Sanitizers that instrument inside LLVM's pipeline (per module: module
 * constructors, shadow setup); those clang instruments itself (undefined,
 * cfi-*) are in the frontend's IR already. */
static const char *const pipeline_sanitizers[] = {
	"address", "kernel-address", "hwaddress", "kernel-hwaddress", "memory", "kernel-memory", "thread",
	"dataflow", "fuzzer", "fuzzer-no-link", "memtag", "memtag-stack", "memtag-heap", "memtag-globals",
	"type", "realtime", "numerical", NULL,
};

static int in_list(const char *const *list, const char *w)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(list[i], w))
			return 1;
	return 0;
}

/* The entry of list that w starts with (joined value, as -Ifoo), or NULL. */
static const char *prefix_of(const char *const *list, const char *w)
{
	for (int i = 0; list[i]; i++)
		if (!strncmp(w, list[i], strlen(list[i])))
			return list[i];
	return NULL;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && !strcmp(s + n - k, suffix);
}

static int c_or_cxx_source(const char *path)
{
	static const char *const ext[] = {".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".cp", ".CPP", NULL};
	for (int i = 0; ext[i]; i++)
		if (has_suffix(path, ext[i]))
			return 1;
	return 0;
}

/* One -fsanitize= list: 2 when it names a pipeline sanitizer (the compile
 * is not split), 1 when it names CFI (which writes a split LTO unit by
 * default), else 0. */
static int sanitizer_kind(const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	int kind = 0;
	for (char *s = strtok_r(copy, ",", &save); s && kind < 2; s = strtok_r(NULL, ",", &save)) {
		if (in_list(pipeline_sanitizers, s))
			kind = 2;
		else if (!strncmp(s, "cfi", 3))
			kind = 1;
	}
	free(copy);
	return kind;
}

int compilecmd_parse(struct compilecmd *cc, int argc, char **argv)
{
	memset(cc, 0, sizeof *cc);
	cc->src = cc->out = cc->depfile = -1;
	strcpy(cc->opt, "0");
	if (rsp_expand(&cc->args, argc, argv) < 0)
		return -1;
	size_t n = cc->args.n;
	cc->drop = xcalloc(n + 1, 1);
	enum { LTO_NONE, LTO_THIN, LTO_OTHER } lto = LTO_NONE;
	int compile = 0, sources = 0, lang_ok = 1, split_dwarf = 0, dwarf_version = 5, macros = 0;
	/* A split LTO unit (two modules in one object, for CFI and whole-program
	 * devirtualization) is written by ThinLTO's bitcode writer from the
	 * whole module; a partition cannot write its share of it. Clang splits
	 * by default under CFI or -fwhole-program-vtables; the last
	 * -f[no-]split-lto-unit wins. */
	int split_unit = -1, split_default = 0;
	for (size_t i = 1; i < n; i++) {
		const char *w = cc->args.v[i];
		if (w[0] != '-') {
			/* A word that is not an option's value: an input. */
			if (c_or_cxx_source(w)) {
				cc->src = (int)i;
				cc->drop[i] = 1;
			}
			sources++;
			continue;
		}
		const char *pp = prefix_of(preprocessor, w);
		if (in_list(with_value, w) && i + 1 < n) {
			if (!strcmp(w, "-o")) {
				cc->out = (int)i + 1;
				cc->drop[i] = cc->drop[i + 1] = 1;
			} else if (!strcmp(w, "-x")) {
				const char *l = cc->args.v[i + 1];
				lang_ok = !strcmp(l, "c") || !strcmp(l, "c++");
				cc->drop[i] = cc->drop[i + 1] = 1;
			} else if (pp && !strcmp(pp, w)) {
				cc->drop[i] = cc->drop[i + 1] = 1;
				if (!strcmp(w, "-MF")) {
					cc->depfile = (int)i + 1;
					cc->depfile_joined = 0;
				}
				cc->deps_target |= !strcmp(w, "-MT") || !strcmp(w, "-MQ");
			} else if (!strcmp(w, "-Xclang") && (!strcmp(cc->args.v[i + 1], "-include-pch") ||
							     !strcmp(cc->args.v[i + 1], "-include"))) {
				/* A precompiled header as CMake passes it (-Xclang -include-pch
				 * -Xclang PCH -Xclang -include -Xclang HEADER): the
				 * frontend's, not a partition's, whose IR has it all. */
				cc->drop[i] = cc->drop[i + 1] = 1;
				if (i + 3 < n && !strcmp(cc->args.v[i + 2], "-Xclang")) {
					cc->drop[i + 2] = cc->drop[i + 3] = 1;
					i += 2;
				}
			} else if (!strcmp(w, "-Xclang") && !strcmp(cc->args.v[i + 1], "-emit-pch")) {
				cc->why_not = "writes a precompiled header";
			}
			i++;
			continue;
		}
		if (!strncmp(w, "-o", 2) && w[2]) {
			cc->out = (int)i;
			cc->out_joined = 1;
			cc->drop[i] = 1;
			continue;
		}
		if (pp || in_list(preprocessor_flags, w) || !strncmp(w, "-std=", 5) || !strncmp(w, "-x", 2)) {
			cc->drop[i] = 1;
			cc->deps |= !strcmp(w, "-MD") || !strcmp(w, "-MMD");
			cc->deps_target |= !strncmp(w, "-MT", 3) || !strncmp(w, "-MQ", 3);
			if (!strncmp(w, "-MF", 3) && w[3]) {
				cc->depfile = (int)i;
				cc->depfile_joined = 1;
			}
			if (!strncmp(w, "-x", 2) && strcmp(w, "-xc") && strcmp(w, "-xc++"))
				lang_ok = 0;
			continue;
		}
		if (!strcmp(w, "-c"))
			compile = 1;
		else if (!strcmp(w, "-flto=thin"))
			lto = LTO_THIN;
		else if (!strcmp(w, "-fno-lto"))
			lto = LTO_NONE;
		else if (!strncmp(w, "-flto", 5) && (!w[5] || w[5] == '='))
			lto = LTO_OTHER; /* -flto, -flto=full, =auto, =jobserver */
		else if (!strcmp(w, "-Ofast"))
			strcpy(cc->opt, "3");
		else if (!strncmp(w, "-O", 2) && strlen(w) <= 3)
			snprintf(cc->opt, sizeof cc->opt, "%s", w[2] ? w + 2 : "1");
		else if (!strcmp(w, "-gz") || !strncmp(w, "-gz=", 4)) {
			cc->gz = !strcmp(w, "-gz") ? "zlib" : strcmp(w + 4, "none") ? w + 4 : NULL;
			/* A plain compile's partitions write their debug sections
			 * uncompressed, for the merge's fix-up to read and mark;
			 * its ld -r compresses them as this flag says. */
			cc->drop[i] = 1;
		}
		else if (!strcmp(w, "-gsplit-dwarf") || !strcmp(w, "-gsplit-dwarf=split"))
			split_dwarf = 1;
		else if (!strcmp(w, "-gsplit-dwarf=single"))
			split_dwarf = 2;
		else if (!strcmp(w, "-gsplit-dwarf=none") || !strcmp(w, "-gno-split-dwarf"))
			split_dwarf = 0;
		else if (!strncmp(w, "-gdwarf-", 8) && w[8] >= '2' && w[8] <= '5' && !w[9])
			dwarf_version = w[8] - '0';
		else if (!strcmp(w, "-gdwarf64"))
			dwarf_version = 64;
		else if (!strcmp(w, "-g3") || !strcmp(w, "-ggdb3") || !strcmp(w, "-fdebug-macro"))
			macros = 1; /* a .debug_macro.dwo, which the merge of split DWARF does not take */
		else if (!strcmp(w, "-fno-debug-macro"))
			macros = 0;
		else if (!strcmp(w, "-fsplit-lto-unit") || !strcmp(w, "-fno-split-lto-unit"))
			split_unit = w[2] == 's';
		else if (!strcmp(w, "-fwhole-program-vtables"))
			split_default = 1;
		else if (!strncmp(w, "-fsanitize=", 11)) {
			int kind = sanitizer_kind(w + 11);
			if (kind == 2)
				cc->why_not = "uses a sanitizer that instruments in LLVM's pipeline";
			split_default |= kind == 1;
		}
		for (size_t k = 0; k < sizeof blockers / sizeof blockers[0] && !cc->why_not; k++) {
			const char *p = blockers[k].prefix;
			size_t l = strlen(p);
			/* -E, -S, -M: exactly; the others as prefixes (-fprofile-use=...) */
			if (l <= 2 ? !strcmp(w, p) : (!strncmp(w, p, l) && (!w[l] || w[l] == '=' || w[l] == '-')))
				cc->why_not = blockers[k].why;
		}
	}
	cc->native = lto == LTO_NONE;
	if (!cc->why_not) {
		if (lto == LTO_THIN && (split_unit == 1 || (split_unit < 0 && split_default)))
			cc->why_not = "writes a split LTO unit (CFI, -fwhole-program-vtables or -fsplit-lto-unit)";
		else if (!compile)
			cc->why_not = "does not compile to an object (-c)";
		else if (lto == LTO_OTHER)
			cc->why_not = "is a full LTO compile (-flto)";
		else if (cc->native && (!strcmp(cc->opt, "0") || !strcmp(cc->opt, "g")))
			cc->why_not = "does not optimize (-O0, -Og)";
		else if (cc->native && split_dwarf == 2)
			cc->why_not = "writes split DWARF into its object (-gsplit-dwarf=single)";
		else if (cc->native && split_dwarf && (dwarf_version != 5 || cc->gz || macros))
			cc->why_not = "writes split DWARF other than DWARF 5 uncompressed without macros (-gdwarf-4, "
				      "-gdwarf64, -gz, -g3)";
		else if (sources != 1 || cc->src < 0 || !lang_ok)
			cc->why_not = "does not compile one C or C++ source";
		else if (cc->out < 0 || !strcmp(compilecmd_output(cc), "-"))
			cc->why_not = "has no output file (-o)";
	}
	cc->split_dwarf = cc->native && split_dwarf == 1;
	return 0;
}

void compilecmd_free(struct compilecmd *cc)
{
	strv_free(&cc->args);
	free(cc->drop);
	memset(cc, 0, sizeof *cc);
}

const char *compilecmd_source(const struct compilecmd *cc)
{
	return cc->src >= 0 ? cc->args.v[cc->src] : NULL;
}

const char *compilecmd_output(const struct compilecmd *cc)
{
	if (cc->out < 0)
		return NULL;
	return cc->out_joined ? cc->args.v[cc->out] + 2 : cc->args.v[cc->out];
}

/* The output's path with the extension of its last component replaced by
 * ext, as clang names the files it writes beside it; NULL without one. */
static char *beside_output(const struct compilecmd *cc, const char *ext)
{
	const char *out = compilecmd_output(cc);
	if (!out)
		return NULL;
	const char *base = mtpc_base_name(out), *dot = strrchr(base, '.');
	size_t keep = dot && dot != base ? (size_t)(dot - out) : strlen(out);
	return xasprintf("%.*s%s", (int)keep, out, ext);
}

char *compilecmd_depfile(const struct compilecmd *cc)
{
	if (!cc->deps)
		return NULL;
	if (cc->depfile >= 0)
		return xstrdup(cc->args.v[cc->depfile] + (cc->depfile_joined ? 3 : 0));
	return beside_output(cc, ".d");
}

char *compilecmd_dwo(const struct compilecmd *cc)
{
	return cc->split_dwarf ? beside_output(cc, ".dwo") : NULL;
}

void compilecmd_frontend(const struct compilecmd *cc, const char *bc, struct strv *cmd)
{
	for (size_t i = 0; i < cc->args.n; i++) {
		if ((int)i == cc->out) {
			strv_addown(cmd, cc->out_joined ? xasprintf("-o%s", bc) : xstrdup(bc));
			continue;
		}
		strv_add(cmd, cc->args.v[i]);
	}
	/* The depfile names the real output, whatever -o says here. */
	if (cc->deps && !cc->deps_target)
		strv_addl(cmd, "-MT", compilecmd_output(cc), NULL);
	/* Clang's default depfile follows -o, which names bc here. */
	if (cc->deps && cc->depfile < 0) {
		char *d = compilecmd_depfile(cc);
		strv_addl(cmd, "-MF", d, NULL);
		free(d);
	}
	strv_addl(cmd, "-Xclang", "-disable-llvm-passes", NULL);
	/* A ThinLTO compile writes bitcode anyway; a plain one must be told. */
	if (cc->native)
		strv_add(cmd, "-emit-llvm");
}

void compilecmd_partition(const struct compilecmd *cc, const char *in, const char *out, const char *dwo_out,
			  struct strv *cmd)
{
	for (size_t i = 0; i < cc->args.n; i++)
		if (!cc->drop[i])
			strv_add(cmd, cc->args.v[i]);
	/* The compile's own flags, some of which LLVM IR does not use. */
	strv_addl(cmd, "-Wno-unused-command-line-argument", "-x", "ir", in, "-o", out, NULL);
	if (cc->native && cc->fold_plugin)
		strv_addown(cmd, xasprintf("-fpass-plugin=%s", cc->fold_plugin));
	compilecmd_split_dwarf_flags(cc, dwo_out, cmd);
}

void compilecmd_split_dwarf_flags(const struct compilecmd *cc, const char *dwo_out, struct strv *cmd)
{
	char *dwo = compilecmd_dwo(cc);
	/* cc1's own options, after the ones the driver derives from -o: the
	 * skeleton names the compile's .dwo, the units go to dwo_out. */
	if (dwo && dwo_out)
		strv_addl(cmd, "-Xclang", "-split-dwarf-file", "-Xclang", dwo, "-Xclang", "-split-dwarf-output",
			  "-Xclang", dwo_out, NULL);
	free(dwo);
}
