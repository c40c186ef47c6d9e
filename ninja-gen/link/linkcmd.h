/* linkcmd.h: understanding the original link command.
 *
 * mtpc-link receives the link command CMake would have run (a clang/clang++
 * driver invocation). linkcmd_parse() expands @response files and classifies
 * every word: which are bitcode objects (ThinLTO modules), which are static
 * archives, what link mode (-shared, -pie, -static) and optimization level the
 * link uses, and which flags the ThinLTO backends must repeat to reproduce
 * what the in-process backend of lld would do (-O<n>, --target, -mllvm,
 * profile flags, -march/-mcpu). Nothing is rewritten here; link_graph.c builds
 * the thin-link and final-link commands from the classification. */
#ifndef MTPC_NG_LINKCMD_H
#define MTPC_NG_LINKCMD_H

#include "buf.h"

enum input_kind {
	IN_NONE,    /* an option or option argument */
	IN_BITCODE, /* a file starting with the bitcode magic */
	IN_ARCHIVE, /* a static archive ("!<arch>" or "!<thin>") */
	IN_FILE,    /* any other existing file (native object, shared lib, script) */
};

enum link_mode {
	MODE_PIE,    /* executable, position independent (clang's Linux default) */
	MODE_STATIC, /* -no-pie or -static executable */
	MODE_SHARED, /* -shared */
};

struct linkcmd {
	struct strv args;          /* the expanded command, args.v[0] is the driver */
	enum input_kind *kind;     /* per word of args */
	int *whole_archive;        /* per word: inside --whole-archive? */
	int output;                /* index of the word holding the output path, or -1 */
	int output_joined;         /* that word is "-o<path>", not "-o" "<path>" */
	enum link_mode mode;
	char opt[4];               /* backend optimization level: "0".."3" */
	struct strv backend_flags; /* flags every backend/slot compile repeats */
	int debug;                 /* some -g given */
	int split_dwarf;           /* -gsplit-dwarf (or -Wl,--plugin-opt=dwo_dir=) given: the
	                            * in-process backends would write .dwo files */
	int has_lto;               /* -flto or -flto=thin given */
	int gdb_index;             /* -Wl,--gdb-index: lld builds a .gdb_index from the GNU
	                            * name lists, which do not reach DWARF 5 type units */
};

/* Parse argv[0..argc-1]. Returns 0, or -1 after one error message. Relative
 * input paths are checked relative to the current directory. */
int linkcmd_parse(struct linkcmd *lc, int argc, char **argv);
void linkcmd_free(struct linkcmd *lc);

/* The output path (-o), or NULL. */
const char *linkcmd_output(const struct linkcmd *lc);

/* What a file is, by its first bytes: IN_BITCODE, IN_ARCHIVE or IN_FILE;
 * IN_NONE if it cannot be opened. */
enum input_kind linkcmd_file_kind(const char *path);
/* Is path an ELF relocatable object (a native .o, compiled without
 * -flto=thin: the link passes it through, MTPC cannot split it)? */
int linkcmd_is_native_object(const char *path);

#endif
