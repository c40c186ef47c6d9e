/* fold_names.h: the contract between the splitter, the pass plugin that
 * folds equal copies of a static (splitter/fold.h, mtpc-fold.so) and the
 * merge step (ninja-gen/steps/merge.c).
 *
 * A plain compile's split gives every partition that calls a small static
 * its own internal copy, and what a partition does not inline stays out of
 * line there: after the merge the object would hold one body per such
 * partition where the unsplit compile has one. So:
 *   - mtpc-split --native marks each such copy with the string function
 *     attribute MTPC_FOLD_ATTR;
 *   - at the end of each partition's optimization the plugin renames every
 *     marked body still there NAME MTPC_FOLD_SUFFIX <MTPC_FOLD_HEX lowercase
 *     hex digits of its content>, a hidden linkonce_odr function in a COMDAT
 *     of that name, so that ld -r keeps one body per content;
 *   - the merge makes every such symbol of the merged object local again
 *     under NAME (mtpc_fold_name), as it does for the promoted statics.
 * Without the plugin nothing is renamed and every copy stays internal. */
#ifndef MTPC_FOLD_NAMES_H
#define MTPC_FOLD_NAMES_H

#include <stddef.h>
#include <string.h>

#define MTPC_FOLD_ATTR "mtpc-fold"
#define MTPC_FOLD_SUFFIX ".mtpc.f"
#define MTPC_FOLD_HEX 16

/* Whether name is a folded body's name; if so, *base_len is the length of
 * the NAME it stands for. */
static inline int mtpc_fold_name(const char *name, size_t *base_len)
{
	size_t n = strlen(name), tail = sizeof MTPC_FOLD_SUFFIX - 1 + MTPC_FOLD_HEX;
	if (n <= tail || strncmp(name + n - tail, MTPC_FOLD_SUFFIX, sizeof MTPC_FOLD_SUFFIX - 1))
		return 0;
	for (const char *p = name + n - MTPC_FOLD_HEX; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	*base_len = n - tail;
	return 1;
}

#endif
