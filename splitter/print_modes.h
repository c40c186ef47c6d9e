/* print_modes.h: mtpc-split's modes that split nothing but read bitcode
 * files for mtpc-link: --print-cost (which modules are worth splitting)
 * and --print-visibility (the visibilities the final link must keep).
 *
 * Both read every file even after one fails (each failure is reported on
 * one line naming the file), print to stdout, or with out write the file
 * atomically (mtpc_write_file), and return the exit status: 0, or 1 if a
 * file could not be read. */
#ifndef MTPC_PRINT_MODES_H
#define MTPC_PRINT_MODES_H

/* --print-cost: for each file (ThinLTO objects), "INSTRUCTIONS FUNCTIONS
 * FILE" from its summary (mtpc_summary_cost), or "- - FILE" for a file
 * without one. */
int print_costs(char *const *files, int nfiles, const char *out);

/* --print-visibility: `hidden NAME` or `protected NAME` for every symbol
 * that a file's symbol table gives that visibility
 * (mtpc_bitcode_visibility), the most constraining one (hidden) when files
 * disagree, sorted by name. */
int print_visibility(char *const *files, int nfiles, const char *out);

#endif
