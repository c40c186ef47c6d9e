/* lines.c: the real source lines and checksums of a partition. mtpc-split
 * gives the partitions placeholder MD5s and virtual lines (--virtual-lines,
 * common/virtual_lines.h) so that a partition's bitcode changes only when
 * its code does; this file owns putting the real ones back: the map of
 * lines.txt, the checksums in the file entries of the line table headers,
 * the line attributes of the DIEs (patched in place: clang writes lines
 * this large as data4), the line programs (re-encoded: the new table goes
 * to the end of the file, elf_rewrite_section), and the lines in a
 * compiler's messages. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "debugfix_int.h"
#include "util.h"
#include "virtual_lines.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- the map ---------------------------------------------------------- */

/* One decimal field of a map line and the blank after it (sep): 0, or -1
 * if *l does not start with one. Not sscanf: it measures the whole rest of
 * the text on every call, and a map has a line per span. */
static int map_field(const char **l, int sep, unsigned long long *v)
{
	const char *q = *l;
	if (*q < '0' || *q > '9')
		return -1;
	unsigned long long x = 0;
	for (; *q >= '0' && *q <= '9'; q++) {
		if (x > (ULLONG_MAX - 9) / 10)
			return -1;
		x = 10 * x + (unsigned)(*q - '0');
	}
	if (sep && *q++ != sep)
		return -1;
	*l = q;
	*v = x;
	return 0;
}

int debugfix_parse_lines(const char *text, int part, struct line_map *map)
{
	size_t cap = 0;
	map->span = NULL;
	map->n = 0;
	for (const char *l = text; l && *l;) {
		unsigned long long p, v, f, c;
		if (map_field(&l, ' ', &p) || map_field(&l, ' ', &v) || map_field(&l, ' ', &f) ||
		    map_field(&l, 0, &c) || (*l && *l != '\n'))
			goto bad;
		if (p == (unsigned long long)part) {
			const struct line_span *last = map->n ? &map->span[map->n - 1] : NULL;
			if (v < MTPC_VIRTUAL_LINE_BASE || c == 0 || v + c > 2ull * MTPC_VIRTUAL_LINE_BASE ||
			    f == 0 || f + c > MTPC_VIRTUAL_LINE_BASE ||
			    (last && v < (unsigned long long)last->virt + last->count))
				goto bad;
			if (map->n == cap) {
				cap = cap ? 2 * cap : 64;
				map->span = xrealloc(map->span, cap * sizeof *map->span);
			}
			map->span[map->n++] = (struct line_span){(uint32_t)v, (uint32_t)f, (uint32_t)c};
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	return 0;
bad:
	debugfix_free_lines(map);
	return -1;
}

void debugfix_free_lines(struct line_map *map)
{
	free(map->span);
	map->span = NULL;
	map->n = 0;
}

long long debugfix_real_line(const struct line_map *map, uint64_t v)
{
	if (v < MTPC_VIRTUAL_LINE_BASE)
		return (long long)v;
	size_t lo = 0, hi = map ? map->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct line_span *s = &map->span[mid];
		if (v < s->virt)
			hi = mid;
		else if (v >= (uint64_t)s->virt + s->count)
			lo = mid + 1;
		else
			return (long long)s->first + (long long)(v - s->virt);
	}
	return -1;
}

char *debugfix_text(const char *text, const struct line_map *lines)
{
	struct buf b = {0};
	const char *p = text;
	while (*p) {
		/* ":LINE" of ten digits (virtual lines are 2^30 and up) */
		const char *q = strchr(p, ':');
		if (!q) {
			buf_add(&b, p);
			break;
		}
		size_t digits = strspn(q + 1, "0123456789");
		buf_addn(&b, p, (size_t)(q + 1 - p));
		p = q + 1;
		if (digits == 10 && lines) {
			long long real = debugfix_real_line(lines, strtoull(p, NULL, 10));
			if (real >= 0) {
				buf_printf(&b, "%lld", real);
				p += digits;
			}
		}
	}
	return b.s ? b.s : xstrdup("");
}

/* ---- checksums ---------------------------------------------------------- */

/* The value of hex digit c, or -1. */
static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One "PLACEHOLDER REAL" line of checksums.txt as two 16-byte MD5s. */
static int parse_checksum_line(const char *line, unsigned char ph[16], unsigned char real[16])
{
	unsigned char *out[2] = {ph, real};
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 16; i++) {
			int hi = hex_digit(line[2 * i]), lo = hi < 0 ? -1 : hex_digit(line[2 * i + 1]);
			if (lo < 0)
				return -1;
			out[k][i] = (unsigned char)(hi << 4 | lo);
		}
		line += 32;
		if (k == 0 && *line++ != ' ')
			return -1;
	}
	return 0;
}

void lines_patch_checksums(unsigned char *data, size_t len, const char *checksums)
{
	for (const char *line = checksums; line && *line;) {
		unsigned char ph[16], real[16];
		if (parse_checksum_line(line, ph, real) == 0) {
			for (unsigned char *p = data; len >= 16 && p <= data + len - 16;) {
				unsigned char *hit = memmem(p, (size_t)(data + len - p), ph, 16);
				if (!hit)
					break;
				memcpy(hit, real, 16);
				p = hit + 16;
			}
		}
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
}

/* Whether section i of e is a line table with contents. */
static int line_table(const struct elf *e, size_t i)
{
	const char *name = elf_section_name(e, i);
	return (!strcmp(name, ".debug_line") || !strcmp(name, ".debug_line.dwo")) && e->sh[i].sh_type != SHT_NOBITS;
}

void lines_fix_checksums(struct elf *e, const char *checksums)
{
	/* Only in the line tables' file entries, where clang writes them (a
	 * placeholder's 16 bytes could occur anywhere else). */
	for (size_t i = 1; i < e->nsh; i++)
		if (line_table(e, i))
			lines_patch_checksums(e->data + e->sh[i].sh_offset, e->sh[i].sh_size, checksums);
}

/* ---- line attributes ------------------------------------------------------ */

/* Put the real value into a DW_AT_decl_line or DW_AT_call_line at c->p. */
static int fix_line_attr(struct cur *c, uint64_t form, const struct line_map *map)
{
	unsigned char *at = (unsigned char *)c->p;
	uint64_t v;
	int n;
	switch (form) {
	case DW_FORM_data4: v = rd(c, 4); n = 4; break;
	case DW_FORM_data8: v = rd(c, 8); n = 8; break;
	case DW_FORM_udata: v = uleb(c); n = (int)(c->p - at); break;
	default: return dw_skip_form(c, form, 4, 8, 5) < 0 ? -1 : 0; /* too small to be virtual */
	}
	if (c->bad || v < MTPC_VIRTUAL_LINE_BASE)
		return c->bad ? -1 : 0;
	long long real = debugfix_real_line(map, v);
	if (real < 0)
		return -1;
	if (form == DW_FORM_udata)
		return dw_put_uleb_fixed(at, n, (uint64_t)real);
	for (int i = 0; i < n; i++)
		at[i] = (unsigned char)((uint64_t)real >> (8 * i));
	return 0;
}

/* The visit that puts real lines into DW_AT_decl_line and DW_AT_call_line. */
struct line_visit {
	struct visit v;
	const struct line_map *map;
};

static int visit_line(struct visit *v, struct cur *c, const uint64_t spec[3])
{
	if (spec[0] != DW_AT_decl_line && spec[0] != DW_AT_call_line)
		return 1;
	if (spec[1] == DW_FORM_implicit_const && spec[2] >= MTPC_VIRTUAL_LINE_BASE)
		return -1; /* a virtual line in the abbreviation: cannot be patched */
	return fix_line_attr(c, spec[1], ((struct line_visit *)v)->map);
}

/* Real lines into the DIEs of every unit section of e. */
static int fix_line_attrs(struct elf *e, const struct line_map *map)
{
	static const char *const dies[][2] = {
		{".debug_info", ".debug_abbrev"},
		{".debug_info.dwo", ".debug_abbrev.dwo"},
		{".debug_types", ".debug_abbrev"},
		{".debug_types.dwo", ".debug_abbrev.dwo"},
	};
	struct abbrevs t = DW_ABBREVS_NONE;
	struct line_visit lv = {{visit_line, NULL, 0, 0, 0}, map};
	int r = 0;
	for (size_t i = 1; i < e->nsh && r == 0; i++)
		for (size_t k = 0; k < sizeof dies / sizeof *dies; k++) {
			if (strcmp(elf_section_name(e, i), dies[k][0]) || e->sh[i].sh_type == SHT_NOBITS)
				continue;
			size_t ab = elf_find_section(e, dies[k][1]);
			t.offset = ~(uint64_t)0;
			if (!ab || dw_walk_dies(e, i, ab, k >= 2, &t, &lv.v) < 0) {
				e->why = "cannot read its DIEs";
				r = -1;
			}
		}
	dw_abbrevs_free(&t);
	return r;
}

/* ---- line programs ------------------------------------------------------ */

/* Copy old[from..to) to the output as it is. */
static void keep(struct buf *out, struct moves *mv, const unsigned char *sec, size_t from, size_t to)
{
	moves_add(mv, from, out->len, to - from);
	buf_addn(out, (const char *)sec + from, to - from);
}

/* Re-encode one line program (sec[from..to)) with real lines. Opcodes are
 * copied as they are; the advance_line opcodes are dropped and, before each
 * row, one advance_line brings the line register to the row's real line. */
static int fix_program(const unsigned char *sec, size_t from, size_t to, int opcode_base, int line_base,
		       int line_range, const unsigned char *std_lengths, const struct line_map *map,
		       struct buf *out, struct moves *mv)
{
	struct cur c = {sec + from, sec + to, 0};
	int64_t vline = 1, rline = 1; /* line register: as compiled, as written */
	while (c.p < c.end) {
		size_t at = (size_t)(c.p - sec);
		int op = (int)rd(&c, 1), row = 0, reset = 0;
		int64_t delta = 0; /* a special opcode's own line advance */
		if (op >= opcode_base) {
			delta = line_base + (op - opcode_base) % line_range;
			row = 1;
		} else if (op == 0) {
			uint64_t n = uleb(&c);
			int sub = n ? (int)rd(&c, 1) : -1;
			skip(&c, n ? n - 1 : 0);
			row = reset = sub == DW_LNE_end_sequence;
		} else if (op == DW_LNS_advance_line) {
			vline += sleb(&c);
			if (c.bad)
				return -1;
			continue;
		} else if (op == DW_LNS_copy) {
			row = 1;
		} else if (op == DW_LNS_fixed_advance_pc) {
			skip(&c, 2);
		} else {
			for (int k = 0; k < std_lengths[op - 1]; k++)
				uleb(&c);
		}
		if (c.bad)
			return -1;
		if (row) {
			int64_t v = vline + delta, real = v;
			if (v >= (int64_t)MTPC_VIRTUAL_LINE_BASE && (real = debugfix_real_line(map, (uint64_t)v)) < 0)
				return -1;
			if (real - rline - delta) {
				buf_addc(out, DW_LNS_advance_line);
				dw_put_sleb(out, real - rline - delta);
			}
			vline = v;
			rline = real;
		}
		keep(out, mv, sec, at, (size_t)(c.p - sec));
		if (reset)
			vline = rline = 1;
	}
	return 0;
}

/* Every unit of a line table section, re-encoded into out. */
static int fix_line_section(const unsigned char *sec, size_t size, const struct line_map *map,
			    struct buf *out, struct moves *mv)
{
	size_t off = 0;
	mv->old_size = size;
	while (off < size) {
		struct cur c = {sec + off, sec + size, 0};
		int offsz;
		if (dw_enter_unit(&c, &offsz) < 0)
			return -1;
		size_t end = (size_t)(c.end - sec);
		int version = (int)rd(&c, 2);
		if (version >= 5)
			skip(&c, 2); /* address and segment selector sizes */
		uint64_t header_len = rd(&c, offsz);
		if (c.bad || version < 2 || version > 5 || header_len > (uint64_t)(c.end - c.p))
			return -1;
		size_t program = (size_t)(c.p - sec) + (size_t)header_len;
		skip(&c, version >= 4 ? 3 : 2); /* minimum instruction length, max ops, default_is_stmt */
		int line_base = (int8_t)rd(&c, 1), line_range = (int)rd(&c, 1), opcode_base = (int)rd(&c, 1);
		const unsigned char *std_lengths = c.p;
		skip(&c, opcode_base > 0 ? (uint64_t)opcode_base - 1 : 0);
		if (c.bad || line_range == 0 || opcode_base == 0 || c.p > sec + program)
			return -1;
		/* The unit length is rewritten below; it keeps its size and place. */
		size_t unit_out = out->len;
		keep(out, mv, sec, off, program);
		if (fix_program(sec, program, end, opcode_base, line_base, line_range, std_lengths, map, out,
				mv) < 0)
			return -1;
		uint64_t newlen = out->len - unit_out - (offsz == 8 ? 12 : 4);
		if (offsz == 4 && newlen >= 0xfffffff0)
			return -1;
		for (int i = 0; i < offsz; i++)
			out->s[unit_out + (offsz == 8 ? 4 : 0) + i] = (char)(newlen >> (8 * i));
		off = end;
	}
	mv->new_size = out->len;
	return 0;
}

int lines_fix(struct elf *e, const struct line_map *map)
{
	int r = fix_line_attrs(e, map);
	for (size_t i = 1; i < e->nsh && r == 0; i++) {
		if (!line_table(e, i))
			continue;
		struct buf out = {0};
		struct moves mv = {0};
		const unsigned char *sec = e->data + e->sh[i].sh_offset;
		size_t size = e->sh[i].sh_size;
		if (fix_line_section(sec, size, map, &out, &mv) < 0) {
			e->why = "cannot read its line table";
			r = -1;
		} else if ((out.len != size || memcmp(out.s, sec, size)) &&
			   elf_rewrite_section(e, i, out.s, out.len, &mv) < 0) {
			e->why = "a relocation points into a line number";
			r = -1;
		}
		buf_free(&out);
		free(mv.m);
	}
	return r;
}
