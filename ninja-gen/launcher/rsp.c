/* rsp.c: see rsp.h. */
#define _POSIX_C_SOURCE 200809L
#include "rsp.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rsp_tokenize(struct strv *out, const char *s)
{
	struct buf tok = {0};
	int have = 0;
	while (*s) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
			if (have)
				strv_add(out, tok.s ? tok.s : "");
			tok.len = 0;
			if (tok.s)
				tok.s[0] = 0;
			have = 0;
			s++;
			continue;
		}
		have = 1;
		if (*s == '\\' && s[1]) {
			buf_addc(&tok, s[1]);
			s += 2;
			continue;
		}
		if (*s == '\'' || *s == '"') {
			char q = *s++;
			while (*s && *s != q) {
				if (*s == '\\' && s[1])
					s++;
				buf_addc(&tok, *s++);
			}
			if (*s)
				s++;
			continue;
		}
		buf_addc(&tok, *s++);
	}
	if (have)
		strv_add(out, tok.s ? tok.s : "");
	buf_free(&tok);
}

void rsp_word(struct buf *b, const char *s)
{
	if (!*s)
		buf_add(b, "''");
	for (; *s; s++) {
		if (strchr(" \t\n\r'\"\\", *s))
			buf_addc(b, '\\');
		buf_addc(b, *s);
	}
	buf_addc(b, '\n');
}

static int expand(struct strv *out, int argc, char **argv, int depth)
{
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] != '@' || !argv[i][1]) {
			strv_add(out, argv[i]);
			continue;
		}
		if (depth > 16) {
			mtpc_error("response files nested too deeply at %s", argv[i]);
			return -1;
		}
		char *text;
		size_t len;
		if (mtpc_read_file(argv[i] + 1, &text, &len) < 0) {
			/* clang keeps an unreadable @word as it is; so do we. */
			strv_add(out, argv[i]);
			continue;
		}
		struct strv words = {0};
		rsp_tokenize(&words, text);
		free(text);
		int r = expand(out, (int)words.n, words.v, depth + 1);
		strv_free(&words);
		if (r < 0)
			return -1;
	}
	return 0;
}

int rsp_expand(struct strv *out, int argc, char **argv)
{
	return expand(out, argc, argv, 0);
}

