# Benchmarks: `make bench` builds them into $(O)/bench/ and runs run-bench-core, which prints their
# BENCH lines and appends them to $(O)/bench/results.txt. They never fail the build: a benchmark
# that cannot run says why on stderr and the next one runs.
BENCH_NAMES := switch create fib
BENCH_BINS  := $(addprefix $(O)/bench/,$(BENCH_NAMES))
BENCH_COMMON := $(O)/bench/bench.o
# The Boost.Context baseline; C++ (no -std=gnu11), linked into the benchmarks that compare with it.
BENCH_FCTX  := $(O)/bench/switch_fcontext.o
BENCH_CXXFLAGS := -O2 -g $(WARN) -MMD -MP

$(O)/bench/%.o: bench/%.cpp
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(CPPFLAGS) $(BENCH_CXXFLAGS) -c $< -o $@

$(O)/bench/switch $(O)/bench/create: $(O)/bench/%: $(O)/bench/%.o $(BENCH_COMMON) $(BENCH_FCTX) \
		$(O)/libulp-core.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CXX) $(CFLAGS) -o $@ $^ -lboost_context $(LDLIBS_RT)

$(O)/bench/fib: $(O)/bench/fib.o $(BENCH_COMMON) $(O)/libulp-core.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_RT)

# After each benchmark's times, its instruction counts per operation (bench/ir.sh: callgrind,
# stable whatever else runs on the machine; skipped with a message when valgrind is missing).
.PHONY: run-bench-core
run-bench-core: $(BENCH_BINS)
	$(Q)for b in $(BENCH_NAMES); do \
		echo "== bench/$$b"; \
		{ $(O)/bench/$$b || echo "bench/$$b: exited with status $$?" >&2; \
		  sh bench/ir.sh $(O) $$b; } \
			| tee $(O)/bench/$$b.out; \
		grep '^BENCH ' $(O)/bench/$$b.out >> $(O)/bench/results.txt || true; \
	done
BENCH_TARGETS += run-bench-core

# bench/NAME.sh ($(call bench_sh,NAME)): its output shown and kept in $(O)/bench/NAME.out, its
# BENCH lines appended to $(O)/bench/results.txt.
define bench_sh
	@mkdir -p $(O)/bench
	$(Q)echo "== bench/$(1).sh"
	$(Q)sh bench/$(1).sh $(O) | tee $(O)/bench/$(1).out
	$(Q)grep '^BENCH ' $(O)/bench/$(1).out >> $(O)/bench/results.txt || true
endef

# ULP benchmarks (x86_64, like the ULP layer): harnesses built on libulp's internal API
# (libulp/kernel/proc.h), as ulpexec is, and the static-pie guests they run. run-bench-ulp prints
# their BENCH lines and appends them to $(O)/bench/results.txt like run-bench-core.
ifeq ($(ARCH),x86_64)
ULP_BENCH_NAMES  := ulp_yield ulp_spawn ulp_mem
ULP_BENCH_BINS   := $(addprefix $(O)/bench/,$(ULP_BENCH_NAMES))
ULP_BENCH_GUESTS := $(addprefix $(O)/bench/,ulp_guest_yield ulp_guest_true ulp_guest_nolibc \
	ulp_guest_idle)
ULP_BENCH_OBJS   := $(addprefix $(O)/bench/,$(addsuffix .o,$(ULP_BENCH_NAMES) ulp_common))
$(ULP_BENCH_OBJS): CPPFLAGS += -Ilibulp/kernel -Iloader

$(ULP_BENCH_BINS): $(O)/bench/%: $(O)/bench/%.o $(O)/bench/ulp_common.o $(BENCH_COMMON) \
		$(O)/libulp.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ULP)

# Guests: static-pie, linked with the guest library only (as examples/ builds them); the nolibc
# one without the C runtime's start-up files.
$(O)/bench/ulp_guest_nolibc: ULP_GUEST_LDFLAGS := -nostartfiles
$(ULP_BENCH_GUESTS): $(O)/bench/ulp_guest_%: bench/ulp_guest_%.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) -O2 -g $(WARN) -Iinclude -fPIE -static-pie $(ULP_GUEST_LDFLAGS) -o $@ $^

.PHONY: run-bench-ulp
run-bench-ulp: $(ULP_BENCH_BINS) $(ULP_BENCH_GUESTS) $(O)/bin/ulpexec $(O)/libulp.a \
		$(O)/libpvas-guest.a
	$(Q)for b in $(ULP_BENCH_NAMES); do \
		echo "== bench/$$b"; \
		{ $(O)/bench/$$b || echo "bench/$$b: exited with status $$?" >&2; } \
			| tee $(O)/bench/$$b.out; \
		grep '^BENCH ' $(O)/bench/$$b.out >> $(O)/bench/results.txt || true; \
	done
BENCH_TARGETS += run-bench-ulp
endif

# Reproductions of the seed papers' figures, data and plots under docs/results/ (docs/benchmarks.md).
# fig7: context switch among P processes / threads / ULTs / ULPs on one CPU (x86_64: ULPs).
ifeq ($(ARCH),x86_64)
$(O)/bench/fig7.o: CPPFLAGS += -Ilibulp/kernel -Iloader
$(O)/bench/fig7: $(O)/bench/fig7.o $(O)/bench/ulp_common.o $(BENCH_COMMON) $(O)/libulp.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ULP)

$(O)/bench/fig7_guest: bench/fig7_guest.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) -O2 -g $(WARN) -Iinclude -fPIE -static-pie -o $@ $^
endif

# run-bench-figs: every reproduction (bench/run-figs.sh), data and plots into RESULTS_DIR. Built
# on the way: the ucontext variant of bench/fib and bench/create in $(O)/ucontext
# (ULP_SWITCH=ucontext), and examples/mpi_like's MPI program by examples/'s own rule once more,
# with Open MPI's compiler, into $(O)/bench/ompi (when examples/mpi_like and mpicc.openmpi exist).
# `make plots` redraws the PNGs from the .dat files without measuring.
RESULTS_DIR ?= docs/results
ML_OMPICC ?= $(firstword $(shell command -v mpicc.openmpi 2>/dev/null))
FIG_OPTIONAL := $(if $(ML_DIR),$(ML_DIR)/mpi_like_prog $(if $(ML_MPICC),$(ML_DIR)/mpi_like_prog.mpi))
.PHONY: run-bench-figs plots
run-bench-figs: $(O)/bench/fib $(O)/bench/create $(FIG_OPTIONAL) \
		$(if $(filter x86_64,$(ARCH)),$(O)/bench/fig7 $(O)/bench/fig7_guest $(ULP_BENCH_BINS) \
		$(ULP_BENCH_GUESTS) $(O)/bin/ulpexec)
	$(Q)$(if $(filter x86_64,$(ARCH)),$(MAKE) --no-print-directory O=$(O)/ucontext \
		ULP_SWITCH=ucontext $(O)/ucontext/bench/fib $(O)/ucontext/bench/create)
	$(Q)$(if $(and $(ML_DIR),$(ML_OMPICC)),$(MAKE) --no-print-directory ML_DIR=$(O)/bench/ompi \
		ML_MPICC=$(ML_OMPICC) $(O)/bench/ompi/mpi_like_prog.mpi || \
		echo "bench: the Open MPI build of mpi_like_prog failed; its column is skipped" >&2)
	$(Q)sh bench/run-figs.sh $(O) $(RESULTS_DIR)
BENCH_TARGETS += run-bench-figs

plots:
	$(Q)sh bench/plot.sh $(RESULTS_DIR)

# run-bench-mpi-like (bench/mpi_like.mk): mpi_like_prog, 64 ranks, ULPs against MPICH
-include bench/mpi_like.mk

# Threads inside a ULP (issue 12): bench/threads.sh runs bench/threads_guest.c as a process and as
# a ULP, and bench/create for ulp_thread_create+join; BENCH lines as the others.
ifeq ($(ARCH),x86_64)
$(O)/bench/threads_guest: bench/threads_guest.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) -O2 -g $(WARN) -fPIE -pie -pthread -o $@ $<
ALL_TARGETS += $(O)/bench/threads_guest

.PHONY: run-bench-threads
run-bench-threads: $(O)/bench/threads_guest $(O)/bench/create $(O)/bin/ulpexec
	$(call bench_sh,threads)
BENCH_TARGETS += run-bench-threads
endif

# Signals a program sends itself, with a handler, as a process and as a ULP (bench/sig.sh).
ifeq ($(ARCH),x86_64)
$(O)/bench/sig_guest: bench/sig_guest.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) -O2 -g $(WARN) -fPIE -pie -o $@ $<
ALL_TARGETS += $(O)/bench/sig_guest

.PHONY: run-bench-sig
run-bench-sig: $(O)/bench/sig_guest $(O)/bin/ulpexec
	$(call bench_sh,sig)
BENCH_TARGETS += run-bench-sig
endif

# fork + exec + wait of a ULP alone and beside 63 others, against the process (bench/fork.sh).
ifeq ($(ARCH),x86_64)
$(O)/bench/fork_guest: bench/fork_guest.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) -O2 -g $(WARN) -fPIE -pie -o $@ $<
ALL_TARGETS += $(O)/bench/fork_guest

.PHONY: run-bench-fork
run-bench-fork: $(O)/bench/fork_guest $(O)/bin/ulpspawn
	$(call bench_sh,fork)
BENCH_TARGETS += run-bench-fork
endif

# Waiting threads passed over by their loops' probes (bench/spinprobe.sh).
ifeq ($(ARCH),x86_64)
.PHONY: run-bench-spinprobe
run-bench-spinprobe: $(O)/tests/integ/spinwait $(O)/bin/ulpexec
	$(call bench_sh,spinprobe)
BENCH_TARGETS += run-bench-spinprobe
endif

# Blocking calls parked on io_uring, preemption (bench/io.sh; issue 13).
ifeq ($(ARCH),x86_64)
.PHONY: run-bench-io
run-bench-io: $(O)/tests/integ/iotest $(O)/bin/ulpexec $(O)/bin/ulpspawn $(if $(ML_DIR),$(ML_DIR)/mpi_like_prog)
	$(call bench_sh,io)
BENCH_TARGETS += run-bench-io
endif

# Fast system calls (bench/fastcall.sh; issue 15): sched_yield, read and close of a ULP through
# rewritten sites against the trap, pvas_yield and the process.
ifeq ($(ARCH),x86_64)
$(O)/bench/fastcall_guest: bench/fastcall_guest.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) -O2 -g $(WARN) -Iinclude -fPIE -static-pie -o $@ $^
ALL_TARGETS += $(O)/bench/fastcall_guest

.PHONY: run-bench-fastcall
run-bench-fastcall: $(O)/bench/fastcall_guest $(O)/bin/ulpexec
	$(call bench_sh,fastcall)
BENCH_TARGETS += run-bench-fastcall
endif

# The real-MPI oversubscription sweep (issue 16): examples/mpi/mpi_prog, R = 2..256 ranks, as ULP
# ranks (ulpspawn --pmi) vs mpiexec.mpich vs Open MPI with yield (bench/mpi_sweep.sh). The MPI
# binaries are built when their compilers are installed (make bench installs both). Its table
# and plot go to RESULTS_DIR (mpi_sweep.dat, mpi_sweep.png: bench/sweep_dat.sh, bench/plot.sh).
ifeq ($(ARCH),x86_64)
.PHONY: run-bench-mpi-sweep
run-bench-mpi-sweep: $(O)/bin/ulpspawn $(O)/examples/mpi/mpi_prog \
		$(if $(MPIX_OMPICC),$(O)/examples/mpi/mpi_prog.ompi)
	$(call bench_sh,mpi_sweep)
	$(Q)if grep -q '^BENCH mpi_sweep' $(O)/bench/mpi_sweep.out; then \
		sh bench/sweep_dat.sh < $(O)/bench/mpi_sweep.out > $(RESULTS_DIR)/mpi_sweep.dat && \
		{ sh bench/plot.sh $(RESULTS_DIR) || true; }; fi
BENCH_TARGETS += run-bench-mpi-sweep
endif
