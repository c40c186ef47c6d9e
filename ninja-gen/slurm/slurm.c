/* slurm.c: see slurm.h. */
#define _POSIX_C_SOURCE 200809L
#include "slurm.h"
#include "step_protocol.h"
#include "jobs.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Bound on Slurm's query and cancel commands, in seconds: a controller
 * that does not answer must not hang the link. */
#define SLURM_QUERY_WAIT "20"

int slurm_parse_executor(const char *arg, int *on)
{
	if (!strcmp(arg, "local") || !strcmp(arg, "slurm")) {
		*on = arg[0] == 's';
		return 0;
	}
	mtpc_error("--executor: expected local or slurm, got '%s'", arg);
	return -1;
}

/* ---- front end ---- */

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	caught = sig;
}

/* SIGINT, SIGTERM and SIGHUP only set caught: the inner Ninja gets them
 * too (one process group, or the outer Ninja's kill of it) and stops its
 * edges; the link then cancels its allocation before it exits. */
static void catch_signals(int on)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on ? on_signal : SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
}

/* Run a Slurm command under timeout(1), its stdout into out (may be NULL)
 * and its stderr into err. Returns its exit status. */
static int slurm_cmd(const char *limit, char *const *argv, struct buf *out, struct buf *err)
{
	struct strv cmd = {0};
	strv_addl(&cmd, "timeout", "-k", "5", limit, NULL);
	for (size_t i = 0; argv[i]; i++)
		strv_add(&cmd, argv[i]);
	struct buf sink = {0};
	struct proc_io io = {.out = out ? out : &sink, .err = err};
	int st = proc_spawn(cmd.v, &io);
	strv_free(&cmd);
	buf_free(&sink);
	return st;
}

static void cancel(const char *job)
{
	char *argv[] = {"scancel", (char *)job, NULL};
	struct buf err = {0};
	slurm_cmd(SLURM_QUERY_WAIT, argv, NULL, &err);
	buf_free(&err);
}

/* An allocation a killed link left behind (its id in job_file). */
static void cancel_stale(const char *job_file)
{
	char *text;
	size_t len;
	if (mtpc_read_file(job_file, &text, &len) < 0)
		return;
	text[strcspn(text, "\n")] = 0;
	if (*text)
		cancel(text);
	free(text);
	unlink(job_file);
}

/* Idle CPUs of the cluster ("sinfo -o %C": allocated/idle/other/total):
 * returns 0 with *idle set (-1 if unreadable), or -1 with sinfo's error
 * message in err when the controller does not answer. */
static int idle_cpus(const char *limit, int *idle, struct buf *err)
{
	char *argv[] = {"sinfo", "-h", "-o", "%C", NULL};
	struct buf out = {0};
	int a, o, t;
	int st = slurm_cmd(limit, argv, &out, err);
	if (st != 0 || !out.s || sscanf(out.s, "%d/%d/%d/%d", &a, idle, &o, &t) != 4)
		*idle = -1;
	buf_free(&out);
	return st == 0 ? 0 : -1;
}

/* CPUs of allocation job ("squeue -o %C"), or -1. */
static int job_cpus(const char *job)
{
	char *argv[] = {"squeue", "-h", "-j", (char *)job, "-o", "%C", NULL};
	struct buf out = {0}, err = {0};
	int n = -1;
	if (slurm_cmd(SLURM_QUERY_WAIT, argv, &out, &err) == 0 && out.s)
		n = atoi(out.s);
	buf_free(&out);
	buf_free(&err);
	return n;
}

/* The job id in salloc's "Granted job allocation N" or "Pending job
 * allocation N"; heap string or NULL. */
static char *job_in(const char *text, const char *what)
{
	const char *p = text ? strstr(text, what) : NULL;
	if (!p)
		return NULL;
	p += strlen(what);
	size_t n = strspn(p, "0123456789");
	return n ? xasprintf("%.*s", (int)n, p) : NULL;
}

/* Does the user's salloc word w set the size of the allocation? */
static int sizes_allocation(const char *w)
{
	static const char *const opts[] = {"-n", "--ntasks", "-N", "--nodes", NULL};
	for (int i = 0; opts[i]; i++) {
		size_t n = strlen(opts[i]);
		if (!strncmp(w, opts[i], n) && (w[n] == 0 || w[n] == '=' || opts[i][1] != '-'))
			return 1;
	}
	return 0;
}

/* The last line of salloc's messages, for the one warning. */
static const char *last_line(struct buf *err)
{
	if (!err->s || !err->len)
		return "no message";
	while (err->len && err->s[err->len - 1] == '\n')
		err->s[--err->len] = 0;
	const char *nl = strrchr(err->s, '\n');
	return nl ? nl + 1 : err->s;
}

/* Status files of steps that were killed (an interrupted link), and the
 * previous link's edges.log: each link starts with an empty record. */
static void clear_status_files(const char *dir)
{
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (!strncmp(e->d_name, "st.", 3) || !strcmp(e->d_name, SLURM_EDGES_LOG)) {
			char *p = xasprintf("%s/%s", dir, e->d_name);
			unlink(p);
			free(p);
		}
	if (d)
		closedir(d);
}

/* salloc for want CPUs (fewer if fewer are idle, unless the user's words
 * size it). Returns the job id (heap), or NULL after one warning (none
 * after Ctrl-C). */
static char *allocate(const struct slurm_opts *o, int want)
{
	int user_sized = 0;
	for (size_t i = 0; i < o->args.n; i++)
		user_sized |= sizes_allocation(o->args.v[i]);
	/* --no-kill: a node that fails takes its steps with it, not the
	 * allocation; the steps are retried on the nodes left. */
	char *wait_s = xasprintf("%d", o->wait), *imm = xasprintf("--immediate=%d", o->wait);
	struct strv argv = {0};
	strv_addl(&argv, "salloc", "--no-shell", "--no-kill", "--job-name=mtpc", imm, NULL);
	struct buf err = {0};
	int idle = -1, st = 0;
	if (!user_sized) {
		/* An unreachable controller shows here already: no salloc then. */
		st = idle_cpus(wait_s, &idle, &err);
		int n = idle > 0 && idle < want ? idle : want;
		strv_addown(&argv, xasprintf("--ntasks=%d", n > 0 ? n : 1));
	}
	strv_addv(&argv, &o->args);
	if (st == 0)
		st = slurm_cmd(wait_s, argv.v, NULL, &err);
	char *job = job_in(err.s, "Granted job allocation ");
	if (st != 0 || !job || caught) {
		/* A job still pending when salloc was stopped: not ours to keep. */
		char *pending = job_in(err.s, "Pending job allocation ");
		if (pending)
			cancel(pending);
		if (job)
			cancel(job);
		free(pending);
		free(job);
		job = NULL;
		if (!caught)
			mtpc_warn("Slurm executor: no allocation (%s); building locally",
				  st == 124 ? "timed out" : last_line(&err));
	}
	buf_free(&err);
	strv_free(&argv);
	free(wait_s);
	free(imm);
	return job;
}

int slurm_begin(struct slurm *s, const struct slurm_opts *o, int want, const char *inner)
{
	memset(s, 0, sizeof s[0]);
	unsetenv(SLURM_ENV_JOB);
	if (!o->on)
		return -1;
	s->job_file = xasprintf("%s/slurm.job", inner);
	catch_signals(1);
	cancel_stale(s->job_file);
	if (want == 0)
		return -1; /* nothing to build: no allocation */
	char *salloc = proc_which("salloc"), *srun = proc_which("srun");
	int have = salloc && srun;
	free(salloc);
	free(srun);
	if (!have) {
		mtpc_warn("Slurm executor: salloc or srun not found on PATH; building locally");
		return -1;
	}
	s->job = allocate(o, want);
	if (!s->job && caught) {
		/* Ctrl-C while waiting: stop now, not after a local build. */
		int sig = caught;
		catch_signals(0);
		raise(sig);
	}
	if (!s->job)
		return -1;
	mtpc_write_file(s->job_file, s->job, strlen(s->job), 0);
	s->cpus = job_cpus(s->job);
	if (s->cpus < 1)
		s->cpus = 1;
	char *dir = xasprintf("%s/slurm", inner), *tries = xasprintf("%d", o->tries);
	clear_status_files(dir);
	mtpc_mkdir_p(dir);
	setenv(SLURM_ENV_JOB, s->job, 1);
	setenv(SLURM_ENV_DIR, dir, 1);
	setenv(SLURM_ENV_TRIES, tries, 1);
	free(dir);
	free(tries);
	return 0;
}

int slurm_end(struct slurm *s)
{
	if (s->job) {
		cancel(s->job);
		unlink(s->job_file);
		unsetenv(SLURM_ENV_JOB);
	}
	free(s->job);
	free(s->job_file);
	s->job = s->job_file = NULL;
	int sig = caught;
	catch_signals(0);
	caught = 0;
	return sig;
}

/* ---- steps ---- */

/* Seconds since the epoch: edges.log compares times taken on different
 * machines (mtpc_now() is a per-machine monotonic clock). */
static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What a node step left in its status file. */
struct node_status {
	char node[64];
	double start, end, cpu;
	int exit; /* -1: the compile did not finish (no exit recorded) */
};

static void read_status(const char *path, struct node_status *ns)
{
	memset(ns, 0, sizeof *ns);
	ns->exit = -1;
	char *text;
	size_t len;
	if (mtpc_read_file(path, &text, &len) < 0)
		return;
	sscanf(text, "node=%63s start=%lf", ns->node, &ns->start);
	const char *p = strstr(text, " end=");
	if (p && sscanf(p, " end=%lf exit=%d cpu=%lf", &ns->end, &ns->exit, &ns->cpu) != 3)
		ns->exit = -1;
	free(text);
}

static void write_status(const char *path, const char *text)
{
	if (mtpc_write_file(path, text, strlen(text), 0) < 0)
		mtpc_warn("cannot write %s: %s", path, strerror(errno));
}

int slurm_node_step(const char *status_file, char *const *cmd)
{
	if (!status_file || !cmd || !cmd[0]) {
		mtpc_error("--node-step needs --status FILE -- COMMAND");
		return 2;
	}
	char host[64] = "";
	const char *node = getenv("SLURMD_NODENAME");
	if (!node || !*node) {
		gethostname(host, sizeof host - 1);
		node = host;
	}
	/* First the node alone: if the compile never ends (the node dies, the
	 * step is killed), the link knows where it ran. */
	double start = wall_now();
	char *line = xasprintf("node=%s start=%.6f\n", node, start);
	write_status(status_file, line);
	free(line);
	double cpu = 0;
	struct proc_io io = {.cpu = &cpu};
	int st = proc_spawn(cmd, &io);
	/* Killed from outside (scancel, a node shutting down, Ctrl-C): no exit
	 * recorded, the link retries the compile. A compiler that crashes
	 * reports it with an exit status of its own. */
	int killed = st == 128 + SIGKILL || st == 128 + SIGTERM || st == 128 + SIGINT ||
		     st == 128 + SIGHUP;
	if (!killed) {
		line = xasprintf("node=%s start=%.6f end=%.6f exit=%d cpu=%.6f\n", node, start,
				 wall_now(), st, cpu);
		write_status(status_file, line);
		free(line);
	}
	return st;
}

/* Append one line to <dir>/edges.log (one write with O_APPEND: lines of
 * steps running at once do not interleave). */
static void log_edge(const char *dir, const char *what, const struct node_status *ns, int try,
		     double ready, double back)
{
	char *path = xasprintf("%s/" SLURM_EDGES_LOG, dir);
	char *line = xasprintf("%s %s %d %.6f %.6f %.6f %.6f %d %.6f\n", what,
			       ns->node[0] ? ns->node : "-", try, ready, ns->start, ns->end, back,
			       ns->exit, ns->cpu);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd >= 0) {
		ssize_t w = write(fd, line, strlen(line));
		(void)w;
		close(fd);
	}
	free(line);
	free(path);
}

/* Is name one of the comma-separated names in list (may be NULL)? */
static int in_list(const char *list, const char *name)
{
	if (!list)
		return 0;
	char *hay = xasprintf(",%s,", list), *needle = xasprintf(",%s,", name);
	int hit = strstr(hay, needle) != NULL;
	free(hay);
	free(needle);
	return hit;
}

int slurm_active(void)
{
	const char *job = getenv(SLURM_ENV_JOB), *dir = getenv(SLURM_ENV_DIR);
	return job && *job && dir && *dir;
}

/* A compile on this machine, within the machine's job budget (jobs.h). */
static int run_local(char *const *cmd, const struct proc_io *io)
{
	struct job_token token;
	jobs_acquire(&token);
	int st = proc_spawn(cmd, io);
	jobs_release(&token);
	return st;
}

int slurm_run(char *const *cmd, const struct proc_io *io, const char *what)
{
	const char *job = getenv(SLURM_ENV_JOB), *dir = getenv(SLURM_ENV_DIR);
	if (!slurm_active())
		return proc_spawn(cmd, io); /* the step holds a token already */
	const char *t = getenv(SLURM_ENV_TRIES);
	int tries = t && atoi(t) > 0 ? atoi(t) : SLURM_DEFAULT_TRIES;
	char *self = proc_self_path();
	struct buf exclude = {0};
	int st = -1;
	for (int try = 1; try <= tries && st < 0; try++) {
		char *status = xasprintf("%s/st.%ld.%d", dir, (long)getpid(), try);
		unlink(status);
		struct strv argv = {0};
		/* One task on one CPU of one node; --exclusive: CPUs no other
		 * step uses; --quit-on-interrupt: Ctrl-C ends the step at once. */
		strv_add(&argv, "srun");
		strv_addown(&argv, xasprintf("--jobid=%s", job));
		strv_addl(&argv, "--exclusive", "-n1", "-N1", "-c1", "--quiet", "--quit-on-interrupt",
			  "--job-name=mtpc", NULL);
		if (exclude.len)
			strv_addown(&argv, xasprintf("--exclude=%s", exclude.s));
		step_line(&argv, self ? self : "mtpc-link", STEP_NODE);
		step_arg(&argv, STEP_NODE, OPT_STATUS, status);
		step_command(&argv);
		for (size_t i = 0; cmd[i]; i++)
			strv_add(&argv, cmd[i]);
		struct proc_io sio = *io;
		sio.cpu = NULL; /* srun's own CPU; the compile's comes from the node */
		double ready = wall_now();
		int srun_st = proc_spawn(argv.v, &sio);
		double back = wall_now();
		struct node_status ns;
		read_status(status, &ns);
		unlink(status);
		log_edge(dir, what, &ns, try, ready, back);
		if (ns.exit >= 0) {
			st = ns.exit;
			if (io->cpu)
				*io->cpu = ns.cpu;
		} else {
			mtpc_warn("%s: the Slurm step failed%s%s (srun exit status %d); %s", what,
				  ns.node[0] ? " on node " : "", ns.node, srun_st,
				  try < tries ? "trying again" : "compiling locally");
			if (ns.node[0] && !in_list(exclude.s, ns.node))
				buf_printf(&exclude, "%s%s", exclude.len ? "," : "", ns.node);
		}
		strv_free(&argv);
		free(status);
	}
	buf_free(&exclude);
	free(self);
	return st >= 0 ? st : run_local(cmd, io);
}
