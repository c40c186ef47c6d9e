/* workboard.c: see workboard.h. */
#define _DEFAULT_SOURCE /* flock */
#include "workboard.h"
#include "jobs.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define NOTICE_PREFIX "work."
/* At most this many of its longest task's worth of work: a notice of a few
 * long tasks, which hold their lanes. */
#define FEW_TASKS 2.5
/* Ancestors looked at for notices of one's own (ninja, a shell, the front
 * end, the outer ninja, make...: a few levels). */
#define OWN_LINE_MAX 16

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int workboard_post(struct work_notice *n, double work, double duration, double task)
{
	char *dir = jobs_pool_dir();
	if (!dir) {
		workboard_withdraw(n);
		return -1;
	}
	char *path = xasprintf("%s/" NOTICE_PREFIX "%ld", dir, (long)getpid());
	char *tmp = xasprintf("%s.tmp", path);
	free(dir);
	double now = wall_now();
	char line[128];
	int len = snprintf(line, sizeof line, "%.3f %.3f %.3f %.3f\n", now, work > 0 ? work : 0,
			   now + (duration > 0 ? duration : 0), task > 0 ? task : 0);
	/* Locked before it is renamed into place: a reader never sees a
	 * notice of ours unlocked, which would read as one left behind. */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ok = fd >= 0 && write(fd, line, (size_t)len) == len && flock(fd, LOCK_SH) == 0 && rename(tmp, path) == 0;
	if (!ok) {
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		free(tmp);
		free(path);
		workboard_withdraw(n);
		return -1;
	}
	free(tmp);
	/* A notice posted before is replaced by the rename: its fd only. */
	if (n->fd >= 0)
		close(n->fd);
	free(n->path);
	n->fd = fd;
	n->path = path;
	return 0;
}

void workboard_withdraw(struct work_notice *n)
{
	if (n->path && n->fd >= 0)
		unlink(n->path);
	if (n->fd >= 0)
		close(n->fd);
	free(n->path);
	n->fd = -1;
	n->path = NULL;
}

/* One notice's share left at now into w; removes it if its writer is gone. */
static void read_notice(const char *path, double now, struct work_others *w)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		unlink(path); /* nobody holds it: left behind by a process that ended */
		close(fd);
		return;
	}
	char line[128];
	ssize_t len = read(fd, line, sizeof line - 1);
	close(fd);
	double posted, work, end, task;
	if (len <= 0)
		return;
	line[len] = 0;
	if (sscanf(line, "%lf %lf %lf %lf", &posted, &work, &end, &task) != 4 || end <= now || end <= posted)
		return;
	double left = end - now, width = work / (end - posted);
	/* A few long tasks (workboard.h): a whole compile, a split module's
	 * slots and overhead (about 2.2 slots' worth); a link's many backends
	 * beside its split module are not (SQLite's shell with 28 more
	 * modules: 3.7, bench/busy_bench.py --jobs-kind many). */
	if (task * 2 >= left && work <= task * FEW_TASKS) {
		w->held_lanes += width;
		w->held_work += width * left;
		w->held_until = left > w->held_until ? left : w->held_until;
	} else {
		w->shared_work += width * left;
		w->shared_until = left > w->shared_until ? left : w->shared_until;
	}
	w->count++;
}

/* The pids of this process and of its ancestors (at most n), from
 * /proc/<pid>/stat: an ancestor's notice announces this process's own work
 * (a link's inner build posts one for all its steps). Returns how many. */
static int own_line(long *pids, int n)
{
	int k = 0;
	long pid = (long)getpid();
	while (k < n && pid > 1) {
		pids[k++] = pid;
		char path[64], buf[512];
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		FILE *f = fopen(path, "re");
		size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f)
			fclose(f);
		buf[len] = 0;
		/* "pid (comm) state ppid ...": comm may hold anything, even ')' */
		char *close = strrchr(buf, ')');
		long ppid = 0;
		if (!close || sscanf(close + 1, " %*c %ld", &ppid) != 1)
			break;
		pid = ppid;
	}
	return k;
}

/* Whether notice name ("work.<pid>") is one of pids[n]. */
static int is_own(const char *name, const long *pids, int n)
{
	char *end;
	long pid = strtol(name + strlen(NOTICE_PREFIX), &end, 10);
	for (int i = 0; i < n && !*end; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

void workboard_read(struct work_others *w)
{
	*w = (struct work_others){0, 0, 0, 0, 0, 0, -1};
	char *dir = jobs_pool_dir();
	DIR *d = dir ? opendir(dir) : NULL;
	if (!d) {
		free(dir);
		return;
	}
	double now = wall_now();
	long own[OWN_LINE_MAX];
	int nown = own_line(own, OWN_LINE_MAX);
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *name = e->d_name;
		if (strncmp(name, NOTICE_PREFIX, strlen(NOTICE_PREFIX)) != 0 || strchr(name + strlen(NOTICE_PREFIX), '.') ||
		    is_own(name, own, nown))
			continue;
		char *path = xasprintf("%s/%s", dir, name);
		read_notice(path, now, w);
		free(path);
	}
	closedir(d);
	free(dir);
	if (w->count)
		w->idle = jobs_idle();
}
