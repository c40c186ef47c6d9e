/* files.c: what every step does with files: sizes, moving a temporary
 * output in only if it changed (so that Ninja's restat stops the rebuild
 * there), and telling a full disk from a compiler's failure. */
#include "steps_int.h"
#include "inner_dir.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

long long file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

/* Move tmp to path only if the content differs (so restat can stop the
 * rebuild there). Returns 0 or -1 after an error message. */
int move_if_changed(const char *tmp, const char *path)
{
	int r = mtpc_copy_file(tmp, path, MTPC_WRITE_IF_CHANGED);
	unlink(tmp);
	return r;
}

/* Move the .dwo a -gsplit-dwarf compile wrote to dwo.tmp in, only if
 * changed. clang 19 writes one even for a module without debug info; should
 * a compile (or a launcher) leave none, the edge still declares it: write it
 * empty (no skeleton refers to it). */
int take_dwo(const char *dwo)
{
	char *tmp = xasprintf("%s.tmp", dwo);
	int r;
	if (file_size(tmp) >= 0) {
		r = move_if_changed(tmp, dwo);
	} else {
		r = mtpc_write_file(dwo, "", 0, MTPC_WRITE_IF_CHANGED);
		if (r < 0)
			mtpc_error("cannot write %s: %s", dwo, strerror(errno));
	}
	free(tmp);
	return r < 0 ? -1 : 0;
}

/* A failure of the machine, not of the input: the disk or the quota is full.
 * The fallbacks below (an empty partition object that makes the merge compile
 * the module unsplit, a fallback dyndep) are recorded by Ninja as a step that
 * succeeded, and would be trusted by every later build until the module
 * changes; a full disk must instead fail the step, so that the next build,
 * with space again, retries it (tests/integration/test_faults.py, full filesystem). */
const char *out_of_space(const char *msg)
{
	static const int codes[] = {ENOSPC, EDQUOT};
	for (size_t i = 0; msg && i < sizeof codes / sizeof codes[0]; i++)
		if (strstr(msg, strerror(codes[i])))
			return strerror(codes[i]);
	return NULL;
}

void mark_unsplit(const char *dir, int unsplit)
{
	char *p = xasprintf("%s/" MOD_UNSPLIT, dir);
	if (unsplit)
		(void)mtpc_write_file(p, "unsplit\n", 8, MTPC_WRITE_IF_CHANGED);
	else
		(void)unlink(p);
	free(p);
}
