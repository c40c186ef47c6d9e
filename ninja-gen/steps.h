/* steps.h: the hidden modes of mtpc-link that the inner build's edges run.
 *
 *   --thinlink-step --cwd D --dir INNER -- <driver> @thinlink.rsp
 *       index-only thin link into INNER/stage/, then copies each module's
 *       shard (and .imports file) to INNER/index/ only if changed (restat).
 *       If the linker crashed: INNER/thinlink.crashed and one warning.
 *   --backend-step --out F [--dwo W] -- <compile command writing F.tmp>
 *       runs a ThinLTO backend; fails on a non-zero exit, on "Error running
 *       ThinLTO backend" in its stderr or on an empty object (clang exits 0
 *       there, llvm issue 75441); moves F.tmp to F only if changed (the
 *       compile runs as a job step of the link's Slurm allocation, if it
 *       has one: slurm.h). With
 *       --dwo (-gsplit-dwarf) the same for W.tmp -> W (an empty W if the
 *       compile wrote none).
 *   --slot-step --out F [--dwo W] [--plan P --part I --cache DB] -- <command>
 *       the same checks for one partition, then records its compile time and
 *       object size in the plan cache (never fails because of the cache). A
 *       failed compile does not fail the edge either: one warning, an empty F
 *       (and W), which tells the merge to compile the module unsplit.
 *   --split-step --tool T --module M --index S --dir D --kmax K --reloc R
 *                [--min-cost C] [--cache DB] [--split-arg WORD]...
 *       runs mtpc-split (plus the WORDs) into D/parts, writes D/split.n and
 *       the dyndep file D/split.dd (n from plan.json). On ANY failure: one
 *       warning naming the module and a fallback dyndep file that routes
 *       the module through the plain backend D/backend.o, so the build still
 *       succeeds. A module the link does not use (mtpc-split's status 3) takes
 *       the same route without a warning; split.n then reads "0 unused".
 *   --merge-step --dir D --out F --llvm-bin B [--names once] -- <backend command>
 *       puts the real source checksums (D/parts/checksums.txt) and lines
 *       (D/parts/lines.txt) back in place of the placeholders and virtual
 *       lines mtpc-split gave the partitions (debugfix.h): from D/p<i>.o
 *       into D/p<i>.fix.o, and from each slot's D/p<i>.ph.dwo into the
 *       D/p<i>.dwo its skeleton names; drops what earlier partitions make
 *       redundant (with --names once: every GNU name list entry an earlier
 *       partition has, for a link that builds no .gdb_index from them,
 *       debugfix.h names_once); then ld.lld -r of them, then
 *       llvm-objcopy with --localize-symbols=D/parts/localize.txt (the
 *       promoted symbols become local again) and
 *       --redefine-syms=D/parts/rename.txt (they get their own names back).
 *       After a failed split, a copy of D/backend.o; if a slot failed (an
 *       empty p<i>.o) or its debug info cannot be put back, one warning, and
 *       the backend command compiles the module unsplit into D/backend.o,
 *       which is copied instead.
 *   --dwp-step --out F [--llvm-bin B] -- <link output>
 *       llvm-dwp -e <link output> into F (only if changed): every .dwo the
 *       output's skeleton CUs name, in one package next to it (an empty F
 *       when the output has no skeleton CU: llvm-dwp then writes nothing).
 *   --node-step --status F -- <command>
 *       a backend or slot compile as a Slurm job step, on the node
 *       (slurm.h): runs the command and writes its node, times, exit status
 *       and CPU seconds to F for the step that dispatched it.
 *   --run-step --cwd D -- <command>
 *       runs a command in D (the final link, in the outer build directory).
 * Every step returns the process exit status. */
#ifndef MTPC_NG_STEPS_H
#define MTPC_NG_STEPS_H

#include "buf.h"

/* The split's map of placeholder to real source checksums, in D/parts/
 * (mtpc-split --placeholder-checksums; empty without debug info). */
#define STEPS_CHECKSUMS "checksums.txt"
/* The split's map of virtual to real lines, in D/parts/ (mtpc-split
 * --virtual-lines; empty without debug info). */
#define STEPS_LINES "lines.txt"
/* Left in the inner dir by a thin-link step whose linker crashed (an lld
 * bug, not the link's fault): mtpc-link then runs the original command. */
#define STEPS_THINLINK_CRASHED "thinlink.crashed"

/* Is argv[1] a step mode? */
int steps_is_step(const char *arg);
/* Run the step named by argv[1]. */
int steps_main(int argc, char **argv);

/* The dyndep file of a split module in dir (relative to the inner dir):
 * n used slots out of kmax, or the fallback when n == 0. For unit tests. */
void steps_dyndep(struct buf *b, const char *dir, int kmax, int n);

/* Number of partitions in a plan.json text (the length of "partitions"),
 * or -1 if it is not a valid plan. */
int steps_plan_partitions(const char *json);

#endif
