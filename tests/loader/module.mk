# Loader tests (x86_64 native builds only, like the loader). Fixtures are compiled and damaged at
# build time into $(O)/tests/loader/fix/; nothing binary is committed.
#   test_loader_refuse   every malformed program/request refused, ranges left PROT_NONE, no fd leak
#   test_loader_layout   what a successful load maps and the start-up stack it writes
#   test_loader_run      fork, load, jump: fixtures and Debian's own PIE programs really run
ifeq ($(ARCH)$(CROSS),x86_64)
LFIX        := $(O)/tests/loader/fix
LOADER_TBIN := $(addprefix $(O)/tests/loader/,test_loader_refuse test_loader_layout test_loader_run)
LFIX_CC     := $(CC) -O2 -g0
AARCH64_GCC := $(shell command -v aarch64-linux-gnu-gcc 2>/dev/null)

$(O)/tests/loader/%.o: CPPFLAGS += -Iloader -Itests

$(LOADER_TBIN): $(O)/tests/loader/%: $(O)/tests/loader/%.o $(O)/tests/loader/lt.o \
		$(O)/libulp-loader.a
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka $(LDLIBS_LOADER)

$(LFIX)/elfpatch: tests/loader/elfpatch.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -o $@ $<

$(LFIX)/hello-static: tests/loader/fixtures/hello.c
	@mkdir -p $(dir $@)
	$(Q)$(LFIX_CC) -static-pie -o $@ $<

$(LFIX)/hello-dyn: tests/loader/fixtures/hello.c
	@mkdir -p $(dir $@)
	$(Q)$(LFIX_CC) -fPIE -pie -o $@ $<

$(LFIX)/hello-exec: tests/loader/fixtures/hello.c
	@mkdir -p $(dir $@)
	$(Q)$(LFIX_CC) -fno-PIE -no-pie -o $@ $<

$(LFIX)/hello.o: tests/loader/fixtures/hello.c
	@mkdir -p $(dir $@)
	$(Q)$(LFIX_CC) -fPIE -c -o $@ $< && chmod 755 $@

$(LFIX)/bigbss: tests/loader/fixtures/bigbss.c
	@mkdir -p $(dir $@)
	$(Q)$(LFIX_CC) -fPIE -pie -o $@ $<

# A real aarch64 program when the cross compiler is there, else an x86_64 one relabelled.
$(LFIX)/hello-aarch64: tests/loader/fixtures/hello.c $(LFIX)/hello-dyn $(LFIX)/elfpatch
ifneq ($(AARCH64_GCC),)
	$(Q)$(AARCH64_GCC) -O2 -fPIE -pie -o $@ $<
else
	$(Q)cp $(LFIX)/hello-dyn $@ && $(LFIX)/elfpatch $@ ehdr machine 183
endif

LFIX_BASE := $(addprefix $(LFIX)/,elfpatch hello-static hello-dyn hello-exec hello.o bigbss \
	hello-aarch64)

$(LFIX)/stamp: tests/loader/mkfixtures.sh $(LFIX_BASE)
	$(Q)sh tests/loader/mkfixtures.sh $(LFIX)

ALL_TARGETS += $(LOADER_TBIN) $(LFIX)/stamp

.PHONY: check-loader
check-loader: $(LOADER_TBIN) $(LFIX)/stamp
	$(Q)for t in refuse layout run; do \
		$(RUN_TEST) $(RUN_PREFIX)loader-$$t $(O)/tests/loader/test_loader_$$t $(LFIX); \
	done
CHECK_TARGETS += check-loader

# The loader and its tests again, built with ASan+UBSan (as check-asan does for the unit tests).
.PHONY: check-loader-asan
check-loader-asan:
	$(Q)$(call WANT,asan-loader-) $(MAKE) --no-print-directory O=$(O)/asan SAN=1 RESULTS=$(abspath $(RESULTS)) \
		RUN_PREFIX=asan- check-loader
ifeq ($(SAN),)
CHECK_TARGETS += check-loader-asan
endif
endif
