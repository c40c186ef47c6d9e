/* Unit tests for ninja-gen: Ninja/shell escaping, response-file tokenizing,
 * link command classification, archive extraction, dyndep text, plan
 * reading, the map of virtual lines and a compile's depfile. argv[1]: a temporary directory. Prints "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L /* setenv, nanosleep */
#include "ar.h"
#include "buf.h"
#include "compilecmd.h"
#include "debugfix.h"
#include "depfile.h"
#include "dyndep.h"
#include "graph.h"
#include "linkcmd.h"
#include "ninja_write.h"
#include "outer_log.h"
#include "rsp.h"
#include "sched.h"
#include "steps.h"
#include "util.h"
#include "workboard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "check.h"


static int path_is(const char *in, const char *want)
{
	struct buf b = {0};
	int r = nw_path(&b, in);
	int ok = r == 0 && !strcmp(b.s ? b.s : "", want);
	if (!ok)
		fprintf(stderr, "nw_path(%s) = %s\n", in, b.s ? b.s : "");
	buf_free(&b);
	return ok;
}

static int cmd_is(const char *in, const char *want)
{
	struct buf b = {0};
	int r = nw_cmd_word(&b, in);
	int ok = r == 0 && !strcmp(b.s ? b.s : "", want);
	if (!ok)
		fprintf(stderr, "nw_cmd_word(%s) = %s\n", in, b.s ? b.s : "");
	buf_free(&b);
	return ok;
}

static void test_escaping(void)
{
	CHECK(path_is("a/b.o", "a/b.o"));
	CHECK(path_is("my dir/$x:y.o", "my$ dir/$$x$:y.o"));
	struct buf b = {0};
	CHECK(nw_path(&b, "a\nb") == -1);
	CHECK(nw_cmd_word(&b, "a\nb") == -1);
	buf_free(&b);
	CHECK(cmd_is("-O2", "-O2"));
	CHECK(cmd_is("/a b/c", "'/a b/c'"));
	CHECK(cmd_is("$HOME", "'$$HOME'"));
	CHECK(cmd_is("it's", "'it'\\''s'"));
	CHECK(cmd_is("", "''"));
	CHECK(cmd_is("-Wl,--thinlto-prefix-replace=/;/x/", "'-Wl,--thinlto-prefix-replace=/;/x/'"));
	char *argv[] = {"cc", "a b", "$c", NULL};
	CHECK(nw_cmd_words(&b, argv) == 0 && !strcmp(b.s, "cc 'a b' '$$c'"));
	buf_free(&b);
}

static void test_tokenize(void)
{
	struct strv v = {0};
	rsp_tokenize(&v, "a 'b c' \"d\\\"e\" f\\ g\n\t''  h");
	CHECK(v.n == 6);
	if (v.n == 6) {
		CHECK(!strcmp(v.v[0], "a") && !strcmp(v.v[1], "b c") && !strcmp(v.v[2], "d\"e"));
		CHECK(!strcmp(v.v[3], "f g") && !strcmp(v.v[4], "") && !strcmp(v.v[5], "h"));
	}
	strv_free(&v);
	/* rsp_word output reads back as the same word. */
	const char *words[] = {"plain", "sp ace", "q'uo\"te", "back\\slash", "", "$d:x"};
	struct buf b = {0};
	for (size_t i = 0; i < 6; i++)
		rsp_word(&b, words[i]);
	rsp_tokenize(&v, b.s);
	CHECK(v.n == 6);
	for (size_t i = 0; i < v.n && i < 6; i++)
		CHECK(!strcmp(v.v[i], words[i]));
	strv_free(&v);
	buf_free(&b);
}

static char *put(const char *dir, const char *name, const void *data, size_t len)
{
	char *p = xasprintf("%s/%s", dir, name);
	mtpc_write_file(p, data, len, 0);
	return p;
}

/* One GNU ar member header + data (padded to even length). */
static void ar_member(struct buf *b, const char *name, const char *data, size_t len)
{
	char h[61];
	snprintf(h, sizeof h, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name, "0", "0", "0", "644", len);
	buf_addn(b, h, 60);
	buf_addn(b, data, len);
	if (len & 1)
		buf_addc(b, '\n');
}

static void test_linkcmd_and_ar(const char *dir)
{
	static const char bc[] = "BC\xC0\xDE rest of bitcode";
	char *m1 = put(dir, "m1.o", bc, sizeof bc - 1);
	char *nat = put(dir, "native.o", "\x7f" "ELF....", 8);

	/* An archive: symbol table, long-name table, a bitcode member with a
	 * long name, a native member with a short one. */
	struct buf a = {0};
	buf_add(&a, "!<arch>\n");
	ar_member(&a, "/", "\0\0\0\0", 4);
	const char *longtab = "a_rather_long_member_name.o/\n";
	ar_member(&a, "//", longtab, strlen(longtab));
	ar_member(&a, "/0", bc, sizeof bc - 1);
	ar_member(&a, "n.o/", "\x7f" "ELF", 4);
	char *lib = put(dir, "libx.a", a.s, a.len);
	buf_free(&a);

	char *rsp_text = xasprintf("-O3 '%s' -Wl,--whole-archive %s -Wl,--no-whole-archive", nat, lib);
	char *rsp = put(dir, "link.rsp", rsp_text, strlen(rsp_text));
	char *at = xasprintf("@%s", rsp);
	char *argv[] = {"clang-19", "-shared", m1, at, "-mllvm", "-foo", "--target=x86_64-linux-gnu",
			"-fprofile-instr-use=p.prof", "-o", "out.so", "-L", "m1.o", NULL};
	struct linkcmd lc;
	CHECK(linkcmd_parse(&lc, 12, argv) == 0);
	CHECK(lc.args.n == 16);
	CHECK(lc.mode == MODE_SHARED);
	CHECK(!strcmp(lc.opt, "3"));
	CHECK(lc.kind[2] == IN_BITCODE);
	CHECK(lc.kind[4] == IN_FILE);                      /* native.o from the rsp */
	CHECK(lc.kind[6] == IN_ARCHIVE && lc.whole_archive[6]);
	CHECK(lc.output >= 0 && !strcmp(linkcmd_output(&lc), "out.so"));
	CHECK(lc.kind[lc.args.n - 1] == IN_NONE);          /* -L's value, not an input */
	CHECK(lc.backend_flags.n == 4 && !strcmp(lc.backend_flags.v[1], "-foo"));
	linkcmd_free(&lc);

	char *argv2[] = {"clang", "-no-pie", "-Os", "-oapp", m1, "-Wl,-mllvm,-bar", NULL};
	CHECK(linkcmd_parse(&lc, 6, argv2) == 0);
	CHECK(lc.mode == MODE_STATIC && !strcmp(lc.opt, "2"));
	CHECK(lc.output_joined && !strcmp(linkcmd_output(&lc), "app"));
	CHECK(lc.backend_flags.n == 2 && !strcmp(lc.backend_flags.v[1], "-bar"));
	CHECK(!lc.gdb_index);
	linkcmd_free(&lc);

	/* --gdb-index in either spelling turns type units off (graph.h). */
	char *argv3[] = {"clang", "-Wl,-O1,--gdb-index", "-o", "app", m1, NULL};
	CHECK(linkcmd_parse(&lc, 5, argv3) == 0 && lc.gdb_index);
	linkcmd_free(&lc);
	char *argv4[] = {"clang", "-Xlinker", "--gdb-index", "-o", "app", m1, NULL};
	CHECK(linkcmd_parse(&lc, 6, argv4) == 0 && lc.gdb_index && lc.kind[5] == IN_BITCODE);
	linkcmd_free(&lc);
	/* -Xlinker words mean what the same -Wl, words mean: the last gdb-index
	 * word wins, -mllvm takes the next -Xlinker word, --whole-archive counts. */
	char *argv5[] = {"clang", "-Wl,--gdb-index", "-Xlinker", "--no-gdb-index", "-Xlinker", "-mllvm",
			 "-Xlinker", "-baz", "-Xlinker", "--whole-archive", lib, "-Xlinker", "-no-pie",
			 "-o", "app", m1, NULL};
	CHECK(linkcmd_parse(&lc, 16, argv5) == 0 && !lc.gdb_index && lc.mode == MODE_STATIC);
	CHECK(lc.backend_flags.n == 2 && !strcmp(lc.backend_flags.v[0], "-mllvm") &&
	      !strcmp(lc.backend_flags.v[1], "-baz"));
	CHECK(lc.kind[10] == IN_ARCHIVE && lc.whole_archive[10] && lc.kind[15] == IN_BITCODE);
	linkcmd_free(&lc);

	struct strv mem = {0};
	int bitcode = 0;
	char *dest = xasprintf("%s/extract", dir);
	CHECK(ar_extract(lib, dest, &mem, &bitcode) == 0);
	CHECK(bitcode == 1 && mem.n == 2);
	if (mem.n == 2) {
		CHECK(strstr(mem.v[0], "/0-a_rather_long_member_name.o") != NULL);
		CHECK(strstr(mem.v[1], "/1-n.o") != NULL);
		CHECK(linkcmd_file_kind(mem.v[0]) == IN_BITCODE);
		CHECK(linkcmd_file_kind(mem.v[1]) == IN_FILE);
	}
	strv_free(&mem);
	char *bad = put(dir, "bad.a", "!<arch>\nshort", 13);
	CHECK(ar_extract(bad, dest, &mem, &bitcode) == -1);
	strv_free(&mem);

	char *k1 = graph_module_key("/x/y/m.o"), *k2 = graph_module_key("/x/z/m.o");
	CHECK(!strncmp(k1, "m.o-", 4) && strlen(k1) == 12 && strcmp(k1, k2));
	free(k1);
	free(k2);

	free(dest);
	free(bad);
	free(m1);
	free(nat);
	free(lib);
	free(rsp_text);
	free(rsp);
	free(at);
}

static void test_dyndep_and_plan(void)
{
	struct buf b = {0};
	dyndep_of_split(&b, "mod/a b", 3, 2, 1);
	CHECK(!strcmp(b.s, "ninja_dyndep_version = 1\n"
			   "build mod/a$ b/p0.o: dyndep | mod/a$ b/parts/p0.bc\n  restat = 1\n"
			   "build mod/a$ b/p1.o: dyndep | mod/a$ b/parts/p1.bc\n  restat = 1\n"
			   "build mod/a$ b/p2.o: dyndep\n  restat = 1\n"
			   "build mod/a$ b/native.o: dyndep | mod/a$ b/p0.o mod/a$ b/p1.o "
			   "mod/a$ b/parts/localize.txt mod/a$ b/parts/rename.txt\n  restat = 1\n"));
	buf_free(&b);
	dyndep_of_split(&b, "m", 1, 0, 1);
	CHECK(strstr(b.s, "build m/native.o: dyndep | m/backend.o\n") != NULL);
	CHECK(strstr(b.s, "build m/p0.o: dyndep\n") != NULL);
	buf_free(&b);
	/* A compile's split has no fallback edge: its join compiles unsplit. */
	dyndep_of_split(&b, "m", 1, 0, 0);
	CHECK(strstr(b.s, "build m/native.o: dyndep |\n") != NULL);
	buf_free(&b);
	CHECK(steps_plan_partitions("{\"version\":1,\"partitions\":[{},{},{}]}") == 3);
	CHECK(steps_plan_partitions("{\"partitions\":{}}") == -1);
	CHECK(steps_plan_partitions("not json") == -1);
}

/* Partition shares from the simulated inner build (sched.h). */
static void test_sched(void)
{
	int shares[64], w[32];
	/* sqlite3.c + shell.c on 2 cores: the split (50) runs beside shell.c's
	 * backend (200), so slot 0 starts at 50 and slot 1 at 200; ending
	 * together at (1000 + 50 + 200) / 2 = 625 takes 57.5% / 42.5%. */
	struct sched_mod two[] = {{1000, 1}, {200, 0}};
	sched_shares(two, 2, 2, 2, shares, w);
	CHECK(w[0] == 1 && w[1] == 0);
	CHECK(shares[0] == 23 && shares[1] == 17);
	/* Nothing beside it: both slots start after the split, equal shares. */
	sched_shares(two, 1, 2, 2, shares, w);
	CHECK(w[0] == 0 && shares[0] == SCHED_UNITS / 2 && shares[1] == SCHED_UNITS / 2);
	/* Many small backends: one ends as the split does, still equal. */
	struct sched_mod many[21] = {{1000, 1}};
	for (int i = 1; i < 21; i++)
		many[i] = (struct sched_mod){50, 0};
	sched_shares(many, 21, 2, 2, shares, w);
	CHECK(w[0] == 0);
	/* A small split module next to a long backend: its second slot would
	 * start after half its work; equal shares (extreme ones would flip
	 * with any edit elsewhere). */
	struct sched_mod small[] = {{100, 1}, {2000, 0}};
	sched_shares(small, 2, 2, 2, shares, w);
	CHECK(w[0] == 0 && shares[0] == SCHED_UNITS / 2);
	/* More slots than cores: they queue anyway, no shares. */
	sched_shares(two, 2, 2, 4, shares, w);
	CHECK(w[0] == 0);
	/* Three cores beside backends ending at 300 and 100: slots 0 and 1
	 * start with the split's end (100), slot 2 at 300 and gets the least:
	 * ending together at (2000 + 100 + 100 + 300) / 3 takes 15, 15, 10. */
	struct sched_mod three[] = {{2000, 1}, {300, 0}, {100, 0}};
	sched_shares(three, 3, 3, 3, shares, w);
	CHECK(w[0] == 1 && shares[0] == 15 && shares[1] == 15 && shares[2] == 10);
	CHECK(shares[0] + shares[1] + shares[2] == SCHED_UNITS);
}

/* The map of virtual lines and what reads it (debugfix.h). */
static void test_debugfix(void)
{
	struct line_map m;
	const char *text = "0 1073741824 10 3\n1 1073741824 7 1\n0 1073741827 40 5\n";
	CHECK(debugfix_parse_lines(text, 0, &m) == 0 && m.n == 2);
	CHECK(debugfix_real_line(&m, 12) == 12);                 /* a real line */
	CHECK(debugfix_real_line(&m, 1073741824) == 10);
	CHECK(debugfix_real_line(&m, 1073741826) == 12);
	CHECK(debugfix_real_line(&m, 1073741827) == 40);
	CHECK(debugfix_real_line(&m, 1073741831) == 44);
	CHECK(debugfix_real_line(&m, 1073741832) == -1);         /* virtual, unmapped */
	char *msg = debugfix_text("a.c:1073741828:5: warning: x\nb.c:1073741900:1: y\n", &m);
	CHECK(!strcmp(msg, "a.c:41:5: warning: x\nb.c:1073741900:1: y\n"));
	free(msg);
	/* Not an ELF file: checksums still work, virtual lines cannot. */
	char *data = xstrdup("not an object");
	size_t len = strlen(data);
	const char *why = NULL;
	CHECK(debugfix_object(&data, &len, NULL, &m, NULL, &why) == -1 && why != NULL);
	CHECK(debugfix_object(&data, &len, NULL, NULL, NULL, &why) == 0);
	free(data);
	debugfix_free_lines(&m);
	CHECK(debugfix_parse_lines(text, 1, &m) == 0 && m.n == 1 && debugfix_real_line(&m, 1073741824) == 7);
	debugfix_free_lines(&m);
	CHECK(debugfix_parse_lines(text, 5, &m) == 0 && m.n == 0);
	/* Malformed: spans that overlap, lines that are not virtual, junk. */
	CHECK(debugfix_parse_lines("0 1073741824 1 5\n0 1073741826 9 1\n", 0, &m) == -1 && m.n == 0);
	CHECK(debugfix_parse_lines("0 17 1 5\n", 0, &m) == -1);
	CHECK(debugfix_parse_lines("0 1073741824 x 5\n", 0, &m) == -1);
	CHECK(debugfix_parse_lines("", 0, &m) == 0 && m.n == 0);
}

/* The text of a depfile holding text after depfile_add(deps), or NULL if
 * depfile_add did not return want. */
static char *depfile_after(const char *dir, const char *text, char *const *deps, int want)
{
	char *p = xasprintf("%s/x.d", dir), *data = NULL;
	size_t len;
	int r = mtpc_write_file(p, text, strlen(text), 0) < 0 ? -2 : depfile_add(p, deps);
	if (r != want)
		fprintf(stderr, "depfile_add on \"%s\" returned %d, not %d\n", text, r, want);
	else if (mtpc_read_file(p, &data, &len) < 0)
		data = NULL;
	free(p);
	return data;
}

static void test_depfile(const char *dir)
{
	char *const rsp[] = {"/b/CMakeFiles/mtpc-compile-split.rsp", NULL};
	/* After clang's -MD -MP output: a rule of its own for the first target,
	 * not a prerequisite of the last (phony) rule. */
	char *t = depfile_after(dir, "obj\\ dir/a.o: src/a.c \\\n  src/a.h\n\nsrc/a.h:\n", rsp, 1);
	CHECK(t && !strcmp(t, "obj\\ dir/a.o: src/a.c \\\n  src/a.h\n\nsrc/a.h:\n"
			       "obj\\ dir/a.o: /b/CMakeFiles/mtpc-compile-split.rsp\n"));
	free(t);
	/* Added once; no newline at the end; paths escaped for Make. */
	t = depfile_after(dir, "a.o: a.c\na.o: /b/CMakeFiles/mtpc-compile-split.rsp\n", rsp, 0);
	CHECK(t && !strcmp(t, "a.o: a.c\na.o: /b/CMakeFiles/mtpc-compile-split.rsp\n"));
	free(t);
	char *const odd[] = {"/my dir/$x#.rsp", NULL};
	t = depfile_after(dir, "a.o: a.c", odd, 1);
	CHECK(t && !strcmp(t, "a.o: a.c\na.o: /my\\ dir/$$x\\#.rsp\n"));
	free(t);
	/* No target, no file: a warning, nothing written. */
	t = depfile_after(dir, "\n", rsp, -1);
	CHECK(t && !strcmp(t, "\n"));
	free(t);
	char *missing = xasprintf("%s/none.d", dir);
	CHECK(depfile_add(missing, rsp) == -1 && access(missing, F_OK) < 0);
	free(missing);
	/* Which depfile a compile writes: -MF (separate or joined), else
	 * clang's default next to the output, none without -MD. */
	char *cmds[][9] = {
		{"clang", "-MD", "-MT", "a.o", "-MF", "d/a.o.d", "-c", "a.c", NULL},
		{"clang", "-MMD", "-MFd/x.d", "-c", "a.c", "-o", "o/a.o", NULL},
		{"clang", "-MD", "-c", "a.c", "-o", "o.x/a.o", NULL},
		{"clang", "-MD", "-c", "a.c", "-o", "o.x/a", NULL},
		{"clang", "-c", "a.c", "-o", "a.o", NULL},
	};
	const char *want[] = {"d/a.o.d", "d/x.d", "o.x/a.d", "o.x/a.d", NULL};
	for (int i = 0; i < 5; i++) {
		int n = 0;
		while (cmds[i][n])
			n++;
		struct compilecmd cc;
		CHECK(compilecmd_parse(&cc, n, cmds[i]) == 0);
		char *d = compilecmd_depfile(&cc);
		CHECK(want[i] ? d && !strcmp(d, want[i]) : !d);
		free(d);
		compilecmd_free(&cc);
	}
}

/* The split decision by predicted makespan (makespan.h, makespan_split_choice).
 * NMODS: the modules of a link whose other backends are others_work in
 * backends of others_longest, and the one chosen for. */
#define NMODS(work, longest) ((longest) > 0 ? (size_t)((work) / (longest)) + 1 : 1)
static void test_split_choice(void)
{
	/* SQLite's shell alone on 2 cores: sqlite3.o is the long pole; split. */
	struct split_choice c = makespan_split_choice(221348, 18000, 18000, NMODS(18000, 18000), 2, NULL, 2, -1);
	CHECK(c.parts == 2 && c.whole_span == 221348 && c.split_span == 22134 + 110674);
	/* The link: 34 other backends of 70k keep both cores busy; a
	 * split only adds its overhead. */
	c = makespan_split_choice(368000, 34 * 70000, 70000, NMODS(34 * 70000, 70000), 2, NULL, 2, -1);
	CHECK(c.parts == 0 && c.whole_span == (34 * 70000 + 368000) / 2 && c.split_span > c.whole_span);
	/* The same module alone on 16 cores: every partition shortens it. */
	c = makespan_split_choice(221348, 0, 0, NMODS(0, 0), 16, NULL, 16, -1);
	CHECK(c.parts == 16 && c.split_span == 22134 + 13835);
	/* A gain under SPLIT_MIN_GAIN: not worth a new split, but a module
	 * split last time stays split (the prediction is no longer). */
	c = makespan_split_choice(100000, 82000, 82000, NMODS(82000, 82000), 2, NULL, 2, -1);
	CHECK(c.parts == 0 && c.whole_span == 100000 && c.split_span == 96000);
	CHECK(makespan_split_choice(100000, 82000, 82000, NMODS(82000, 82000), 2, NULL, 2, 1).parts == 2);
	CHECK(makespan_split_choice(100000, 80000, 80000, NMODS(80000, 80000), 2, NULL, 2, -1).parts == 2); /* 5%: enough */
	/* Two partitions already bring it down to what the other work takes:
	 * more would only duplicate more. */
	c = makespan_split_choice(100000, 150000, 30000, NMODS(150000, 30000), 4, NULL, 4, -1);
	CHECK(c.parts == 2 && c.split_span == 65000 && c.whole_span == 100000);
	/* Splitting off. */
	CHECK(makespan_split_choice(1000000, 0, 0, NMODS(0, 0), 8, NULL, 1, -1).parts == 0);

	/* Beside work outside the link (the work board). A long task holds one
	 * of 2 lanes for longer than the module takes whole: the module has
	 * its lane now and ends first either way; not split. */
	struct outside_load held1 = {1, 500000, 500000, 0, 0, -1, 0};
	c = makespan_split_choice(221348, 0, 0, 1, 2, &held1, 2, -1);
	CHECK(c.parts == 0 && c.whole_span == 500000 && c.split_span == 500000);
	/* Held for less than the module takes: it has one lane, then two. */
	held1.held_until = held1.held_work = 100000;
	c = makespan_split_choice(221348, 0, 0, 1, 2, &held1, 2, -1);
	/* split: its work 243482, 100000 on one lane, the rest on two */
	CHECK(c.parts == 2 && c.whole_span == 221348 && c.split_span == 100000 + (243482 - 100000) / 2);
	/* Two long tasks hold both lanes for 120k: either way it starts then,
	 * and then both lanes are free together: split. */
	struct outside_load held2 = {2, 120000, 240000, 0, 0, -1, 0};
	c = makespan_split_choice(221348, 0, 0, 1, 2, &held2, 2, -1);
	CHECK(c.parts == 2 && c.whole_span == 120000 + 221348 && c.split_span == 120000 + 22134 + 110674);
	/* The same, but the pool has a token free right now (the other work is
	 * in a serial step): the module whole takes it and holds it, and the
	 * rest of the work fills the other lane; a split would only add its
	 * overhead. */
	held2.idle = 1;
	c = makespan_split_choice(221348, 0, 0, 1, 2, &held2, 2, -1);
	CHECK(c.parts == 0 && c.whole_span == (221348 + 240000) / 2 && c.split_span == (243482 + 240000 + 1) / 2);
	/* Many short tasks of width 2 for 1000k (another link's backends): any
	 * lane a split frees, they fill; it would only add its overhead. */
	struct outside_load shared = {0, 0, 0, 2000000, 1000000, -1, 0};
	c = makespan_split_choice(221348, 0, 0, 1, 2, &shared, 2, -1);
	CHECK(c.parts == 0 && c.whole_span == 1000000 + 221348 / 2 && c.split_span > c.whole_span);
	/* The same, but ending soon (10k): split as when alone. */
	shared.shared_until = 10000;
	shared.shared_work = 20000;
	CHECK(makespan_split_choice(221348, 0, 0, 1, 2, &shared, 2, -1).parts == 2);
	/* ...unless the outer build kept the other lane busy all through
	 * this link's last run: its next edges take that lane once the
	 * board's work ends (outer_log.h). Half a lane leaves room to split. */
	shared.outer_lanes = 1;
	c = makespan_split_choice(221348, 0, 0, 1, 2, &shared, 2, 1);
	CHECK(c.parts == 0 && c.whole_span == 221348 && c.split_span == (243482 + 221348 + 1) / 2);
	shared.outer_lanes = 0.5;
	CHECK(makespan_split_choice(221348, 0, 0, 1, 2, &shared, 2, -1).parts == 2);
	/* SQLite's shell with the outer build busy beside it: whole. */
	struct outside_load outer = {0, 0, 0, 0, 0, -1, 1.0};
	CHECK(makespan_split_choice(221348, 18000, 18000, 2, 2, &outer, 2, 1).parts == 0);
	char *why = makespan_busy_reason(1, 0, 1.0, &c, 6e-5);
	CHECK(!strncmp(why, "the cores are busy with 1 other backend and the outer build's other edges (1.0 core while "
			    "it ran last time) (predicted ", 106));
	free(why);
}

/* The outer build's last run, from its .ninja_log (outer_log.h). */
static void test_outer_log(const char *dir)
{
	char *d = xasprintf("%s/outer", dir), *log = xasprintf("%s/outer/.ninja_log", dir);
	mtpc_mkdir_p(d);
	CHECK(outer_log_others(d, "app") == -1); /* no log */
	/* Two builds: an older one (another build start), and the last, where
	 * app ran 10-20 s, a.o 0-12 s (2 s beside it), lib 12-22 s (8 s), b.o
	 * 21-30 s (none), and c.o 11-19 s restat (an old mtime: not counted). */
	const char *text = "# ninja log v5\n"
			   "0\t30000\t1700000030000000000\tapp\th\n"
			   "0\t30000\t1700000030000000000\tx.o\th\n"
			   "0\t12000\t1800000012000000000\ta.o\th\n"
			   "11000\t19000\t1700000000000000000\tc.o\th\n"
			   "10000\t20000\t1800000020000000000\tapp\th\n"
			   "12000\t22000\t1800000022000000000\tlib\th\n"
			   "21000\t30000\t1800000030000000000\tb.o\th\n";
	CHECK(mtpc_write_file(log, text, strlen(text), 0) >= 0);
	CHECK(outer_log_others(d, "app") == 1.0);
	CHECK(outer_log_others(d, "./app") == 1.0);
	char *abs = xasprintf("%s/app", d);
	CHECK(outer_log_others(d, abs) == 1.0);
	free(abs);
	CHECK(outer_log_others(d, "lib") == 0.9); /* app 12-20 and b.o 21-22 of its 12-22 */
	CHECK(outer_log_others(d, "none") == -1);
	CHECK(mtpc_write_file(log, "# ninja log v4\n", 15, 0) >= 0);
	CHECK(outer_log_others(d, "app") == -1);
	free(log);
	free(d);
}

/* In a child: makespan_recheck(r) as the exit status (1: the split still
 * pays), and that it saw the board it should (count notices). */
static int recheck_in_child(const struct split_recheck *r, int count)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct work_others w;
		workboard_read(&w);
		char *why = NULL;
		int pays = makespan_recheck(r, &why);
		free(why);
		_exit(w.count != count ? 3 : pays);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The split step's second look (makespan.h, struct split_recheck): the
 * line the graph writes and the step reads, and the choice made again
 * beside the board, which never counts the notice of an ancestor (the
 * link's own, posted for its whole inner build). */
static void test_recheck(const char *dir)
{
	/* SQLite's shell alone on 2 cores: split (as in test_split_choice) */
	struct split_recheck r = {221348, 18000, 18000, 2, 2, 2, 6e-5, 0}, back;
	struct buf b = {0};
	makespan_recheck_format(&b, &r);
	CHECK(!strcmp(b.s, "221348 18000 18000 2 2 2 6e-05 0\n"));
	CHECK(makespan_recheck_parse(b.s, &back) == 0 && back.cost == r.cost && back.others_work == r.others_work &&
	      back.others_longest == r.others_longest && back.nmods == 2 && back.jobs == 2 && back.parts == 2 &&
	      back.spc == r.spc && back.outer_lanes == 0);
	buf_free(&b);
	CHECK(makespan_recheck_parse("221348 18000 18000 2 2 2 6e-05 0.75\n", &back) == 0 && back.outer_lanes == 0.75);
	CHECK(makespan_recheck_parse("221348 18000 18000 2 2 2 6e-05", &back) < 0);      /* short */
	CHECK(makespan_recheck_parse("221348 18000 18000 2 2 1 6e-05 0\n", &back) < 0); /* 1 partition */
	CHECK(makespan_recheck_parse("221348 18000 18000 0 2 2 6e-05 0\n", &back) < 0); /* no module */
	CHECK(makespan_recheck_parse("221348 18000 18000 2 2 2 6e-05 -1\n", &back) < 0);
	CHECK(makespan_recheck_parse("221348 18000 18000 2 2 2 6e-05 0 x\n", &back) < 0);
	CHECK(makespan_recheck_parse(NULL, &back) < 0);

	char *pool = xasprintf("%s/pool", dir);
	setenv("MTPC_JOBS_DIR", pool, 1);
	setenv("MTPC_JOB_SLOTS", "2", 1);
	char *why = NULL;
	CHECK(makespan_recheck(&r, &why) == 1 && !why); /* empty board */
	/* Another link's backends for 1000 s on both lanes: held, and why. */
	int go[2];
	CHECK(pipe(go) == 0);
	pid_t other = fork();
	if (other == 0) {
		close(go[1]);
		struct work_notice n = WORK_NOTICE_INIT;
		workboard_post(&n, 2000, 1000, 1);
		char c;
		while (read(go[0], &c, 1) > 0) /* until the test closes it */
			;
		workboard_withdraw(&n);
		_exit(0);
	}
	close(go[0]);
	for (int i = 0; i < 500; i++) { /* until it is posted (5 s at most) */
		struct work_others w;
		workboard_read(&w);
		if (w.count)
			break;
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	CHECK(makespan_recheck(&r, &why) == 0 && why &&
	      !strncmp(why, "the cores are busy with 1 other backend and 1 other MTPC job (predicted ", 72));
	free(why);
	close(go[1]);
	waitpid(other, NULL, 0);
	/* The same notice, but this process's own: a child (a split step of
	 * this link) does not count it. */
	struct work_notice own = WORK_NOTICE_INIT;
	CHECK(workboard_post(&own, 2000, 1000, 1) == 0);
	CHECK(recheck_in_child(&r, 0) == 1);
	workboard_withdraw(&own);
	unsetenv("MTPC_JOBS_DIR");
	unsetenv("MTPC_JOB_SLOTS");
	free(pool);
}

int main(int argc, char **argv)
{
	const char *tmp = argc > 1 ? argv[1] : "/tmp";
	char *dir = xasprintf("%s/ninja_gen_test_%d", tmp, (int)getpid());
	mtpc_mkdir_p(dir);
	test_escaping();
	test_tokenize();
	test_linkcmd_and_ar(dir);
	test_dyndep_and_plan();
	test_sched();
	test_debugfix();
	test_depfile(dir);
	test_split_choice();
	test_recheck(dir);
	test_outer_log(dir);
	free(dir);
	return CHECK_REPORT();
}
