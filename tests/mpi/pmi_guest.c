/* SPDX-License-Identifier: MIT */
/*
 * A PMI-1 client with no MPI library, speaking the wire as libmpich does (init, get_appnum, put,
 * barrier, get of the next rank's key, finalize), to test ulpspawn --pmi with ranks as ULPs.
 * Prints "rank R app A next=VALUE". pmi_guest abort C: rank 1 sends abort with code C;
 * pmi_guest die: rank 1 exits 3 after init, without finalize. pmi_guest spawn: rank 0 asks to
 * spawn as MPICH's PMI_Spawn_multiple does (one mcmd=spawn block per program) and prints the
 * answer, then goes on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd;

static void tx(const char *s)
{
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		exit(20);
}

/* One reply line; a reply missing `key` ends the rank with a message (never a silent pass). */
static const char *rx(const char *key)
{
	static char b[2048];
	size_t k = 0;
	const char *v;

	while (k < sizeof(b) - 1 && read(fd, b + k, 1) == 1 && b[k++] != '\n')
		;
	b[k] = 0;
	v = strstr(b, key);
	if (!v || !strstr(b, "rc=0")) {
		fprintf(stderr, "pmi_guest: wanted %s, got '%s'\n", key, b);
		exit(21);
	}
	return v + strlen(key);
}

/* Two programs, so two blocks; the answer comes after the last. */
static void spawn(void)
{
	char b[256];
	size_t k = 0;

	tx("mcmd=spawn\nnprocs=1\nexecname=/bin/true\ntotspawns=2\nspawnssofar=1\nargcnt=0\n"
	   "preput_num=0\ninfo_num=0\nendcmd\n");
	tx("mcmd=spawn\nnprocs=2\nexecname=/bin/false\ntotspawns=2\nspawnssofar=2\nargcnt=1\n"
	   "arg1=-x\npreput_num=0\ninfo_num=0\nendcmd\n");
	while (k < sizeof(b) - 1 && read(fd, b + k, 1) == 1 && b[k++] != '\n')
		;
	b[k] = 0;
	printf("spawn answered: %s", b);
}

int main(int argc, char **argv)
{
	const char *f = getenv("PMI_FD"), *rs = getenv("PMI_RANK"), *ns = getenv("PMI_SIZE");
	char m[256], next[64];
	int r, n, app;

	if (!f || !rs || !ns) {
		fprintf(stderr, "pmi_guest: PMI_FD, PMI_RANK or PMI_SIZE missing\n");
		return 22;
	}
	fd = atoi(f);
	r = atoi(rs);
	n = atoi(ns);
	tx("cmd=init pmi_version=1 pmi_subversion=1\n");
	rx("pmi_version=");
	tx("cmd=get_appnum\n");
	app = atoi(rx("appnum="));
	if (argc > 1 && !strcmp(argv[1], "die") && r == 1)
		exit(3);
	if (argc > 1 && !strcmp(argv[1], "spawn") && r == 0)
		spawn();
	snprintf(m, sizeof(m), "cmd=put kvsname=kvs_0 key=k%d value=v%d\n", r, r * r);
	tx(m);
	rx("msg=success");
	if (argc > 2 && !strcmp(argv[1], "abort") && r == 1) {
		snprintf(m, sizeof(m), "cmd=abort exitcode=%d\n", atoi(argv[2]));
		tx(m);
		pause();
	}
	tx("cmd=barrier_in\n");
	rx("cmd=barrier_out");
	snprintf(m, sizeof(m), "cmd=get kvsname=kvs_0 key=k%d\n", (r + 1) % n);
	tx(m);
	snprintf(next, sizeof(next), "%s", rx("value="));
	next[strcspn(next, " \n")] = 0;
	printf("rank %d app %d next=%s\n", r, app, next);
	tx("cmd=finalize\n");
	rx("cmd=finalize_ack");
	return 0;
}
