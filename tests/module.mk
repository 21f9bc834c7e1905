# Tests. Unit tests: tests/unit/test_*.c, linked with the runtime and cmocka (dynamically: Debian
# ships no static libcmocka). Each test is run through tests/run-one.sh, which records the result
# under $(O)/test-results/ for tests/summary.sh. Other folders add to CHECK_TARGETS the same way.
RESULTS ?= $(O)/test-results
RUN_TEST = sh tests/run-one.sh $(RESULTS)

CPPFLAGS += -Itests
UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))
# Unit tests of one architecture's code (tests/unit/<arch>/test_*.c), built and run only there.
ARCH_UNIT_TESTS := $(patsubst tests/unit/$(ARCH)/%.c,%,$(wildcard tests/unit/$(ARCH)/test_*.c))
UNIT_TESTS += $(ARCH_UNIT_TESTS)
UNIT_BINS  := $(addprefix $(O)/tests/unit/,$(UNIT_TESTS))
# Architecture helpers of tests (register-filling code): tests/arch/<arch>/*.S
TEST_ARCH_OBJS := $(patsubst %,$(O)/%.o,$(basename $(wildcard tests/arch/$(ARCH)/*.S tests/arch/$(ARCH)/*.c)))
ifeq ($(CROSS),)
TEST_LIBS := -lcmocka
else
CPPFLAGS += -DULP_NO_CMOCKA
TEST_LIBS :=
endif

$(O)/tests/unit/%: $(O)/tests/unit/%.o $(TEST_ARCH_OBJS) $(O)/libulp-core.a
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(TEST_LIBS) $(LDLIBS_RT)
$(addprefix $(O)/tests/unit/,$(ARCH_UNIT_TESTS)): $(O)/tests/unit/%: $(O)/tests/unit/$(ARCH)/%.o \
		$(TEST_ARCH_OBJS) $(O)/libulp-core.a
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(TEST_LIBS) $(LDLIBS_RT)

ALL_TARGETS += $(UNIT_BINS)

# Run each unit test on 1 and 2 workers.
.PHONY: check-units
check-units: $(UNIT_BINS)
	$(Q)for t in $(UNIT_TESTS); do \
		for w in 1 2; do ULP_WORKERS=$$w $(RUN_TEST) $(RUN_PREFIX)$$t-w$$w $(QEMU) $(O)/tests/unit/$$t; done; \
	done
CHECK_TARGETS += check-units

# The tools and test programs bind their shared-library calls at load time (tests/bindnow.sh).
.PHONY: check-bindnow
check-bindnow: $(O)/bin/ulpexec $(O)/bin/ulpspawn
	$(Q)$(RUN_TEST) bindnow sh tests/bindnow.sh $(O)
CHECK_TARGETS += check-bindnow

# The same unit tests against an ASan+UBSan build of the runtime.
.PHONY: check-asan
check-asan:
	$(Q)$(call WANT,asan-) $(MAKE) --no-print-directory O=$(O)/asan SAN=1 RESULTS=$(abspath $(RESULTS)) RUN_PREFIX=asan- check-units
ifeq ($(SAN)$(CROSS),)
CHECK_TARGETS += check-asan
endif
-include tests/loader/module.mk
-include tests/cross/module.mk
-include tests/integ/module.mk
-include tests/pvas/module.mk
-include tests/mpi/module.mk
-include tests/fresh/module.mk
