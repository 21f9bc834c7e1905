#!/bin/busybox sh
# /init of the test VM (see run.sh): load pvas.ko, run the tests, print the
# kernel log, unload the module, leave through isa-debug-exit (16: passed,
# 17: failed). Kernel command line variables: vmtest_scale, vmtest_only.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
# A task stuck in the module for a minute is reported (run.sh fails on it).
echo 60 >/proc/sys/kernel/hung_task_timeout_secs
rc=0
echo "pvas-vm: kernel $(uname -r), $(nproc) cpus"
if ! insmod /pvas.ko; then
	echo "pvas-vm: insmod failed"
	rc=1
elif [ ! -c /dev/pvas ] || ! grep -q '^objects 0 partitions 0$' /proc/pvas; then
	echo "pvas-vm: /dev/pvas or /proc/pvas missing"
	rc=1
else
	start=$(cut -d. -f1 /proc/uptime)
	# shellcheck disable=SC2086 # a list of test names
	/t/pvas_vmtest -d /t -s "${vmtest_scale:-1}" $(echo "${vmtest_only:-}" | tr , ' ') || rc=1
	for x in /t/extra/*; do
		[ -e "$x" ] || continue
		if timeout 600 "$x"; then
			echo "PASS: extra/${x##*/}"
		else
			echo "FAIL: extra/${x##*/}"
			rc=1
		fi
	done
	echo "pvas-vm: tests took $(( $(cut -d. -f1 /proc/uptime) - start )) s"
	if rmmod pvas && ! grep -q '^pvas ' /proc/modules; then
		echo "pvas-vm: rmmod ok"
	else
		echo "pvas-vm: rmmod failed"
		rc=1
	fi
fi
echo "=== dmesg ==="
dmesg
echo "=== end dmesg ==="
[ "$rc" = 0 ] && echo "pvas-vm: PASS" || echo "pvas-vm: FAIL"
/t/vmexit $((16 + (rc != 0)))
