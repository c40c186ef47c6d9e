/* ninja_write.h: the one place that knows Ninja's and the shell's quoting.
 *
 * Everything mtpc-link writes into build.ninja or a dyndep file goes through
 * these functions, so that build directories with spaces, '$' or ':' work:
 *   - paths in build/default statements: '$' -> "$$", ' ' -> "$ ", ':' -> "$:"
 *   - words of a command: quoted for /bin/sh (single quotes when needed),
 *     then '$' doubled because the command is a Ninja variable value.
 * Newlines cannot be expressed in either context; the functions return -1
 * for them and callers give up on the MTPC path (the link then runs as is). */
#ifndef MTPC_NG_NINJA_WRITE_H
#define MTPC_NG_NINJA_WRITE_H

#include "buf.h"

/* Append s escaped as a path in a build/default statement. */
int nw_path(struct buf *b, const char *s);
/* Append s quoted as one shell word (for plain shell use, no Ninja layer). */
int nw_shell_word(struct buf *b, const char *s);
/* Append s as one shell word inside a Ninja "command =" value. */
int nw_cmd_word(struct buf *b, const char *s);
/* Append every word of argv with nw_cmd_word, separated by spaces. */
int nw_cmd_words(struct buf *b, char *const *argv);
/* Append s escaped as a plain Ninja variable value (only '$' is special). */
int nw_value(struct buf *b, const char *s);

/* Append "build OUTS | IOUTS: RULE INS | IMPLICIT || ORDER\n" with escaped
 * paths. Every list is NULL-terminated and may be NULL (or empty). */
int nw_build2(struct buf *b, char *const *outs, char *const *iouts, const char *rule,
	      char *const *ins, char *const *implicit, char *const *order);
/* nw_build2() without implicit outputs. */
int nw_build(struct buf *b, char *const *outs, const char *rule, char *const *ins,
	     char *const *implicit, char *const *order);
/* Append "  NAME = <argv as command words>\n" (an edge's command variable). */
int nw_cmd_var(struct buf *b, const char *name, char *const *argv);

/* A NULL-terminated list literal for the functions above. */
#define NW_LIST(...) ((char *const[]){__VA_ARGS__, NULL})

#endif
