# Integration tests: guest programs and shell drivers that run the tools as a user would.
ifeq ($(ARCH),x86_64)
INTEG := $(O)/tests/integ
INTEG_PROGS := $(INTEG)/guest_check $(INTEG)/guest_check_dyn $(INTEG)/guest_cxx \
	$(INTEG)/guest_cxx_dyn $(INTEG)/crash $(INTEG)/pingpong $(INTEG)/exec_nopie $(INTEG)/share $(INTEG)/probe \
	$(INTEG)/pmi_guest_nopie $(O)/tests/mpi/pmi_guest \
	$(INTEG)/bad_range $(INTEG)/forks $(INTEG)/forks_dyn $(INTEG)/iotest \
	$(INTEG)/fastcall $(INTEG)/fastcall_dyn \
	$(INTEG)/sigs $(INTEG)/sigs_dyn $(INTEG)/fds $(INTEG)/ident $(INTEG)/ident_dyn \
	$(INTEG)/execs $(INTEG)/execs_dyn $(INTEG)/spinwait $(INTEG)/spinwait_dyn \
	$(INTEG)/fdends $(INTEG)/fdends_dyn $(INTEG)/fdends_nopie $(INTEG)/dblclose \
	$(INTEG)/stdfds $(INTEG)/stdfds_dyn $(INTEG)/sigfd $(INTEG)/sigfd_dyn \
	$(INTEG)/locks $(INTEG)/locks_dyn $(INTEG)/ipcwait $(INTEG)/crunch $(INTEG)/forkmarks $(INTEG)/forkmarks_dyn
THREAD_PROGS := $(INTEG)/threads $(INTEG)/threads_dyn $(INTEG)/threads_cxx $(INTEG)/threads_cxx_dyn \
	$(INTEG)/threads_omp_dyn $(INTEG)/futex_shared_dyn $(INTEG)/futex_ops_dyn $(INTEG)/rtqueue $(INTEG)/rtqueue_dyn \
	$(INTEG)/fastcall_mt $(INTEG)/fastcall_mt_dyn $(INTEG)/forkthreads $(INTEG)/forkthreads_dyn
GUEST_FLAGS = -O1 -g -Iinclude -fPIE
$(INTEG)/%: tests/integ/progs/%.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(GUEST_FLAGS) -static-pie -o $@ $^
$(INTEG)/%_dyn: tests/integ/progs/%.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(GUEST_FLAGS) -pie -o $@ $^
$(INTEG)/guest_cxx: tests/integ/progs/guest_cxx.cpp
	@mkdir -p $(dir $@)
	$(Q)$(CXX) -O1 -g -fPIE -static-pie -o $@ $<
$(INTEG)/guest_cxx_dyn: tests/integ/progs/guest_cxx.cpp
	@mkdir -p $(dir $@)
	$(Q)$(CXX) -O1 -g -fPIE -pie -o $@ $<
# The PMI client of tests/mpi linked non-PIE: ranks that run as processes under --pmi (fallback.sh).
$(INTEG)/pmi_guest_nopie: tests/mpi/pmi_guest.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -fno-pie -no-pie -o $@ $<
# fdends linked non-PIE: an exec target that runs as a child process of the ULP (fdends.sh).
$(INTEG)/fdends_nopie: tests/integ/progs/fdends.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -fno-pie -no-pie -static -pthread -o $@ $<
$(INTEG)/exec_nopie: tests/integ/progs/crash.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -Iinclude -fno-pie -no-pie -static -o $@ $^
# Threaded guests (tests/integ/threads.sh, spinyield.sh): plain programs, no libpvas-guest.
PTHREAD_PROGS := threads spinwait fastcall_mt forkthreads rtqueue
$(addprefix $(INTEG)/,$(PTHREAD_PROGS)): $(INTEG)/%: tests/integ/progs/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -fPIE -static-pie -pthread -o $@ $<
$(addprefix $(INTEG)/,$(addsuffix _dyn,$(PTHREAD_PROGS))): $(INTEG)/%_dyn: tests/integ/progs/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -fPIE -pie -pthread -o $@ $<
$(INTEG)/threads_cxx: tests/integ/progs/threads_cxx.cpp
	@mkdir -p $(dir $@)
	$(Q)$(CXX) -O1 -g -fPIE -static-pie -pthread -o $@ $<
$(INTEG)/threads_cxx_dyn: tests/integ/progs/threads_cxx.cpp
	@mkdir -p $(dir $@)
	$(Q)$(CXX) -O1 -g -fPIE -pie -pthread -o $@ $<
$(INTEG)/threads_omp_dyn: tests/integ/progs/threads_omp.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -fPIE -pie -fopenmp -o $@ $<
$(INTEG)/futex_shared_dyn: tests/integ/progs/futex_shared.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -fPIE -pie -o $@ $<
$(INTEG)/futex_ops_dyn: tests/integ/progs/futex_ops.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -fPIE -pie -pthread -o $@ $<
ALL_TARGETS += $(INTEG_PROGS) $(THREAD_PROGS)

.PHONY: check-integ
check-integ: $(INTEG_PROGS) $(THREAD_PROGS) $(O)/bin/ulpexec $(O)/bin/ulpspawn $(O)/bin/ulps $(O)/examples/paper/ulpspawn_sample
	$(Q)$(RUN_TEST) integ-ulpexec sh tests/integ/ulpexec.sh $(O)
	$(Q)$(RUN_TEST) integ-fallback sh tests/integ/fallback.sh $(O)
	$(Q)$(RUN_TEST) integ-ulps sh tests/integ/ulps.sh $(O)
	$(Q)$(RUN_TEST) integ-ulpspawn sh tests/integ/ulpspawn.sh $(O)
	$(Q)$(RUN_TEST) integ-options sh tests/integ/options.sh $(O)
	$(Q)ULP_TEST_TIMEOUT=900 $(RUN_TEST) integ-maps sh tests/integ/maps.sh $(O)
	$(Q)$(RUN_TEST) integ-process sh tests/integ/process.sh $(O)
	$(Q)$(RUN_TEST) integ-signals sh tests/integ/signals.sh $(O)
	$(Q)$(RUN_TEST) integ-traced sh tests/integ/traced.sh $(O)
	$(Q)$(RUN_TEST) integ-rtqueue sh tests/integ/rtqueue.sh $(O)
	$(Q)$(RUN_TEST) integ-ident sh tests/integ/ident.sh $(O)
	$(Q)$(RUN_TEST) integ-pgrp sh tests/integ/pgrp.sh $(O)
	$(Q)ULP_TEST_TIMEOUT=$${ULP_TEST_TIMEOUT:-900} $(RUN_TEST) integ-threads sh tests/integ/threads.sh $(O)
	$(Q)$(RUN_TEST) integ-io sh tests/integ/io.sh $(O)
	$(Q)$(RUN_TEST) integ-fastcall sh tests/integ/fastcall.sh $(O)
	$(Q)$(RUN_TEST) integ-spinyield sh tests/integ/spinyield.sh $(O)
	$(Q)$(RUN_TEST) integ-fdends sh tests/integ/fdends.sh $(O)
	$(Q)$(RUN_TEST) integ-locks sh tests/integ/locks.sh $(O)
	$(Q)$(RUN_TEST) integ-debian sh tests/integ/debian.sh $(O)
CHECK_TARGETS += check-integ

# The ULP integration tests of ulpexec against an ASan+UBSan build of it (the guests are the
# plain build's). The launcher's leaks are checked too; ASan's own buffer of a PVAS task is
# suppressed (tests/asan/lsan.supp). PVAS tasks run their workers without libc's TLS: there the
# switches are not announced to ASan (sched.c).
.PHONY: check-asan-integ
check-asan-integ: $(INTEG_PROGS) $(THREAD_PROGS)
	$(Q)$(call WANT,asan-integ) $(MAKE) --no-print-directory O=$(O)/asan SAN=1 $(O)/asan/bin/ulpexec
	$(Q)ASAN_OPTIONS=detect_leaks=1 \
		LSAN_OPTIONS=suppressions=$(abspath tests/asan/lsan.supp),print_suppressions=0 \
		ULPEXEC=$(O)/asan/bin/ulpexec $(RUN_TEST) asan-integ-ulpexec sh tests/integ/ulpexec.sh $(O)
ifeq ($(SAN),)
CHECK_TARGETS += check-asan-integ
endif

# Only the blocking-call and preemption tests (tests/integ/io.sh); IO_RUNS: runs per pair test.
.PHONY: check-io
check-io: $(INTEG_PROGS) $(O)/bin/ulpexec $(O)/bin/ulpspawn
	$(Q)$(RUN_TEST) integ-io sh tests/integ/io.sh $(O)
endif
-include tests/integ/mpi_like.mk
