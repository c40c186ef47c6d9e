/* compilecmd.h: understanding the original compile command.
 *
 * mtpc-compile receives the compile command the build would have run (a
 * clang/clang++ driver invocation, as a ccache-style prefix). compilecmd_parse()
 * expands @response files, finds the one source file and the output, and
 * decides whether the compile can be split at all: an optimizing compile
 * (-c, -O1 and up) of one C or C++ source into an object, either a ThinLTO
 * compile (-flto=thin: the partitions run the pre-link pipeline and are
 * joined into one ThinLTO object) or a plain one (no -flto: the partitions
 * are optimized and compiled to native objects, merged with ld -r), with
 * nothing that must see the whole module inside LLVM's pipeline (the
 * sanitizers that instrument there, IR profiles, optimization records, ...).
 * Anything else runs exactly as given. From the classification it writes
 * the commands of the split: the frontend with LLVM's passes off, and the
 * compile of one partition. */
#ifndef MTPC_NG_COMPILECMD_H
#define MTPC_NG_COMPILECMD_H

#include "buf.h"

struct compilecmd {
	struct strv args;     /* the expanded command, args.v[0] the driver */
	unsigned char *drop;  /* per word of args: not for a partition's compile
	                       * (the source, -o, the preprocessor's and the
	                       * dependency files' options, a precompiled header:
	                       * the frontend reads it, the IR holds what it gave) */
	int src;              /* index of the source file, or -1 */
	int out;              /* index of the word holding the output path, or -1 */
	int out_joined;       /* that word is "-o<path>" */
	int deps;             /* -MD or -MMD: the frontend writes the depfile */
	int deps_target;      /* -MT or -MQ given (else the frontend must name the
	                       * real output as the depfile's target) */
	int depfile;          /* index of the word holding the -MF path, or -1 */
	int depfile_joined;   /* that word is "-MF<path>" */
	char opt[4];          /* the -O level: "0".."3", "s", "z", "g" */
	int native;           /* a plain compile to a native object (no -flto),
	                       * else a ThinLTO compile */
	const char *gz;       /* -gz's format for the merge's ld -r ("zlib",
	                       * "zstd"), or NULL: uncompressed debug sections */
	int split_dwarf;      /* -gsplit-dwarf (DWARF 5, its own file): the
	                       * compile writes compilecmd_dwo() beside the
	                       * object, which only --merge-dwo splits */
	const char *why_not;  /* NULL: can be split; else why it runs as given
	                       * (a static string, for messages) */
	const char *fold_plugin; /* the pass plugin a plain compile's partitions
	                          * load (-fpass-plugin; common/fold_names.h),
	                          * or NULL; the caller's string */
};

/* Parse argv[0..argc-1]. Returns 0, or -1 after one error message (a
 * response file that cannot be read). why_not says whether to split. */
int compilecmd_parse(struct compilecmd *cc, int argc, char **argv);
void compilecmd_free(struct compilecmd *cc);

/* The source and output paths (NULL if none). */
const char *compilecmd_source(const struct compilecmd *cc);
const char *compilecmd_output(const struct compilecmd *cc);

/* The depfile the compile writes (heap string), or NULL without -MD/-MMD:
 * -MF's path, else clang's default, the output's with its extension
 * replaced by ".d". */
char *compilecmd_depfile(const struct compilecmd *cc);

/* The .dwo a -gsplit-dwarf compile writes (heap string), as clang names
 * it: the output's path with its extension replaced by ".dwo". NULL
 * without split DWARF. */
char *compilecmd_dwo(const struct compilecmd *cc);

/* The frontend's command into cmd: the compile as given, writing bitcode
 * (-emit-llvm for a plain compile) without running LLVM's passes (-Xclang
 * -disable-llvm-passes) to bc, the depfile (if any) still naming the real
 * output and written where the compile writes it (not next to bc). */
void compilecmd_frontend(const struct compilecmd *cc, const char *bc, struct strv *cmd);

/* The compile of one partition into cmd: the driver and every flag of the
 * compile that is not the preprocessor's, on "-x ir in", writing out (the
 * ThinLTO pre-link pipeline of the compile's own -O level and flags, or for
 * a plain compile its whole pipeline and code generation, with
 * cc->fold_plugin loaded when set). With split
 * DWARF and dwo_out, its split units go to dwo_out and its skeleton names
 * the compile's .dwo (compilecmd_split_dwarf_flags). */
void compilecmd_partition(const struct compilecmd *cc, const char *in, const char *out, const char *dwo_out,
			  struct strv *cmd);

/* With split DWARF, the options that make a compile write its split units
 * to dwo_out while its skeleton unit names the compile's own .dwo
 * (compilecmd_dwo): a partition's compile, and the merge's fallback, which
 * compiles into the inner directory. Nothing otherwise. */
void compilecmd_split_dwarf_flags(const struct compilecmd *cc, const char *dwo_out, struct strv *cmd);

#endif
