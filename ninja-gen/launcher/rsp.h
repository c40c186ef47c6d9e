/* rsp.h: clang's command lines as the front ends receive them: "@file"
 * response files expanded with clang's GNU quoting, and words written back
 * into response files the same way (the inner build's link commands). */
#ifndef MTPC_NG_RSP_H
#define MTPC_NG_RSP_H

#include "buf.h"

/* Expand "@file" words (recursively, GNU quoting as clang does) into out.
 * Returns 0 or -1 after an error message naming the file. */
int rsp_expand(struct strv *out, int argc, char **argv);

/* Tokenize response-file text with clang's GNU rules. */
void rsp_tokenize(struct strv *out, const char *text);

/* Append s to b as one response-file word (escaped for rsp_tokenize and
 * clang), followed by a newline. */
void rsp_word(struct buf *b, const char *s);

#endif
