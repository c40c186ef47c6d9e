/* dwp.c: the dwp step, the .dwp package of a -gsplit-dwarf link. */
#include "steps_int.h"
#include "debugfix.h"
#include "proc.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* llvm-dwp of every .dwo the link output names (its skeleton CUs give the
 * paths: ours are absolute, those of native objects relative to their
 * DW_AT_comp_dir) into the .dwp, without the string offsets no unit reads
 * (debugfix_package), written only if changed. */
int dwp_step(const struct step_args *s)
{
	const char *bin = s->llvm_bin ? s->llvm_bin : MTPC_LLVM_BIN_DIR;
	char *tmp = xasprintf("%s.tmp", s->out);
	struct strv cmd = {0};
	strv_addown(&cmd, xasprintf("%s/llvm-dwp", bin));
	strv_addl(&cmd, "-e", s->cmd[0], "-o", tmp, NULL);
	unlink(tmp);
	int st = proc_run(cmd.v, NULL, NULL, NULL);
	strv_free(&cmd);
	int r = 1;
	if (st != 0) {
		mtpc_error("llvm-dwp could not pack the .dwo files of %s into %s", s->cmd[0], s->out);
	} else if (file_size(tmp) < 0) {
		/* No skeleton in the output (no -g): llvm-dwp warns, exits 0 and
		 * writes nothing. An empty package keeps the edge up to date, and
		 * a debugger never opens it without a skeleton that needs it. */
		r = mtpc_write_file(s->out, "", 0, MTPC_WRITE_IF_CHANGED) < 0;
		if (r)
			mtpc_error("cannot write %s: %s", s->out, strerror(errno));
	} else if (debugfix_package(tmp) == 0) {
		r = move_if_changed(tmp, s->out) < 0;
	}
	unlink(tmp);
	free(tmp);
	return r;
}
