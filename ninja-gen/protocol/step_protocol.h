/* step_protocol.h: the one definition of the inner edges' command lines.
 *
 * Every edge of an inner build runs the front end again in a step mode:
 *
 *   <front end> --<kind>-step [--<option> VALUE]... [-- <command>...]
 *
 * The graph writes these lines (step_line, step_arg, step_command) and the
 * steps read them (step_parse) from the same two tables, so an option cannot
 * be spelled two ways, be written for a step that ignores it, or be missed
 * by a step that needs it; `<front end> --<kind>-step --help` prints a
 * step's options from them as well. What each step does is in steps/. */
#ifndef MTPC_NG_STEP_PROTOCOL_H
#define MTPC_NG_STEP_PROTOCOL_H

#include "buf.h"

#include <stdio.h>

enum step_kind {
	STEP_THINLINK, /* the index-only thin link; shards copied in if changed */
	STEP_BACKEND,  /* a plain ThinLTO backend compile, checked */
	STEP_SLOT,     /* one partition's compile, checked, its time recorded */
	STEP_SPLIT,    /* mtpc-split of one module, then its dyndep file */
	STEP_MERGE,    /* the partitions' objects back into one native object */
	STEP_JOIN,     /* a compile's pre-link partitions back into one ThinLTO object */
	STEP_RUN,      /* a command in a directory (the final link) */
	STEP_DWP,      /* llvm-dwp of the link output's .dwo files */
	STEP_NODE,     /* a compile on a Slurm node, reporting to a status file */
	STEP_KINDS
};

enum step_opt {
	OPT_CWD, OPT_OUT, OPT_DIR, OPT_TOOL, OPT_MODULE, OPT_INDEX, OPT_PLAN, OPT_PART,
	OPT_CACHE, OPT_KMAX, OPT_RELOC, OPT_MIN_COST, OPT_LLVM_BIN, OPT_DWO, OPT_STATUS,
	OPT_RECORD_MODULE, OPT_NAMES, OPT_GZ, OPT_SPLIT_ARG, OPT_CORES, OPT_RECHECK, STEP_OPTS
};

/* A step's command line, parsed. An option not given is NULL. */
struct step_args {
	enum step_kind kind;
	const char *cwd;      /* --cwd DIR */
	const char *out;      /* --out FILE */
	const char *dir;      /* --dir DIR */
	const char *tool;     /* --tool PATH: mtpc-split */
	const char *module;   /* --module FILE */
	const char *index;    /* --index FILE */
	const char *plan;     /* --plan FILE */
	const char *part;     /* --part I */
	const char *cache;    /* --cache DB */
	const char *kmax;     /* --kmax K */
	const char *reloc;    /* --reloc pic|static */
	const char *min_cost; /* --min-cost C */
	const char *llvm_bin; /* --llvm-bin DIR */
	const char *dwo;      /* --dwo FILE */
	const char *status;   /* --status FILE */
	const char *record_module; /* --record-module PATH */
	const char *names;    /* --names once */
	const char *gz;       /* --gz zlib|zstd */
	const char *cores;    /* --cores C */
	const char *recheck;  /* --recheck FILE */
	struct strv split_args; /* every --split-arg WORD, in order */
	char **cmd;           /* the words after "--" (argv's own), or NULL */
};

/* Which step argv word arg names ("--merge-step"), or -1. */
int step_kind_of(const char *arg);

/* Parse argv (argv[1] the step's flag) into *a (step_args_free it). Returns
 * 0; 1 after printing the step's help (--help); -1 after one error message
 * (an unknown option, one the step does not take, a missing required one or
 * a missing command). */
int step_parse(int argc, char **argv, struct step_args *a);
void step_args_free(struct step_args *a);

/* The help of one step, from the tables. */
void step_usage(FILE *f, enum step_kind kind);

/* Start a step's command line in cmd: "<self> --<kind>-step". */
void step_line(struct strv *cmd, const char *self, enum step_kind kind);

/* Append "--<option> value" (nothing when value is NULL). kind must take the
 * option: anything else is a bug in the graph, which aborts. */
void step_arg(struct strv *cmd, enum step_kind kind, enum step_opt opt, const char *value);

/* Append "--": the step's command follows. */
void step_command(struct strv *cmd);

#endif
