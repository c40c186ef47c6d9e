/* debugfix.c: the entry points that fix one compiled partition
 * (debugfix_object in memory, debugfix_copy from file to file); the state
 * they carry from one object of a module's `ld.lld -r` to the next (struct
 * debugfix_earlier: sorted sets of strings) is sorted.c's. What each step
 * does is in its own file (debugfix_int.h lists them); here is only the
 * order: checksums, then lines, then, with the earlier objects known, what
 * they make redundant: the debug info of the copies the link discards
 * marked dead, and the tables trimmed. */
#include "debugfix_int.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- one object -------------------------------------------------------------- */

int debugfix_object(char **data, size_t *len, const char *checksums, const struct line_map *lines,
		    struct debugfix_earlier *earlier, const char **why)
{
	struct elf e;
	*why = NULL;
	if (elf_open(&e, (unsigned char *)*data, *len) < 0) {
		if (lines && lines->n) {
			*why = "it is not a 64-bit little-endian ELF file";
			return -1;
		}
		if (checksums && *checksums)
			lines_patch_checksums((unsigned char *)*data, *len, checksums);
		return 0;
	}
	if (checksums && *checksums)
		lines_fix_checksums(&e, checksums);
	int r = lines && lines->n ? lines_fix(&e, lines) : 0;
	if (r == 0 && earlier) {
		struct strv mine = {0};
		unsigned char *gone = discarded_sections(&e, &earlier->groups, &mine);
		sorted_union(&earlier->groups, &mine);
		strv_free(&mine);
		if (gone) {
			tombstones(&e, gone);
			str_offsets_trim(&e, gone);
		}
		free(gone);
		names_dedup(&e, earlier);
	}
	*data = (char *)e.data;
	*len = e.len;
	*why = e.why;
	free(e.sh);
	return r;
}

int debugfix_copy(const char *from, const char *to, const char *checksums, const struct line_map *lines,
		  struct debugfix_earlier *earlier, int only_if_fixed)
{
	char *data, *orig = NULL;
	size_t len, orig_len = 0;
	const char *why;
	if (elf_read_file(from, &data, &len) < 0)
		return -1;
	if (only_if_fixed) {
		orig = xmalloc(len + 1);
		memcpy(orig, data, len);
		orig_len = len;
	}
	if (debugfix_object(&data, &len, checksums, lines, earlier, &why) < 0) {
		mtpc_error("%s: cannot put the real line numbers back: %s", from, why);
		free(data);
		free(orig);
		return -1;
	}
	int r = 1;
	if (only_if_fixed && len == orig_len && !memcmp(data, orig, len))
		r = 0;
	else if (mtpc_write_file(to, data, len, MTPC_WRITE_IF_CHANGED) < 0) {
		mtpc_error("cannot write %s: %s", to, strerror(errno));
		r = -1;
	}
	free(data);
	free(orig);
	return r;
}
