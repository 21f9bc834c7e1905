/* SPDX-License-Identifier: MIT */
/* The launcher's status socket for `ulps` (status.h). */
#include "status.h"
#include "pvas.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

struct client {
	int fd; /* -1: free slot */
	char *buf;
	size_t len, off;
};

struct status_server {
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct client c[STATUS_MAX_CLIENTS];
};

const char *status_dir(void)
{
	const char *d = getenv(STATUS_DIR_ENV);

	return d && *d ? d : STATUS_DIR_DEFAULT;
}

/* The folder exists (made like /tmp when missing) and nobody else can swap our names in it. */
static int safe_dir(const char *d)
{
	struct stat st;

	if (mkdir(d, 01777) == 0)
		chmod(d, 01777); /* mkdir applies the umask */
	if (lstat(d, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return 0;
	return !(st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_mode & S_ISVTX);
}

/* Names of launchers that died without removing theirs (SIGKILL): their PID is gone. ulps
 * removes such names too, on a refused connect; this keeps the folder small without it. */
static void sweep(const char *d)
{
	DIR *dir = opendir(d);
	struct dirent *e;

	if (!dir)
		return;
	while ((e = readdir(dir)) != NULL) {
		char *end, path[sizeof(((struct sockaddr_un *)0)->sun_path)];
		long pid = strtol(e->d_name, &end, 10);

		if (e->d_name[0] < '1' || e->d_name[0] > '9' || *end || pid > INT_MAX ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", d, e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(dir);
}

struct status_server *status_open(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *d = status_dir();
	struct status_server *s;
	int i;

	if (!safe_dir(d))
		return NULL;
	sweep(d);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	for (i = 0; i < STATUS_MAX_CLIENTS; i++)
		s->c[i].fd = -1;
	if (snprintf(s->path, sizeof(s->path), "%s/%d", d, (int)getpid()) >= (int)sizeof(s->path))
		goto fail;
	memcpy(sa.sun_path, s->path, sizeof(s->path));
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0)
		goto fail;
	/* out of the numbers the ULPs' first opens get */
	s->lfd = pvas_fd_high(s->lfd);
	unlink(s->path); /* a name left by an earlier process with our PID, killed */
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(s->lfd, 8) != 0) {
		close(s->lfd);
		goto fail;
	}
	chmod(s->path, 0600); /* as /proc/PID of a process that is not dumpable: ours only */
	return s;
fail:
	free(s);
	return NULL;
}

static void drop(struct client *c)
{
	close(c->fd);
	free(c->buf);
	*c = (struct client){.fd = -1};
}

void status_close(struct status_server *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < STATUS_MAX_CLIENTS; i++)
		if (s->c[i].fd >= 0)
			drop(&s->c[i]);
	unlink(s->path);
	close(s->lfd);
	free(s);
}

int status_pollfds(const struct status_server *s, int *fds, short *events, int max)
{
	int n = 0, i;

	if (!s || max < 1)
		return 0;
	fds[n] = s->lfd;
	events[n++] = POLLIN;
	for (i = 0; i < STATUS_MAX_CLIENTS && n < max; i++) {
		if (s->c[i].fd < 0)
			continue;
		fds[n] = s->c[i].fd;
		events[n++] = POLLOUT;
	}
	return n;
}

/* Write what the peer takes without blocking; drop it when done or gone. */
static void flush(struct client *c)
{
	while (c->off < c->len) {
		ssize_t w =
		    send(c->fd, c->buf + c->off, c->len - c->off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return; /* POLLOUT brings us back */
		if (w <= 0)
			break;
		c->off += (size_t)w;
	}
	drop(c);
}

void status_io(struct status_server *s, int fd, void (*snapshot)(void *arg, FILE *f), void *arg)
{
	int i;

	if (!s)
		return;
	if (fd != s->lfd) {
		for (i = 0; i < STATUS_MAX_CLIENTS; i++)
			if (s->c[i].fd == fd)
				flush(&s->c[i]);
		return;
	}
	for (;;) {
		int cfd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct client *c = NULL;
		FILE *f;

		if (cfd < 0)
			return; /* EAGAIN: no more waiting */
		for (i = 0; i < STATUS_MAX_CLIENTS && !c; i++)
			if (s->c[i].fd < 0)
				c = &s->c[i];
		if (!c) {
			close(cfd); /* too many at once: that ulps sees no answer and says so */
			continue;
		}
		c->fd = cfd;
		f = open_memstream(&c->buf, &c->len);
		if (!f) {
			drop(c);
			continue;
		}
		snapshot(arg, f);
		if (fclose(f) != 0) {
			drop(c);
			continue;
		}
		c->off = 0;
		flush(c);
	}
}

/* Names of the calls a ULP or a process can be found waiting in; numbers from <sys/syscall.h>,
 * so right for the architecture built for. */
const char *status_sysname(int nr)
{
	static const struct {
		int nr;
		const char *name;
	} t[] = {
	    {SYS_read, "read"},
	    {SYS_write, "write"},
	    {SYS_readv, "readv"},
	    {SYS_writev, "writev"},
	    {SYS_pread64, "pread64"},
	    {SYS_pwrite64, "pwrite64"},
	    {SYS_openat, "openat"},
	    {SYS_recvfrom, "recvfrom"},
	    {SYS_sendto, "sendto"},
	    {SYS_recvmsg, "recvmsg"},
	    {SYS_sendmsg, "sendmsg"},
	    {SYS_accept4, "accept4"},
	    {SYS_connect, "connect"},
	    {SYS_ppoll, "ppoll"},
	    {SYS_pselect6, "pselect6"},
	    {SYS_epoll_pwait, "epoll_pwait"},
	    {SYS_clock_nanosleep, "clock_nanosleep"},
	    {SYS_nanosleep, "nanosleep"},
	    {SYS_futex, "futex"},
	    {SYS_wait4, "wait4"},
	    {SYS_waitid, "waitid"},
	    {SYS_rt_sigsuspend, "rt_sigsuspend"},
	    {SYS_rt_sigtimedwait, "rt_sigtimedwait"},
	    {SYS_sched_yield, "sched_yield"},
	    {SYS_exit, "exit"},
	    {SYS_exit_group, "exit_group"},
#ifdef SYS_open
	    {SYS_open, "open"},
#endif
#ifdef SYS_accept
	    {SYS_accept, "accept"},
#endif
#ifdef SYS_poll
	    {SYS_poll, "poll"},
#endif
#ifdef SYS_select
	    {SYS_select, "select"},
#endif
#ifdef SYS_epoll_wait
	    {SYS_epoll_wait, "epoll_wait"},
#endif
#ifdef SYS_epoll_pwait2
	    {SYS_epoll_pwait2, "epoll_pwait2"},
#endif
#ifdef SYS_pause
	    {SYS_pause, "pause"},
#endif
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].nr == nr)
			return t[i].name;
	return NULL;
}
