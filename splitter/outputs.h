/* outputs.h: mtpc-split's output directory: writing a split's files, and
 * whether the directory already holds them.
 *
 * The files (mtpc-split --help, docs/splitter.md): p0.bc .. p<n-1>.bc,
 * plan.json, localize.txt, rename.txt, and with the EMIT_* debug flags
 * (emit.h) checksums.txt and lines.txt. Each is written atomically and
 * only when its content changes (mtpc_write_file), so Ninja's restat sees
 * unchanged partitions. plan.json is written last, and removed first
 * while the set changes, so a complete plan.json always describes the
 * files beside it. */
#ifndef MTPC_OUTPUTS_H
#define MTPC_OUTPUTS_H

#include "analyze.h"
#include "emit.h"
#include "partition.h"

/* dir/name: heap string. */
char *output_path(const char *dir, const char *name);

/* Whether dir already holds the outputs for exactly this input and options
 * (plan.json's input_hash and options_hash) and debug flags: plan.json,
 * its partitions and localize.txt, and each debug map exactly when its
 * flag is set. */
int outputs_current(const char *dir, const char *input_hash, const char *options_hash, int debug);

/* Write every output of the split into outdir: the partitions (parts[],
 * whose data, checksums and lines are freed), localize.txt and rename.txt
 * from the plan (verbatim: the one partition is the input module as it
 * was, real names and all: plan_rename_list), the debug maps that debug
 * asks for (the others removed), then json as plan.json; partitions of an
 * earlier, larger split are removed. Exits on a write error. */
void write_outputs(const char *outdir, int debug, int verbatim, const struct module_info *mi,
		   const struct split_plan *plan, struct emitted *parts, const char *json);

#endif
