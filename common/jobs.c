/* jobs.c: see jobs.h. */
#define _DEFAULT_SOURCE /* flock */
#include "jobs.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int jobs_slots(void)
{
	const char *e = getenv(JOBS_ENV_SLOTS);
	if (e && atoi(e) > 0)
		return atoi(e);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* The jobserver make names in MAKEFLAGS. rfd: a non-blocking read end of
 * our own (a fifo opened anew, or the inherited pipe reopened through /proc,
 * so that O_NONBLOCK never changes the file make and its other children
 * share); wfd: the write end, ours too for a fifo (the same file as rfd),
 * inherited otherwise. */
struct jobserver {
	int rfd, wfd, fifo;
};

/* Returns 0, or -1 when there is none or it is not usable. */
static int jobserver_open(struct jobserver *js)
{
	const char *mf = getenv("MAKEFLAGS");
	const char *auth = NULL;
	for (const char *p = mf; p && (p = strstr(p, "--jobserver-")); p++)
		if (!strncmp(p, "--jobserver-auth=", 17) || !strncmp(p, "--jobserver-fds=", 16))
			auth = strchr(p, '=') + 1;
	if (!auth)
		return -1;
	if (!strncmp(auth, "fifo:", 5)) {
		size_t n = strcspn(auth + 5, " ");
		char *path = xasprintf("%.*s", (int)n, auth + 5);
		int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		free(path);
		if (fd < 0)
			return -1;
		*js = (struct jobserver){fd, fd, 1};
		return 0;
	}
	int r, w;
	if (sscanf(auth, "%d,%d", &r, &w) != 2 || r < 0 || w < 0 || fcntl(r, F_GETFD) < 0 || fcntl(w, F_GETFD) < 0)
		return -1; /* make closes them for commands it does not know to be makes */
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", r);
	int fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	*js = (struct jobserver){fd, w, 0};
	return 0;
}

static char *pool_dir(void)
{
	const char *d = getenv(JOBS_ENV_DIR);
	if (d && *d)
		return xstrdup(d);
	const char *run = getenv("XDG_RUNTIME_DIR");
	if (run && *run)
		return xasprintf("%s/mtpc-jobs", run);
	return xasprintf("/tmp/mtpc-jobs-%ld", (long)getuid());
}

/* Created if need be; only a directory of our own (anyone else could hold
 * its locks or write its notices), made private. */
static int pool_usable(const char *dir)
{
	struct stat st;
	if (mtpc_mkdir_p(dir) != 0 || stat(dir, &st) != 0 || st.st_uid != getuid())
		return 0;
	if (st.st_mode & 077)
		chmod(dir, 0700);
	return 1;
}

char *jobs_pool_dir(void)
{
	char *dir = pool_dir();
	if (pool_usable(dir))
		return dir;
	free(dir);
	return NULL;
}

/* Try to flock path without waiting: the open fd, or -1. */
static int try_lock(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -2;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	close(fd);
	return -1;
}

int jobs_idle(void)
{
	const char *implicit = getenv(JOBS_ENV_IMPLICIT), *off = getenv(JOBS_ENV_OFF);
	if ((implicit && *implicit) || (off && !strcmp(off, "1")))
		return -1;
	char *dir = jobs_pool_dir();
	if (!dir)
		return -1;
	int n = jobs_slots(), idle = 0;
	for (int k = 0; k < n; k++) {
		char *slot = xasprintf("%s/slot.%d", dir, k);
		int fd = try_lock(slot);
		free(slot);
		if (fd >= 0) {
			idle++;
			close(fd);
		}
	}
	free(dir);
	return idle;
}

static void nap(int *ms)
{
	struct timespec ts = {0, (long)*ms * 1000000L};
	nanosleep(&ts, NULL);
	if (*ms < 50)
		*ms *= 2;
}

/* With make's jobserver: the front end's implicit token (the lock file
 * JOBS_ENV_IMPLICIT names) or a byte of the pipe, whichever comes first. */
static void acquire_from_make(struct job_token *t, const char *implicit, struct jobserver *js)
{
	for (int ms = 2;;) {
		int fd = try_lock(implicit);
		char c;
		if (fd >= 0) {
			close(js->rfd);
			*t = (struct job_token){.fd = fd};
			return;
		}
		if (read(js->rfd, &c, 1) == 1) {
			if (!js->fifo)
				close(js->rfd);
			*t = (struct job_token){.fd = js->wfd, .pipe = 1, .byte = c, .own = js->fifo};
			return;
		}
		/* Wake on a token in the pipe, or look at the lock again. */
		struct pollfd p = {.fd = js->rfd, .events = POLLIN};
		poll(&p, 1, ms);
		if (ms < 50)
			ms *= 2;
	}
}

static void acquire(struct job_token *t);

int jobs_acquire(struct job_token *t)
{
	*t = (struct job_token){.fd = -1};
	const char *off = getenv(JOBS_ENV_OFF), *held = getenv(JOBS_ENV_HELD);
	if ((off && !strcmp(off, "1")) || (held && !strcmp(held, "1")))
		return 0;
	acquire(t);
	if (t->fd >= 0)
		setenv(JOBS_ENV_HELD, "1", 1);
	return 0;
}

/* jobs_acquire() without the checks and the mark. */
static void acquire(struct job_token *t)
{
	const char *implicit = getenv(JOBS_ENV_IMPLICIT);
	struct jobserver js;
	if (implicit && *implicit && jobserver_open(&js) == 0) {
		acquire_from_make(t, implicit, &js);
		return;
	}
	char *dir = pool_dir();
	int n = jobs_slots(), ok = pool_usable(dir);
	/* Start at a slot of our own, so that processes starting together do
	 * not all probe the same files first. */
	int first = (int)(getpid() % n);
	for (int ms = 2; ok && t->fd < 0;) {
		for (int k = 0; k < n && ok && t->fd < 0; k++) {
			char *slot = xasprintf("%s/slot.%d", dir, (first + k) % n);
			int fd = try_lock(slot);
			free(slot);
			if (fd >= 0)
				t->fd = fd;
			ok = fd != -2;
		}
		if (ok && t->fd < 0)
			nap(&ms);
	}
	if (!ok) {
		static int warned;
		if (!warned++)
			mtpc_warn("cannot use the job pool %s (%s): running without a job budget", dir, strerror(errno));
	}
	free(dir);
}

void jobs_release(struct job_token *t)
{
	if (t->fd < 0)
		return;
	unsetenv(JOBS_ENV_HELD);
	if (t->pipe)
		while (write(t->fd, &t->byte, 1) < 0 && errno == EINTR)
			;
	if (!t->pipe || t->own)
		close(t->fd); /* a lock: drops the flock */
	*t = (struct job_token){.fd = -1};
}

int jobs_share_implicit(const char *path)
{
	struct jobserver js;
	if (jobserver_open(&js) < 0)
		return -1;
	close(js.rfd); /* (for a fifo, also the write end: the steps open their own) */
	setenv(JOBS_ENV_IMPLICIT, path, 1);
	return 0;
}
