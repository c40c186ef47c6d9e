/* step_protocol.c: see step_protocol.h. */
#include "step_protocol.h"
#include "util.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define BIT(o) (1UL << (o))

static const struct {
	const char *flag, *arg, *help;
	size_t field; /* offsetof(struct step_args, ...); 0 for --split-arg */
} opts[STEP_OPTS] = {
	[OPT_CWD] = {"--cwd", "DIR", "run in DIR (the outer build's directory)", offsetof(struct step_args, cwd)},
	[OPT_OUT] = {"--out", "FILE", "the file the step writes (only if its content changed)",
		     offsetof(struct step_args, out)},
	[OPT_DIR] = {"--dir", "DIR", "the inner directory (thin link) or the module's directory",
		     offsetof(struct step_args, dir)},
	[OPT_TOOL] = {"--tool", "PATH", "mtpc-split", offsetof(struct step_args, tool)},
	[OPT_MODULE] = {"--module", "FILE", "the module's bitcode (as the thin link named it)",
			offsetof(struct step_args, module)},
	[OPT_INDEX] = {"--index", "FILE", "the module's ThinLTO index shard", offsetof(struct step_args, index)},
	[OPT_PLAN] = {"--plan", "FILE", "the plan.json of the partition's module", offsetof(struct step_args, plan)},
	[OPT_PART] = {"--part", "I", "the partition's index", offsetof(struct step_args, part)},
	[OPT_CACHE] = {"--cache", "DB", "the plan cache (default: mtpc-cache path)", offsetof(struct step_args, cache)},
	[OPT_KMAX] = {"--kmax", "K", "the module's slots: at most K partitions", offsetof(struct step_args, kmax)},
	[OPT_RELOC] = {"--reloc", "pic|static", "the relocation model of the link",
		       offsetof(struct step_args, reloc)},
	[OPT_MIN_COST] = {"--min-cost", "C", "passed to mtpc-split --min-cost", offsetof(struct step_args, min_cost)},
	[OPT_LLVM_BIN] = {"--llvm-bin", "DIR", "the directory of ld.lld, llvm-objcopy and llvm-dwp",
			  offsetof(struct step_args, llvm_bin)},
	[OPT_DWO] = {"--dwo", "FILE", "the .dwo the compile writes (-gsplit-dwarf)", offsetof(struct step_args, dwo)},
	[OPT_STATUS] = {"--status", "FILE", "where the node step reports what happened",
			offsetof(struct step_args, status)},
	[OPT_RECORD_MODULE] = {"--record-module", "PATH",
			       "record the module's time and rebuilds under PATH in the plan cache",
			       offsetof(struct step_args, record_module)},
	[OPT_NAMES] = {"--names", "once", "list each GNU pubnames name once per module (no .gdb_index)",
		       offsetof(struct step_args, names)},
	[OPT_GZ] = {"--gz", "zlib|zstd", "compress the merged object's debug sections (a compile's -gz)",
		    offsetof(struct step_args, gz)},
	[OPT_SPLIT_ARG] = {"--split-arg", "WORD", "one more word for mtpc-split (repeatable)", 0},
	[OPT_CORES] = {"--cores", "C",
		       "passed to mtpc-split --cores: the cores the slots share, which choose the count",
		       offsetof(struct step_args, cores)},
	[OPT_RECHECK] = {"--recheck", "FILE",
			 "what the choice to split was made from: made again beside the work board now",
			 offsetof(struct step_args, recheck)},
};

static const struct {
	const char *flag, *what, *command;
	unsigned long takes, needs;
	int needs_command; /* the step cannot run without a command after "--" */
} kinds[STEP_KINDS] = {
	[STEP_THINLINK] = {"--thinlink-step",
			   "The index-only thin link into DIR/stage/; each module's shard (and .imports)\n"
			   "is copied to DIR/index/ only if changed (restat). The regular LTO object gets\n"
			   "the visibilities the modules' bitcode gave its symbols. If the linker crashed:\n"
			   "DIR/thinlink.crashed and one warning (the front end then links without MTPC).",
			   "<driver> @thinlink.rsp", BIT(OPT_CWD) | BIT(OPT_DIR) | BIT(OPT_TOOL) | BIT(OPT_LLVM_BIN),
			   BIT(OPT_DIR), 1},
	[STEP_BACKEND] = {"--backend-step",
			  "A ThinLTO backend: fails on a non-zero exit, on \"Error running ThinLTO\n"
			  "backend\" or on an empty object (clang exits 0 there); moves FILE.tmp to\n"
			  "FILE only if changed, the same for the .dwo. On a Slurm allocation the\n"
			  "compile runs as a job step of it.",
			  "<compile command writing FILE.tmp>",
			  BIT(OPT_OUT) | BIT(OPT_DWO) | BIT(OPT_RECORD_MODULE) | BIT(OPT_MODULE), BIT(OPT_OUT), 1},
	[STEP_SLOT] = {"--slot-step",
		       "One partition's compile, with the backend step's checks; records its time and\n"
		       "object size in the plan cache. A failed compile leaves an empty FILE (and\n"
		       ".dwo) and one warning: the merge then compiles the module unsplit.",
		       "<compile command writing FILE.tmp>",
		       BIT(OPT_OUT) | BIT(OPT_DWO) | BIT(OPT_PLAN) | BIT(OPT_PART) | BIT(OPT_CACHE), BIT(OPT_OUT), 1},
	[STEP_SPLIT] = {"--split-step",
			"mtpc-split of the module into DIR/parts, then DIR/split.n and the dyndep file\n"
			"DIR/split.dd. With --index: a link's module, imported first, with placeholder\n"
			"checksums and virtual lines; without: a compile's frontend output as it is.\n"
			"On any failure one warning and a dyndep file that routes the module through\n"
			"its fallback; a module the link does not use (mtpc-split's status 3) the same\n"
			"way, silently (split.n reads \"0 unused\"). With --recheck: first the choice\n"
			"again beside the work board; where the cores have filled since, the module\n"
			"goes through its fallback unsplit (split.n reads \"0 held: <why>\").",
			NULL,
			BIT(OPT_TOOL) | BIT(OPT_MODULE) | BIT(OPT_INDEX) | BIT(OPT_DIR) | BIT(OPT_KMAX) |
				BIT(OPT_RELOC) | BIT(OPT_MIN_COST) | BIT(OPT_CACHE) | BIT(OPT_RECORD_MODULE) |
				BIT(OPT_SPLIT_ARG) | BIT(OPT_CORES) | BIT(OPT_RECHECK),
			BIT(OPT_TOOL) | BIT(OPT_MODULE) | BIT(OPT_DIR) | BIT(OPT_KMAX), 0},
	[STEP_MERGE] = {"--merge-step",
			"The partitions' objects into FILE: real checksums and lines back in each\n"
			"(debugfix), ld.lld -r of several, llvm-objcopy when symbols were promoted or\n"
			"renamed. A link's module: after a failed split a copy of DIR/backend.o; after\n"
			"a failed slot the command (its backend) compiles the module unsplit. A plain\n"
			"compile's (--cwd): after a failed split, slot or merge the command (the plain\n"
			"compile, writing FILE) runs in --cwd. With --dwo, a plain compile's partitions'\n"
			"DIR/p<i>.dwo are merged into that one .dwo (debugfix_dwo_merge).",
			"<backend command or plain compile, for the fallback>",
			BIT(OPT_DIR) | BIT(OPT_OUT) | BIT(OPT_LLVM_BIN) | BIT(OPT_RECORD_MODULE) | BIT(OPT_NAMES) |
				BIT(OPT_CWD) | BIT(OPT_GZ) | BIT(OPT_DWO),
			BIT(OPT_DIR) | BIT(OPT_OUT), 0},
	[STEP_JOIN] = {"--join-step",
		       "The pre-link partitions of a compile's split (DIR/p<i>.o) joined into FILE\n"
		       "(mtpc-split --join: the split's promotions undone, one ThinLTO object with\n"
		       "its summary). After a failed split or a failed slot, or when the join\n"
		       "fails: the command (the plain compile) writes FILE, run in --cwd (the\n"
		       "compile's directory), with one warning (the split's or the slot's own, or\n"
		       "the join's). --split-arg words go to mtpc-split --join too (it takes the\n"
		       "split's options and ignores those that are not the join's:\n"
		       "--no-join-inline is).",
		       "<the plain compile, writing FILE>",
		       BIT(OPT_TOOL) | BIT(OPT_MODULE) | BIT(OPT_DIR) | BIT(OPT_OUT) | BIT(OPT_CWD) |
			       BIT(OPT_SPLIT_ARG),
		       BIT(OPT_TOOL) | BIT(OPT_MODULE) | BIT(OPT_DIR) | BIT(OPT_OUT), 1},
	[STEP_RUN] = {"--run-step", "Runs the command in DIR (the final link, in the outer build's directory).",
		      "<command>", BIT(OPT_CWD), 0, 1},
	[STEP_DWP] = {"--dwp-step",
		      "llvm-dwp of every .dwo the link output's skeleton units name, into FILE (only\n"
		      "if changed; empty when the output has no skeleton unit).",
		      "<link output>", BIT(OPT_OUT) | BIT(OPT_LLVM_BIN), BIT(OPT_OUT), 1},
	[STEP_NODE] = {"--node-step",
		       "A backend or slot compile on a Slurm node: runs the command and writes its\n"
		       "node, times, exit status and CPU seconds to FILE for the step that sent it.",
		       "<compile command>", BIT(OPT_STATUS), BIT(OPT_STATUS), 1},
};

int step_kind_of(const char *arg)
{
	for (int k = 0; arg && k < STEP_KINDS; k++)
		if (!strcmp(arg, kinds[k].flag))
			return k;
	return -1;
}

void step_usage(FILE *f, enum step_kind kind)
{
	fprintf(f, "usage: %s %s [options]%s%s\n(a step of the inner build, written by the front end; not "
		   "for use by hand)\n\n%s\n\noptions:\n",
		mtpc_progname(), kinds[kind].flag, kinds[kind].command ? " -- " : "",
		kinds[kind].command ? kinds[kind].command : "", kinds[kind].what);
	for (int o = 0; o < STEP_OPTS; o++)
		if (kinds[kind].takes & BIT(o)) {
			char *word = xasprintf("%s %s", opts[o].flag, opts[o].arg);
			fprintf(f, "  %-24s %s%s\n", word, opts[o].help, kinds[kind].needs & BIT(o) ? " (required)" : "");
			free(word);
		}
}

int step_parse(int argc, char **argv, struct step_args *a)
{
	memset(a, 0, sizeof *a);
	int k = argc > 1 ? step_kind_of(argv[1]) : -1;
	if (k < 0) {
		mtpc_error("not a step: %s", argc > 1 ? argv[1] : "(none)");
		return -1;
	}
	a->kind = (enum step_kind)k;
	unsigned long given = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			a->cmd = argv + i + 1;
			break;
		}
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			step_usage(stdout, a->kind);
			return 1;
		}
		int o;
		for (o = 0; o < STEP_OPTS && strcmp(argv[i], opts[o].flag); o++)
			;
		if (o == STEP_OPTS || !(kinds[k].takes & BIT(o))) {
			mtpc_error("%s: %s %s (see %s --help)", kinds[k].flag,
				   o == STEP_OPTS ? "unknown option" : "does not take", argv[i], kinds[k].flag);
			return -1;
		}
		if (i + 1 >= argc) {
			mtpc_error("%s: %s needs %s", kinds[k].flag, argv[i], opts[o].arg);
			return -1;
		}
		given |= BIT(o);
		if (o == OPT_SPLIT_ARG)
			strv_add(&a->split_args, argv[++i]);
		else
			*(const char **)((char *)a + opts[o].field) = argv[++i];
	}
	for (int o = 0; o < STEP_OPTS; o++)
		if ((kinds[k].needs & BIT(o)) && !(given & BIT(o))) {
			mtpc_error("%s needs %s %s", kinds[k].flag, opts[o].flag, opts[o].arg);
			return -1;
		}
	if (kinds[k].needs_command && (!a->cmd || !a->cmd[0])) {
		mtpc_error("%s needs -- %s", kinds[k].flag, kinds[k].command);
		return -1;
	}
	return 0;
}

void step_args_free(struct step_args *a)
{
	strv_free(&a->split_args);
}

void step_line(struct strv *cmd, const char *self, enum step_kind kind)
{
	strv_add(cmd, self);
	strv_add(cmd, kinds[kind].flag);
}

void step_arg(struct strv *cmd, enum step_kind kind, enum step_opt opt, const char *value)
{
	if (!(kinds[kind].takes & BIT(opt))) {
		mtpc_error("internal error: %s does not take %s", kinds[kind].flag, opts[opt].flag);
		abort();
	}
	if (!value)
		return;
	strv_add(cmd, opts[opt].flag);
	strv_add(cmd, value);
}

void step_command(struct strv *cmd)
{
	strv_add(cmd, "--");
}
