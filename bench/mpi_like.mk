# run-bench-mpi-like: mpi_like_prog, 64 ranks on this machine, ULPs (ulpexec, ulpspawn when built)
# against MPICH processes (bench/mpi_like.sh). Included from bench/module.mk.
ifeq ($(ARCH),x86_64)
.PHONY: run-bench-mpi-like
run-bench-mpi-like: $(O)/examples/mpi_like/mpi_like_prog $(O)/bin/ulpexec \
		$(filter $(O)/bin/ulpspawn $(O)/examples/mpi_like/mpi_like_prog.mpi,$(ALL_TARGETS))
	@mkdir -p $(O)/bench
	$(Q)echo "== bench/mpi_like"
	$(Q)sh bench/mpi_like.sh $(O) | tee $(O)/bench/mpi_like.out
	$(Q)grep '^BENCH ' $(O)/bench/mpi_like.out >> $(O)/bench/results.txt || true
BENCH_TARGETS += run-bench-mpi-like
endif
