/* SPDX-License-Identifier: MIT */
#include "ulp_common.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

static struct pvas_region *region;
static pid_t helper_pid = -1;
static int helper_req = -1, helper_rep = -1;

void ulpb_runtime_start(const char *prog, unsigned workers)
{
	int rc = pvas_region_create(&region, 0, 0, 0);

	if (rc)
		bench_give_up(prog, "reserving the PVAS region", -rc);
	ulp_sched_set_hooks(&ulp_rt, ulp_proc_sched_hooks());
	rc = ulp_trap_install(region);
	if (rc)
		bench_give_up(prog, "installing the syscall trap (seccomp)", -rc);
	rc = ulp_init(workers);
	if (rc)
		bench_give_up(prog, "ulp_init", -rc);
}

void ulpb_runtime_stop(void)
{
	/* The trap stays installed (it cannot be removed); the region stays reserved with it. */
	ulp_fini();
}

char *ulpb_sibling(const char *prog, const char *name)
{
	char self[4096], *path;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		bench_give_up(prog, "readlink /proc/self/exe", errno);
	self[n] = 0;
	if (asprintf(&path, "%s/%s", dirname(self), name) < 0)
		bench_give_up(prog, "asprintf", ENOMEM);
	return path;
}

/* Our environment without ULP_RANK/ULP_SIZE, plus this ULP's; the loader copies it. */
static char **ulp_env(int rank, int size, char *own[2])
{
	size_t n = 0, i, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(char *));
	if (!env || asprintf(&own[0], "ULP_RANK=%d", rank) < 0 ||
	    asprintf(&own[1], "ULP_SIZE=%d", size) < 0)
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "ULP_RANK=", 9) && strncmp(environ[i], "ULP_SIZE=", 9))
			env[k++] = environ[i];
	env[k++] = own[0];
	env[k] = own[1];
	return env;
}

struct ulp_cb *ulpb_ulp_start(const char *prog, char *const argv[], int rank, int size)
{
	char err[512], *own[2] = {NULL, NULL}, **env = ulp_env(rank, size, own);
	struct ulp_cb *cb;
	int rc;

	if (!env)
		bench_give_up(prog, "building a ULP's environment", ENOMEM);
	rc = ulp_proc_load(region, -1, argv[0], argv, env, &cb, err, sizeof(err));
	free(own[0]);
	free(own[1]);
	free(env);
	if (rc) {
		fprintf(stderr, "%s: loading a ULP: %s\n", prog, err);
		bench_give_up(prog, "ulp_proc_load", -rc);
	}
	cb->rank = rank;
	ulp_proc_start(cb);
	return cb;
}

int ulpb_ulp_wait(const char *prog, struct ulp_cb *cb)
{
	char how[256];
	int code;

	ulp_proc_wait(cb);
	code = ulp_proc_exit_code(cb);
	if (code) {
		ulp_proc_describe(cb, how, sizeof(how));
		fprintf(stderr, "%s: ULP rank %d (%s): %s\n", prog, cb->rank, cb->path, how);
	}
	return code;
}

int ulpb_ulp_reap(const char *prog, struct ulp_cb *cb)
{
	int code = ulpb_ulp_wait(prog, cb);

	ulp_proc_release(cb, NULL, NULL);
	return code;
}

/* Add the value of each "Key: N kB" line whose key is in keys[] to *out[]. */
static int sum_fields(const char *path, const char *const keys[], long *const out[], int nkeys)
{
	char line[256];
	size_t len;
	long v;
	int i;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < nkeys; i++) {
			len = strlen(keys[i]);
			if (!strncmp(line, keys[i], len) && line[len] == ':' &&
			    sscanf(line + len + 1, "%ld", &v) == 1)
				*out[i] += v;
		}
	fclose(f);
	return 0;
}

int ulpb_mem_read(pid_t pid, struct ulpb_mem *m)
{
	static const char *const status_keys[] = {"VmRSS", "RssAnon", "RssFile", "VmPTE"};
	static const char *const rollup_keys[] = {"Pss", "Private_Clean", "Private_Dirty"};
	long *const status_out[] = {&m->rss, &m->anon, &m->file, &m->pte};
	long *const rollup_out[] = {&m->pss, &m->uss, &m->uss};
	char path[64];
	int rc;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/status", pid ? (int)pid : (int)getpid());
	rc = sum_fields(path, status_keys, status_out, 4);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid ? (int)pid : (int)getpid());
	return sum_fields(path, rollup_keys, rollup_out, 3);
}

long ulpb_kernel_kb(void)
{
	static const char *const keys[] = {"KernelStack", "PageTables", "SUnreclaim"};
	long sum = 0;
	long *const out[] = {&sum, &sum, &sum};

	return sum_fields("/proc/meminfo", keys, out, 3) ? 0 : sum;
}

/* ---- the helper process ---- */

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void ulpb_helper_start(const char *prog, ulpb_serve_fn serve)
{
	int req[2], rep[2];
	struct ulpb_req q;
	struct ulpb_rep a;

	if (pipe2(req, O_CLOEXEC) || pipe2(rep, O_CLOEXEC))
		bench_give_up(prog, "pipe for the helper process", errno);
	fflush(NULL);
	helper_pid = fork();
	if (helper_pid < 0)
		bench_give_up(prog, "fork of the helper process", errno);
	if (helper_pid == 0) {
		close(req[1]);
		close(rep[0]);
		while (read_full(req[0], &q, sizeof(q)) == 0 && q.op) {
			memset(&a, 0, sizeof(a));
			serve(&q, &a);
			if (write_full(rep[1], &a, sizeof(a)))
				break;
		}
		_exit(0);
	}
	close(req[0]);
	close(rep[1]);
	helper_req = req[1];
	helper_rep = rep[0];
}

void ulpb_helper_ask(const char *prog, const struct ulpb_req *req, struct ulpb_rep *rep)
{
	if (write_full(helper_req, req, sizeof(*req)) || read_full(helper_rep, rep, sizeof(*rep)))
		bench_give_up(prog, "talking to the helper process", EPIPE);
	if (rep->err)
		bench_give_up(prog, "a request to the helper process", rep->err);
}

void ulpb_helper_stop(void)
{
	struct ulpb_req q;

	if (helper_pid < 0)
		return;
	memset(&q, 0, sizeof(q));
	write_full(helper_req, &q, sizeof(q));
	close(helper_req);
	close(helper_rep);
	waitpid(helper_pid, NULL, 0);
	helper_pid = -1;
}
