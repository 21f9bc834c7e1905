# libulp — top-level build. Non-recursive: each folder adds its part in a module.mk.
#
#   make            build the library, tools and examples into $(O)/
#   make check      install what is missing, build, run every test (units, ASan/UBSan, cross-arch, ...)
#   make check T=integ-ulpexec   only the tests whose names match (comma-separated globs:
#                   T='asan-*,pvas-api'); tests/README.md
#   make demo       install what is missing, build, run the oversubscribed example
#   make bench      run the benchmarks (BENCH lines)
#   make install    PREFIX=/usr/local DESTDIR=
#
# Variables: O (output folder, default build), ARCH (x86_64, aarch64, sparc64), CROSS (tool prefix),
# SAN=1 (ASan+UBSan build of the runtime), V=1 (show commands),
# ULP_SWITCH=ucontext (x86_64: the switch done by glibc's swapcontext instead of switch.S, for the
# benchmarks that compare them; build it in its own O folder: libulp/arch/ucontext/module.mk).

ARCH    ?= $(shell uname -m)
O       ?= build
CROSS   ?=
PREFIX  ?= /usr/local
DESTDIR ?=
SAN     ?=

CC      := $(CROSS)gcc
CXX     := $(CROSS)g++
AR      := $(CROSS)ar

VERSION := 0.1.0

WARN     := -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS   ?= -O2 -g
# The runtime may run while a ULP's TLS is loaded: no stack-protector canary reads from fs.
RT_FLAGS := -fno-stack-protector -fno-omit-frame-pointer -fPIC
# Every call into a shared library is bound at load time (only used when linking): a lazy
# binding runs the dynamic linker's resolver, which reads TLS, so the first call to a libc
# function must never come from a PVAS task (fs = 0) or while a ULP's TLS is loaded. It did:
# on the kmod backend nothing in the manager had called memmove before the fast path's
# patcher did, in a task (SIGSEGV at fs:0x18 in ld.so).
RT_FLAGS += -Wl,-z,now
# ... and that must hold in a program linked with libulp.a, which the flag above does not reach
# (the paper's sample linked statically died so at the fast path's first memmove in a ULP):
# -fno-plt makes every call from libulp to a shared library an indirect call through a GOT
# entry the dynamic linker fills at load time, in any link (libulp.pc adds -z now as well).
RT_FLAGS += -fno-plt
CPPFLAGS += -Iinclude -Ilibulp -Ilibulp/sched -Ilibulp/arch -Ilibulp/arch/$(ARCH) -D_GNU_SOURCE
ifeq ($(SAN),1)
# The sanitizers' checks call into libasan/libubsan, also from the syscall trap and the switch
# path while a ULP's TLS is loaded: bound at load time like every call (RT_FLAGS).
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -DULP_SANITIZE=1
endif
ALL_CFLAGS = $(CFLAGS) $(WARN) $(RT_FLAGS) $(SANFLAGS) -std=gnu11 -MMD -MP
LDLIBS_RT := -lpthread

ifneq ($(V),1)
Q := @
endif

# make check T=PATTERNS: tests/run-one.sh runs only the matching tests; a target that builds a
# tree of its own (check-asan, check-cross) asks $(call WANT,PREFIX) first.
ifneq ($(T),)
export ULP_T := $(T)
endif
WANT = $(if $(ULP_T),! sh tests/wants.sh -p '$(1)' ||)

ALL_TARGETS   :=
CHECK_TARGETS :=
BENCH_TARGETS :=
INSTALL_TARGETS :=

.PHONY: all check demo bench install clean deps lint
all:

-include loader/module.mk
include libulp/module.mk
-include libulp/arch/ucontext/module.mk
include mk/install.mk
include launch/module.mk
-include ulpexec/module.mk
-include ulpspawn/module.mk
-include ulps/module.mk
-include examples/module.mk
-include tests/module.mk
-include bench/module.mk
-include kmod/module.mk

all: $(ALL_TARGETS)

deps:
	$(Q)sh mk/deps.sh build

check:
	$(Q)sh mk/deps.sh build check
	$(Q)rm -rf $(O)/test-results
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory -k run-checks

run-checks: $(CHECK_TARGETS)
	$(Q)sh tests/summary.sh $(RESULTS)

# Builds only what the demo runs (run-demo's prerequisites): a fresh machine needs only the
# demo's group of mk/deps.sh (no cmocka, no cross compilers).
demo:
	$(Q)sh mk/deps.sh build demo
	$(Q)$(MAKE) --no-print-directory run-demo

bench:
	$(Q)sh mk/deps.sh build bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory run-bench

run-bench: $(BENCH_TARGETS)

install: all $(INSTALL_TARGETS)

clean:
	rm -rf $(O)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(O)/%.o: %.S
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AS      $<")
	$(Q)$(CC) $(CPPFLAGS) $(SANFLAGS) -fPIC -MMD -MP -c $< -o $@

-include $(shell find $(O) -name '*.d' 2>/dev/null)
