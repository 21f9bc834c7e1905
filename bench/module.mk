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

.PHONY: run-bench-core
run-bench-core: $(BENCH_BINS)
	$(Q)for b in $(BENCH_NAMES); do \
		echo "== bench/$$b"; \
		{ $(O)/bench/$$b || echo "bench/$$b: exited with status $$?" >&2; } \
			| tee $(O)/bench/$$b.out; \
		grep '^BENCH ' $(O)/bench/$$b.out >> $(O)/bench/results.txt || true; \
	done
BENCH_TARGETS += run-bench-core
