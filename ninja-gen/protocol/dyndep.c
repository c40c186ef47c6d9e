/* dyndep.c: see dyndep.h. */
#include "dyndep.h"
#include "inner_dir.h"
#include "ninja_write.h"
#include "util.h"

#include <stdlib.h>

void dyndep_of_split(struct buf *b, const char *dir, int kmax, int n, int fallback_edge)
{
	buf_add(b, "ninja_dyndep_version = 1\n");
	for (int i = 0; i < kmax; i++) {
		char *obj = xasprintf("%s/" MOD_SLOT_FMT, dir, i);
		buf_add(b, "build ");
		nw_path(b, obj);
		buf_add(b, ": dyndep");
		if (i < n) {
			char *bc = xasprintf("%s/" MOD_PARTS "/" SPLIT_PART_FMT, dir, i);
			buf_add(b, " | ");
			nw_path(b, bc);
			free(bc);
		}
		buf_add(b, "\n  restat = 1\n");
		free(obj);
	}
	char *native = xasprintf("%s/" MOD_NATIVE, dir);
	buf_add(b, "build ");
	nw_path(b, native);
	buf_add(b, ": dyndep |");
	if (n == 0 && fallback_edge) {
		char *bk = xasprintf("%s/" MOD_BACKEND, dir);
		buf_addc(b, ' ');
		nw_path(b, bk);
		free(bk);
	}
	for (int i = 0; i < n; i++) {
		char *obj = xasprintf("%s/" MOD_SLOT_FMT, dir, i);
		buf_addc(b, ' ');
		nw_path(b, obj);
		free(obj);
	}
	if (n > 0) {
		char *loc = xasprintf("%s/" MOD_PARTS "/" SPLIT_LOCALIZE, dir);
		char *ren = xasprintf("%s/" MOD_PARTS "/" SPLIT_RENAME, dir);
		buf_addc(b, ' ');
		nw_path(b, loc);
		buf_addc(b, ' ');
		nw_path(b, ren);
		free(loc);
		free(ren);
	}
	buf_add(b, "\n  restat = 1\n");
	free(native);
}
