/* proc.c: see proc.h. */
#define _XOPEN_SOURCE 700 /* putenv */
#include "proc.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Close both ends of a pipe that may not have been opened (-1). */
static void close_pipe(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
}

/* One pipe end we read until EOF into b. */
static void drain(int *fd, struct buf *b)
{
	char chunk[4096];
	ssize_t n = read(*fd, chunk, sizeof chunk);
	if (n > 0)
		buf_addn(b, chunk, (size_t)n);
	else if (n == 0 || errno != EINTR) {
		close(*fd);
		*fd = -1;
	}
}

/* Feed in[0..len) to fd_in and collect fd_out into out and fd_err into err
 * at the same time, so that a child writing much before it has read all
 * its input cannot deadlock against us. Any fd may be -1; all are closed. */
static void pump(int fd_in, const char *in, size_t len, int fd_out, struct buf *out, int fd_err,
		 struct buf *err, const struct proc_io *io)
{
	size_t off = 0;
	if (fd_in >= 0 && len == 0) {
		close(fd_in);
		fd_in = -1;
	}
	if (fd_in >= 0)
		fcntl(fd_in, F_SETFL, O_NONBLOCK); /* write only what fits, then poll */
	while (fd_in >= 0 || fd_out >= 0 || fd_err >= 0) {
		struct pollfd pf[3] = {{fd_in, POLLOUT, 0}, {fd_out, POLLIN, 0}, {fd_err, POLLIN, 0}};
		if (poll(pf, 3, -1) < 0) { /* poll skips the negative fds */
			if (errno == EINTR)
				continue;
			break;
		}
		if (fd_in >= 0 && pf[0].revents) {
			ssize_t w = write(fd_in, in + off, len - off);
			if (w > 0)
				off += (size_t)w;
			/* Done, or the child closed its stdin (EPIPE): stop feeding. */
			if (off == len || (w < 0 && errno != EINTR && errno != EAGAIN)) {
				close(fd_in);
				fd_in = -1;
			}
		}
		if (fd_out >= 0 && pf[1].revents) {
			drain(&fd_out, out);
			if (io->on_out)
				io->on_out(io->on_out_arg, out);
		}
		if (fd_err >= 0 && pf[2].revents)
			drain(&fd_err, err);
	}
	if (fd_in >= 0)
		close(fd_in);
	if (fd_out >= 0)
		close(fd_out);
	if (fd_err >= 0)
		close(fd_err);
}

/* User + system seconds of every child waited for so far. */
static double children_cpu(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int proc_spawn(char *const *argv, const struct proc_io *io)
{
	static const struct proc_io defaults;
	if (!io)
		io = &defaults;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
	/* The child reports a failed exec through ex (close-on-exec). */
	int ex[2] = {-1, -1};
	if ((io->in && pipe(in) < 0) || (io->out && pipe(out) < 0) || (io->err && pipe(err) < 0) ||
	    pipe(ex) < 0) {
		mtpc_error("pipe: %s", strerror(errno));
		close_pipe(in);
		close_pipe(out);
		close_pipe(err);
		close_pipe(ex);
		return 127;
	}
	fcntl(ex[0], F_SETFD, FD_CLOEXEC);
	fcntl(ex[1], F_SETFD, FD_CLOEXEC);
	/* CPU of this child = growth of our waited-for children's total. */
	double cpu0 = io->cpu ? children_cpu() : 0;
	pid_t pid = fork();
	if (pid < 0) {
		mtpc_error("fork: %s", strerror(errno));
		close_pipe(in);
		close_pipe(out);
		close_pipe(err);
		close_pipe(ex);
		return 127;
	}
	if (pid == 0) {
		close(ex[0]);
		if (io->in)
			dup2(in[0], 0);
		if (io->out)
			dup2(out[1], 1);
		if (io->err)
			dup2(err[1], 2);
		close_pipe(in);
		close_pipe(out);
		close_pipe(err);
		for (size_t i = 0; io->env && io->env[i]; i++)
			putenv(io->env[i]);
		int e = 0;
		if (io->cwd && chdir(io->cwd) < 0)
			e = errno;
		else {
			execvp(argv[0], argv);
			e = errno;
		}
		ssize_t w = write(ex[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	close(ex[1]);
	if (io->in)
		close(in[0]);
	if (io->out)
		close(out[1]);
	if (io->err)
		close(err[1]);
	/* A child that exits without reading its input must not kill us. */
	void (*old_pipe)(int) = io->in ? signal(SIGPIPE, SIG_IGN) : SIG_DFL;
	pump(in[1], io->in, io->in_len, out[0], io->out, err[0], io->err, io);
	if (io->in)
		signal(SIGPIPE, old_pipe);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (io->cpu)
		*io->cpu = children_cpu() - cpu0;
	int e = 0;
	ssize_t n = read(ex[0], &e, sizeof e);
	close(ex[0]);
	if (n == (ssize_t)sizeof e && e) {
		/* With a capture buffer the caller reports it (in one line). */
		if (io->err)
			buf_printf(io->err, "cannot run %s: %s\n", argv[0], strerror(e));
		else
			mtpc_error("cannot run %s: %s", argv[0], strerror(e));
		return 127;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int proc_run(char *const *argv, const char *cwd, char *const *env, struct buf *err)
{
	struct proc_io io = {.cwd = cwd, .env = env, .err = err};
	return proc_spawn(argv, &io);
}

char *proc_self_path(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return xstrdup(buf);
}

char *proc_which(const char *prog)
{
	if (strchr(prog, '/'))
		return xstrdup(prog);
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	char *copy = xstrdup(path), *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *d ? d : ".", prog);
		if (access(p, X_OK) == 0) {
			free(copy);
			return p;
		}
		free(p);
	}
	free(copy);
	return NULL;
}
