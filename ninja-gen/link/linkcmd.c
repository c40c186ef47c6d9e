/* linkcmd.c: see linkcmd.h. */
#define _POSIX_C_SOURCE 200809L
#include "linkcmd.h"
#include "rsp.h"
#include "bitcode.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum input_kind linkcmd_file_kind(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return IN_NONE;
	unsigned char m[8] = {0};
	size_t n = fread(m, 1, sizeof m, f);
	fclose(f);
	if (mtpc_is_bitcode(m, n))
		return IN_BITCODE;
	if (n == 8 && (!memcmp(m, "!<arch>\n", 8) || !memcmp(m, "!<thin>\n", 8)))
		return IN_ARCHIVE;
	return IN_FILE;
}

int linkcmd_is_native_object(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	unsigned char h[18] = {0};
	size_t n = fread(h, 1, sizeof h, f);
	fclose(f);
	/* e_type (offset 16) in the byte order EI_DATA (offset 5) names. */
	int type = h[5] == 2 ? (h[16] << 8 | h[17]) : (h[17] << 8 | h[16]);
	return n == sizeof h && !memcmp(h, "\x7f" "ELF", 4) && type == 1 /* ET_REL */;
}

/* Driver options whose value is the next word (so that value is not taken
 * for an input file). Joined forms (-ofoo, -Lfoo) need no entry. */
static const char *const takes_value[] = {
	"-o", "-L", "-l", "-Xlinker", "-target", "-mllvm", "-z", "-T", "-u", "-e",
	"-x", "-isysroot", "--sysroot", "-MF", "-MT", "-MQ", "-include", "-arch",
	"-Xclang", "-Xassembler", "-Xpreprocessor", "-B", "-I", "-D", "-U",
	"-isystem", "-idirafter", "--param", "-Xopenmp-target", "-rpath", NULL,
};

static int is_value_option(const char *a)
{
	for (int i = 0; takes_value[i]; i++)
		if (!strcmp(a, takes_value[i]))
			return 1;
	return 0;
}

static void set_opt(struct linkcmd *lc, const char *level)
{
	/* Map the driver's -O to lld's LTO level as clang does for
	 * -plugin-opt=O<n>: s, z and g count as 2 (g as 1), fast as 3. */
	const char *o = "2";
	if (!strcmp(level, "0"))
		o = "0";
	else if (!strcmp(level, "1") || !strcmp(level, "g"))
		o = "1";
	else if (!strcmp(level, "3") || !strcmp(level, "4") || !strcmp(level, "fast"))
		o = "3";
	else if (!*level)
		o = "1"; /* plain -O means -O1 */
	snprintf(lc->opt, sizeof lc->opt, "%s", o);
}

/* One word the compiler driver hands to the linker, from -Wl,a,b or
 * -Xlinker a: the backend flags, link modes and debug options MTPC must
 * know. *mllvm_next: the word before was -mllvm, so this one is a backend
 * flag (-Wl,-mllvm,X and -Xlinker -mllvm -Xlinker X alike). */
static void linker_word(struct linkcmd *lc, const char *w, int *mllvm_next)
{
	if (*mllvm_next) {
		strv_add(&lc->backend_flags, "-mllvm");
		strv_add(&lc->backend_flags, w);
		*mllvm_next = 0;
	} else if (!strcmp(w, "-mllvm")) {
		*mllvm_next = 1;
	} else if (!strncmp(w, "-plugin-opt=-", 13) || !strncmp(w, "--plugin-opt=-", 14)) {
		strv_add(&lc->backend_flags, "-mllvm");
		strv_add(&lc->backend_flags, strchr(w, '=') + 1);
	} else if (!strncmp(w, "--lto-O", 7) || !strncmp(w, "-plugin-opt=O", 13)) {
		set_opt(lc, w[2] == 'l' ? w + 7 : w + 13);
	} else if (!strcmp(w, "-pie") || !strcmp(w, "--pie")) {
		lc->mode = MODE_PIE;
	} else if (!strcmp(w, "-no-pie") || !strcmp(w, "--no-pie")) {
		lc->mode = MODE_STATIC;
	} else if (!strcmp(w, "--gdb-index") || !strcmp(w, "-gdb-index")) {
		lc->gdb_index = 1;
	} else if (!strcmp(w, "--no-gdb-index") || !strcmp(w, "-no-gdb-index")) {
		lc->gdb_index = 0;
	} else if (strstr(w, "plugin-opt=dwo_dir=")) {
		lc->split_dwarf = 1; /* what -gsplit-dwarf passes to lld */
	}
}

/* The words of one -Wl, argument. */
static void scan_wl(struct linkcmd *lc, const char *a)
{
	char *copy = xstrdup(a + 4);
	char *save = NULL;
	int mllvm_next = 0;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
		linker_word(lc, w, &mllvm_next);
	free(copy);
}

/* *whole: whether the inputs after linker word(s) w are in --whole-archive
 * mode (left as it is when w says nothing about it). */
static void track_whole_archive(const char *w, int *whole)
{
	if (strstr(w, "--whole-archive"))
		*whole = 1;
	if (strstr(w, "--no-whole-archive"))
		*whole = 0;
}

int linkcmd_parse(struct linkcmd *lc, int argc, char **argv)
{
	memset(lc, 0, sizeof *lc);
	lc->output = -1;
	lc->mode = MODE_PIE;
	snprintf(lc->opt, sizeof lc->opt, "2"); /* lld's default LTO level */
	if (argc < 1) {
		mtpc_error("no link command after --");
		return -1;
	}
	if (rsp_expand(&lc->args, argc, argv) < 0)
		return -1;
	size_t n = lc->args.n;
	lc->kind = xcalloc(n, sizeof *lc->kind);
	lc->whole_archive = xcalloc(n, sizeof *lc->whole_archive);
	int shared = 0, whole = 0;
	int xlinker_mllvm = 0; /* -Xlinker -mllvm seen: the next -Xlinker word is a backend flag */
	char **a = lc->args.v;
	for (size_t i = 1; i < n; i++) {
		const char *w = a[i];
		lc->whole_archive[i] = whole;
		if (w[0] != '-' || !w[1]) {
			enum input_kind k = linkcmd_file_kind(w);
			lc->kind[i] = k == IN_NONE ? IN_NONE : k;
			continue;
		}
		if (!strcmp(w, "-o") && i + 1 < n) {
			lc->output = (int)++i;
			lc->output_joined = 0;
		} else if (!strcmp(w, "-shared")) {
			shared = 1;
		} else if (!strcmp(w, "-pie")) {
			lc->mode = MODE_PIE;
		} else if (!strcmp(w, "-no-pie") || !strcmp(w, "-nopie") || !strcmp(w, "-static")) {
			lc->mode = MODE_STATIC;
		} else if (!strncmp(w, "-O", 2)) {
			set_opt(lc, w + 2);
		} else if (!strcmp(w, "-target") && i + 1 < n) {
			strv_add(&lc->backend_flags, "-target");
			strv_add(&lc->backend_flags, a[++i]);
		} else if (!strncmp(w, "--target=", 9) || !strncmp(w, "-march=", 7) ||
			   !strncmp(w, "-mcpu=", 6) || !strncmp(w, "-fprofile", 9) ||
			   !strncmp(w, "-fno-profile", 12) || !strncmp(w, "-fcs-profile", 12)) {
			strv_add(&lc->backend_flags, w);
		} else if (!strcmp(w, "-mllvm") && i + 1 < n) {
			strv_add(&lc->backend_flags, "-mllvm");
			strv_add(&lc->backend_flags, a[++i]);
		} else if (!strcmp(w, "-Xlinker") && i + 1 < n) {
			i++;
			track_whole_archive(a[i], &whole);
			linker_word(lc, a[i], &xlinker_mllvm);
		} else if (!strncmp(w, "-Wl,", 4)) {
			track_whole_archive(w, &whole);
			lc->whole_archive[i] = whole;
			scan_wl(lc, w);
		} else if (!strcmp(w, "-gsplit-dwarf")) {
			lc->split_dwarf = lc->debug = 1;
		} else if (!strncmp(w, "-g", 2) && strcmp(w, "-g0")) {
			lc->debug = 1;
		} else if (!strncmp(w, "-flto", 5) && strcmp(w, "-flto=full")) {
			lc->has_lto = 1;
		} else if (is_value_option(w) && i + 1 < n) {
			i++;
		} else if (!strncmp(w, "-o", 2)) {
			lc->output = (int)i;
			lc->output_joined = 1;
		}
	}
	if (shared)
		lc->mode = MODE_SHARED;
	return 0;
}

void linkcmd_free(struct linkcmd *lc)
{
	strv_free(&lc->args);
	strv_free(&lc->backend_flags);
	free(lc->kind);
	free(lc->whole_archive);
}

const char *linkcmd_output(const struct linkcmd *lc)
{
	if (lc->output < 0)
		return NULL;
	const char *w = lc->args.v[lc->output];
	return lc->output_joined ? w + 2 : w;
}
