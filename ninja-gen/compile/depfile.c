/* depfile.c: see depfile.h. */
#define _POSIX_C_SOURCE 200809L
#include "depfile.h"
#include "buf.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The length of the first target at text: up to the first ':' that ends a
 * target (followed by a blank, a newline or the end; a "C:\..." inside a
 * name is not one), backslash escapes skipped. 0 if there is none. */
static size_t first_target(const char *text)
{
	for (size_t i = 0; text[i]; i++) {
		if (text[i] == '\\' && text[i + 1]) {
			i++;
			continue;
		}
		if (text[i] == ':' && (!text[i + 1] || strchr(" \t\r\n", text[i + 1])))
			return i;
	}
	return 0;
}

/* Append path escaped as a Make prerequisite: ' ' and '#' behind a
 * backslash, '$' doubled (what clang writes, and what Ninja's depfile
 * parser and Make read back; a backslash before another character is
 * itself). */
static void make_path(struct buf *b, const char *path)
{
	for (const char *s = path; *s; s++) {
		if (*s == ' ' || *s == '#')
			buf_addc(b, '\\');
		else if (*s == '$')
			buf_addc(b, '$');
		buf_addc(b, *s);
	}
}

int depfile_add(const char *path, char *const *deps)
{
	char *text;
	size_t len;
	if (mtpc_read_file(path, &text, &len) < 0) {
		mtpc_warn("cannot read the depfile %s: %s", path, strerror(errno));
		return -1;
	}
	size_t tlen = first_target(text);
	const char *t = text;
	while (tlen && (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r'))
		t++, tlen--;
	if (!tlen) {
		mtpc_warn("the depfile %s names no target; left as it is", path);
		free(text);
		return -1;
	}
	struct buf out = {0};
	buf_add(&out, text);
	int added = 0;
	for (char *const *d = deps; *d; d++) {
		struct buf rule = {0};
		buf_printf(&rule, "%.*s: ", (int)tlen, t);
		make_path(&rule, *d);
		buf_addc(&rule, '\n');
		/* a line of its own already (the compiler did not rewrite the file) */
		const char *at = strstr(text, rule.s);
		if (!at || (at != text && at[-1] != '\n')) {
			if (out.len && out.s[out.len - 1] != '\n')
				buf_addc(&out, '\n');
			buf_add(&out, rule.s);
			added = 1;
		}
		buf_free(&rule);
	}
	int r = 0;
	if (added && mtpc_write_file(path, out.s, out.len, 0) < 0) {
		mtpc_warn("cannot write the depfile %s: %s", path, strerror(errno));
		r = -1;
	} else if (added) {
		r = 1;
	}
	buf_free(&out);
	free(text);
	return r;
}
