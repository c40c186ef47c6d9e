/* ar.h: static archives of bitcode.
 *
 * lld names archive members "lib.a(b.o at 102)" in --thinlto-index-only mode
 * and the distributed backends then cannot load them as imports, so
 * mtpc-link extracts the members of archives that hold bitcode into the
 * inner build directory and passes them between --start-lib/--end-lib, which
 * keeps the archive's lazy-loading semantics. Reads the System V/GNU format
 * (with the "//" long-name table), BSD "#1/len" names and GNU thin archives. */
#ifndef MTPC_NG_AR_H
#define MTPC_NG_AR_H

#include "buf.h"

/* List the members of archive. For a regular archive each member is written
 * to destdir/<n>-<name> (write-if-changed, so an archive rebuilt with the same
 * content leaves the extracted files alone); for a thin archive the member
 * paths (relative to the archive's directory) are returned as they are.
 * Appends the member paths to members and sets *bitcode when at least one
 * member is bitcode. Returns 0, or -1 after an error message. */
int ar_extract(const char *archive, const char *destdir, struct strv *members, int *bitcode);

#endif
