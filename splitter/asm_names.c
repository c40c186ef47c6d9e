/* asm_names.c: see asm_names.h. */
#include "asm_names.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static int is_ident_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '$';
}

/* The next identifier-like token of asm text from *pos into tok (room for
 * len + 1 bytes); 0 at the end. */
static int asm_next_token(const char *s, size_t len, size_t *pos, char *tok)
{
	size_t i = *pos;
	while (i < len && !is_ident_char((unsigned char)s[i]))
		i++;
	if (i == len)
		return 0;
	size_t j = i;
	while (j < len && is_ident_char((unsigned char)s[j]))
		j++;
	memcpy(tok, s + i, j - i);
	tok[j - i] = 0;
	*pos = j;
	return 1;
}

/* The symbol a token names, or -1. An AT&T immediate (`$sym`, `$$sym` in
 * inline asm) is the symbol too; '$' may also be part of a name. */
static int asm_token_symbol(const struct name_table *names, const char *tok)
{
	int k = name_table_find(names, tok);
	while (k < 0 && *tok == '$')
		k = name_table_find(names, ++tok);
	return k < 0 ? -1 : names->v[k].idx;
}

/* Room in the token buffer for a token of text of len bytes. */
static void reserve_token(struct asm_scan *a, size_t len)
{
	if (len + 1 > a->tok_cap)
		a->tok = xrealloc(a->tok, a->tok_cap = len + 1);
}

void asm_scan_init(struct asm_scan *a, struct module_info *mi)
{
	memset(a, 0, sizeof *a);
	a->mi = mi;
	name_table_of_symbols(mi, &a->names);
}

void asm_scan_inline(struct asm_scan *a, int user, LLVMValueRef inline_asm, struct intlist *refs)
{
	size_t len = 0;
	const char *text = LLVMGetInlineAsmAsmString(inline_asm, &len);
	if (!text || !len)
		return;
	reserve_token(a, len);
	for (size_t pos = 0; asm_next_token(text, len, &pos, a->tok);) {
		int t = asm_token_symbol(&a->names, a->tok);
		if (t < 0 && (t = asm_token_symbol(&a->set_names, a->tok)) >= 0)
			/* The alias A exists only in the object that defines B. */
			intpairs_push(&a->set_uses, user, t);
		if (t < 0)
			continue;
		intlist_push(refs, t);
		a->mi->syms[t].flags |= SF_ASM_NAME;
		a->mi->syms[user].flags |= SF_INLINE_ASM;
	}
}

/* `.symver target, name@V[, ...]` after the `.symver` token: record the
 * versioned name as the object file will hold it (`@@@` defines `name@@V`
 * and drops the target's own name). */
static void parse_symver(struct asm_scan *a, const char *s, size_t len, size_t *pos)
{
	struct module_info *mi = a->mi;
	if (!asm_next_token(s, len, pos, a->tok))
		return;
	int t = asm_token_symbol(&a->names, a->tok);
	if (t >= 0)
		mi->syms[t].flags |= SF_IN_ASM | SF_ASM_NAME;
	size_t i = *pos;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (t < 0 || i == len || s[i] != ',')
		return;
	for (i++; i < len && (s[i] == ' ' || s[i] == '\t');)
		i++;
	size_t j = i;
	while (j < len && !strchr(" \t\r\n,;#\"", s[j]))
		j++;
	char *name = xasprintf("%.*s", (int)(j - i), s + i);
	char *at3 = strstr(name, "@@@");
	if (at3)
		memmove(at3 + 2, at3 + 3, strlen(at3 + 3) + 1);
	if (!strchr(name, '@')) {
		free(name);
		return;
	}
	mi->symvers = xrealloc(mi->symvers, (mi->nsymvers + 1) * sizeof *mi->symvers);
	mi->symvers[mi->nsymvers++] = (struct asm_symver){t, name, at3 != NULL};
}

/* The `.lto_set_conditional A, B` lines of module asm s into set_names
 * (A -> B), before any token is looked up: a line anywhere may name A. */
static void read_set_lines(struct asm_scan *a, const char *s, size_t len)
{
	struct name_table *set = &a->set_names;
	for (size_t line = 0, end; line < len; line = end + 1) {
		const char *nl = memchr(s + line, '\n', len - line);
		end = nl ? (size_t)(nl - s) : len;
		size_t pos = line;
		if (!asm_set_line(s + line, end - line) || !asm_next_token(s, end, &pos, a->tok) ||
		    !asm_next_token(s, end, &pos, a->tok))
			continue;
		char *alias = xstrdup(a->tok);
		int b = asm_next_token(s, end, &pos, a->tok) ? asm_token_symbol(&a->names, a->tok) : -1;
		if (b >= 0) {
			set->v = xrealloc(set->v, (set->n + 1) * sizeof *set->v);
			set->v[set->n++] = (struct name_idx){alias, b};
		} else {
			free(alias);
		}
	}
	name_table_sort(set);
}

/* The tokens of module asm s from pos to end (one line): flag the symbols
 * they name with flags, and the globals of the sections they name. */
static void scan_asm_line(struct asm_scan *a, const char *s, size_t end, size_t pos, unsigned flags,
			  const struct name_table *sect)
{
	struct module_info *mi = a->mi;
	while (asm_next_token(s, end, &pos, a->tok)) {
		const char *tok = a->tok;
		int t = asm_token_symbol(&a->names, tok);
		if (t < 0 && !(flags & SF_IN_ASM))
			continue; /* A of a `.lto_set_conditional` line */
		if (t < 0)
			t = asm_token_symbol(&a->set_names, tok);
		if (t >= 0)
			mi->syms[t].flags |= flags;
		if (strncmp(tok, "__start_", 8) == 0)
			tok += 8;
		else if (strncmp(tok, "__stop_", 7) == 0)
			tok += 7;
		for (int k = name_table_find(sect, tok); k >= 0 && k < sect->n && !strcmp(sect->v[k].name, tok); k++)
			mi->syms[sect->v[k].idx].flags |= SF_ASM_SECTION;
		if (strcmp(a->tok, ".symver") == 0)
			parse_symver(a, s, end, &pos);
	}
}

void asm_scan_module(struct asm_scan *a)
{
	struct module_info *mi = a->mi;
	size_t len;
	const char *s = LLVMGetModuleInlineAsm(mi->mod, &len);
	if (!s || !len)
		return;
	mi->has_asm = 1;
	struct name_table sect;
	name_table_of_sections(mi, &sect);
	reserve_token(a, len);
	read_set_lines(a, s, len);
	for (size_t line = 0, end; line < len; line = end + 1) {
		const char *nl = memchr(s + line, '\n', len - line);
		end = nl ? (size_t)(nl - s) : len;
		/* `.lto_set_conditional` lines go to every partition (asm_set_line):
		 * the names they use keep them, but need not stay with the asm. */
		unsigned flags = asm_set_line(s + line, end - line) ? SF_ASM_NAME : SF_IN_ASM | SF_ASM_NAME;
		scan_asm_line(a, s, end, line, flags, &sect);
	}
	name_table_free(&sect);
}

int asm_set_line(const char *line, size_t len)
{
	static const char directive[] = ".lto_set_conditional";
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	return len > sizeof directive - 1 && !memcmp(line, directive, sizeof directive - 1) &&
	       (line[sizeof directive - 1] == ' ' || line[sizeof directive - 1] == '\t');
}

void asm_scan_free(struct asm_scan *a)
{
	name_table_free(&a->names);
	for (int k = 0; k < a->set_names.n; k++)
		free((char *)a->set_names.v[k].name);
	name_table_free(&a->set_names);
	intpairs_free(&a->set_uses);
	free(a->tok);
	memset(a, 0, sizeof *a);
}
