/* SPDX-License-Identifier: MIT */
/* The PMI-1 server engine (launch/pmi.c) on bad and edge-case input, driven over its socketpairs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "pmi.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int lost_rank = -1, abort_rank = -1, abort_code;
static char abort_msg[128];

static void on_abort(void *arg, int rank, int code, const char *msg)
{
	abort_rank = rank;
	abort_code = code;
	snprintf(abort_msg, sizeof(abort_msg), "%s", msg);
}

static void on_lost(void *arg, int rank)
{
	lost_rank = rank;
}

static char refused[64];

static void on_refused(void *arg, int rank, const char *cmd)
{
	snprintf(refused, sizeof(refused), "%d %s", rank, cmd);
}

static const struct launch_pmi_ops ops = {on_abort, on_lost, on_refused};

static void open_all(struct launch_pmi *p, int n)
{
	int r;

	for (r = 0; r < n; r++)
		assert_int_equal(launch_pmi_open(p, r), 0);
	assert_int_equal(launch_pmi_open(p, 0), -EINVAL); /* once per rank */
}

/* Send one line as rank r, let the server serve it, return what came back (may be ""). */
static const char *ask(struct launch_pmi *p, int r, const char *line)
{
	static char buf[4096];
	int fd = launch_pmi_client_fd(p, r);
	ssize_t n;

	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	launch_pmi_io(p, r);
	n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

static void test_pmi_answers_the_simple_pmi_commands(void **state)
{
	struct launch_pmi *p;
	int appnum[2] = {0, 3};

	assert_int_equal(launch_pmi_create(&p, 2, appnum, &ops, NULL), 0);
	open_all(p, 2);
	assert_string_equal(ask(p, 1, "cmd=init pmi_version=1 pmi_subversion=1\n"),
			    "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
	assert_string_equal(ask(p, 1, "cmd=get_appnum\n"), "cmd=appnum appnum=3 rc=0\n");
	assert_string_equal(ask(p, 1, "cmd=get_universe_size\n"),
			    "cmd=universe_size size=2 rc=0\n");
	assert_string_equal(ask(p, 0, "cmd=get kvsname=kvs_0 key=PMI_process_mapping\n"),
			    "cmd=get_result rc=0 msg=success value=(vector,(0,1,2))\n");
	assert_string_equal(ask(p, 0, "cmd=put kvsname=kvs_0 key=k1 value=v1\n"),
			    "cmd=put_result rc=0 msg=success\n");
	assert_string_equal(ask(p, 1, "cmd=get kvsname=kvs_0 key=k1\n"),
			    "cmd=get_result rc=0 msg=success value=v1\n");
	assert_string_equal(ask(p, 1, "cmd=put kvsname=kvs_0 key=k1 value=v2\n"),
			    "cmd=put_result rc=0 msg=success\n");
	assert_string_equal(ask(p, 0, "cmd=get kvsname=kvs_0 key=k1\n"),
			    "cmd=get_result rc=0 msg=success value=v2\n");
	/* a barrier answers nobody until every rank is in, then everybody */
	assert_string_equal(ask(p, 0, "cmd=barrier_in\n"), "");
	assert_string_equal(ask(p, 1, "cmd=barrier_in\n"), "cmd=barrier_out rc=0\n");
	assert_string_equal(ask(p, 0, ""), "cmd=barrier_out rc=0\n");
	assert_string_equal(ask(p, 0, "cmd=finalize\n"), "cmd=finalize_ack rc=0\n");
	assert_int_equal(launch_pmi_finalized(p), 1);
	launch_pmi_destroy(p);
}

static void test_pmi_refuses_bad_requests_clearly(void **state)
{
	struct launch_pmi *p;
	char big[1200], huge[3000];

	assert_int_equal(launch_pmi_create(&p, 1, NULL, &ops, NULL), 0);
	open_all(p, 1);
	assert_string_equal(ask(p, 0, "cmd=init pmi_version=2 pmi_subversion=0\n"),
			    "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
	assert_string_equal(ask(p, 0, "cmd=get kvsname=kvs_0 key=nothing\n"),
			    "cmd=get_result rc=-1 msg=key_nothing_not_found\n");
	assert_string_equal(ask(p, 0, "cmd=put kvsname=other key=a value=b\n"),
			    "cmd=put_result rc=-1 msg=unknown_kvsname\n");
	assert_string_equal(ask(p, 0, "cmd=spawn nprocs=2\n"),
			    "cmd=spawn_result rc=-1 msg=spawn_not_supported_by_ulpspawn\n");
	assert_string_equal(refused, "0 spawn");
	/* PMI_Spawn_multiple's blocks, as MPICH's simple client sends them: one answer, after the
	 * last block; the connection stays (before 27 Nov "mcmd=" was a protocol error, and the
	 * launcher said the rank ended before MPI_Finalize) */
	refused[0] = 0;
	lost_rank = -1;
	assert_string_equal(ask(p, 0,
				"mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=2\n"
				"spawnssofar=1\nargcnt=0\npreput_num=0\ninfo_num=0\nendcmd\n"),
			    "");
	assert_string_equal(refused, "");
	assert_string_equal(ask(p, 0,
				"mcmd=spawn\nnprocs=2\nexecname=b\ntotspawns=2\n"
				"spawnssofar=2\nargcnt=1\narg1=x y\nendcmd\n"),
			    "cmd=spawn_result rc=-1 msg=spawn_not_supported_by_ulpspawn\n");
	assert_string_equal(refused, "0 spawn");
	assert_string_equal(
	    ask(p, 0, "cmd=lookup_name service=s\n"),
	    "cmd=lookup_name_result rc=-1 msg=lookup_name_not_supported_by_ulpspawn\n");
	assert_int_equal(lost_rank, -1);
	memset(big, 'x', sizeof(big) - 2);
	snprintf(big, 40, "cmd=put kvsname=kvs_0 key=k value=");
	big[strlen(big)] = 'x';
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = 0;
	assert_string_equal(ask(p, 0, big), "cmd=put_result rc=-1 msg=value_too_long\n");
	/* a line longer than any command can be: dropped and reported, not overflowed */
	memset(huge, 'y', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = 0;
	lost_rank = -1;
	ask(p, 0, huge);
	assert_int_equal(lost_rank, 0);
	launch_pmi_destroy(p);
	assert_int_equal(launch_pmi_create(&p, 1, NULL, &ops, NULL), 0);
	open_all(p, 1);
	/* a line with no cmd= is a protocol error: the connection is dropped and reported */
	lost_rank = -1;
	ask(p, 0, "hello\n");
	assert_int_equal(lost_rank, 0);
	assert_int_equal(launch_pmi_server_fd(p, 0), -1);
	launch_pmi_destroy(p);
}

static void test_pmi_abort_reaches_the_launcher_with_code_and_message(void **state)
{
	struct launch_pmi *p;

	assert_int_equal(launch_pmi_create(&p, 3, NULL, &ops, NULL), 0);
	open_all(p, 3);
	assert_string_equal(ask(p, 2, "cmd=abort exitcode=7 msg=out of cheese\n"), "");
	assert_int_equal(abort_rank, 2);
	assert_int_equal(abort_code, 7);
	assert_string_equal(abort_msg, "out of cheese");
	launch_pmi_destroy(p);
}

static void test_pmi_reports_a_rank_that_dies_before_finalize(void **state)
{
	struct launch_pmi *p;
	int fd;

	assert_int_equal(launch_pmi_create(&p, 2, NULL, &ops, NULL), 0);
	open_all(p, 2);
	lost_rank = -1;
	/* rank 0 finalizes and closes: not lost */
	ask(p, 0, "cmd=finalize\n");
	launch_pmi_close_client(p, 0);
	launch_pmi_io(p, 0);
	assert_int_equal(lost_rank, -1);
	/* rank 1 waits in a barrier and dies: lost, and the barrier count forgets it */
	ask(p, 1, "cmd=barrier_in\n");
	fd = launch_pmi_client_fd(p, 1);
	assert_true(fd >= 0);
	launch_pmi_close_client(p, 1);
	launch_pmi_io(p, 1);
	assert_int_equal(lost_rank, 1);
	assert_int_equal(launch_pmi_events(p, 1), 0);
	launch_pmi_destroy(p);
}

static void test_pmi_env_names_the_rank_and_its_fd(void **state)
{
	struct launch_pmi *p;
	char buf[256], *v[6], tiny[8];

	assert_int_equal(launch_pmi_create(&p, 4, NULL, &ops, NULL), 0);
	open_all(p, 4);
	assert_int_equal(launch_pmi_env(p, 2, 9, buf, sizeof(buf), v), 6);
	assert_string_equal(v[0], "PMI_FD=9");
	assert_string_equal(v[1], "PMI_RANK=2");
	assert_string_equal(v[2], "PMI_SIZE=4");
	assert_string_equal(v[4], "MPI_LOCALRANKID=2");
	assert_int_equal(launch_pmi_env(p, 2, 9, tiny, sizeof(tiny), v), -ENOSPC);
	launch_pmi_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pmi_answers_the_simple_pmi_commands),
	    cmocka_unit_test(test_pmi_refuses_bad_requests_clearly),
	    cmocka_unit_test(test_pmi_abort_reaches_the_launcher_with_code_and_message),
	    cmocka_unit_test(test_pmi_reports_a_rank_that_dies_before_finalize),
	    cmocka_unit_test(test_pmi_env_names_the_rank_and_its_fd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
