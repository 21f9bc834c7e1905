/* SPDX-License-Identifier: MIT */
#include "cmdline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

long cmd_count(const char *tool, const char *opt, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > max) {
		fprintf(stderr, "%s: %s: '%s' is not a number from 1 to %ld\n", tool, opt, s, max);
		exit(2);
	}
	return v;
}

char *cmd_resolve(const char *prog)
{
	const char *p = getenv("PATH");
	char buf[4096];
	struct stat st;

	if (strchr(prog, '/') || !p)
		return strdup(prog);
	while (*p) {
		size_t len = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? p : ".", prog);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return strdup(buf);
		p += len + (p[len] == ':');
	}
	return strdup(prog); /* let the loader say what is wrong */
}

int cmd_split(const char *tool, int argc, char **argv, struct segment *segs, int max,
	      cmd_parse_fn parse, void *ctx)
{
	int n = 0, at = 0;

	while (at < argc) {
		int end = at + 1, prog;
		char *saved;

		while (end < argc && strcmp(argv[end], ":"))
			end++;
		if (n == max) {
			fprintf(stderr, "%s: more than %d programs\n", tool, max);
			exit(2);
		}
		saved = argv[at];
		argv[at] = (char *)tool;
		prog = parse(end - at, argv + at, &segs[n], n == 0, ctx);
		argv[at] = saved;
		segs[n].argv = argv + at + prog;
		argv[end < argc ? end : argc] = NULL; /* ends this segment's argv */
		segs[n].path = cmd_resolve(segs[n].argv[0]);
		n++;
		at = end; /* at the ':' (now NULL) or at argc */
	}
	return n;
}

char **cmd_rank_env(long rank, long size, long task)
{
	size_t n = 0, i, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof(char *));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "ULP_RANK=", 9) && strncmp(environ[i], "ULP_SIZE=", 9) &&
		    strncmp(environ[i], "ULP_TASK=", 9))
			env[k++] = environ[i];
	if (asprintf(&env[k++], "ULP_RANK=%ld", rank) < 0 ||
	    asprintf(&env[k++], "ULP_SIZE=%ld", size) < 0)
		return NULL;
	if (task >= 0 && asprintf(&env[k++], "ULP_TASK=%ld", task) < 0)
		return NULL;
	return env;
}
