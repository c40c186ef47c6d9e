/* depfile.h: adding dependencies to a compile's Make-style depfile, the one
 * the compiler writes for -MD/-MMD (-MF FILE) and the outer build reads
 * after the compile (Ninja's deps = gcc, a Makefile's include).
 *
 * mtpc-compile adds the options files that shaped a compile's split (the
 * partition count, the cost threshold, the splitter: see mtpc_compile.c),
 * so that changing MTPC_MAX_PARTITIONS reruns the compiles it concerns and
 * no other: the options stay off the compile rule's command line, whose
 * change would recompile every source of the target. */
#ifndef MTPC_NG_DEPFILE_H
#define MTPC_NG_DEPFILE_H

/* Add the files deps (NULL-terminated) as prerequisites of the first target
 * of the depfile at path, as one more rule "<target>: <deps>" at its end
 * (Make and Ninja >= 1.10 merge the rules of one target; a rule appended to
 * the last one's list would land on a -MP phony target). The target is
 * copied as the compiler spelled it; the deps are escaped for Make. A dep
 * the file lists already is not added again. The file is replaced
 * atomically. Returns 1 if it was rewritten, 0 if nothing was to be added,
 * -1 after one warning naming the file (it cannot be read or written, or
 * holds no target: it is then left as it was). */
int depfile_add(const char *path, char *const *deps);

#endif
