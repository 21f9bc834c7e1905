# Cross-architecture tests: the unit tests (tests/unit/, check-units) built for aarch64 and
# sparc64 with the Debian cross compilers and run under qemu-user, each on 1 and 2 workers.
# Binaries are dynamic and find their C library through qemu's -L (sparc64 has no static-pie;
# aarch64 is built the same way for one code path). Cross builds use tests/check.h's cmocka
# subset (ULP_NO_CMOCKA, set by tests/module.mk when CROSS is given).
#
#   make check-cross            both architectures (part of `make check`)
#   make check-cross-aarch64    one of them
CROSS_ARCHS := aarch64 sparc64
CROSS_TRIPLET_aarch64 := aarch64-linux-gnu
CROSS_TRIPLET_sparc64 := sparc64-linux-gnu

.PHONY: check-cross $(addprefix check-cross-,$(CROSS_ARCHS))
check-cross: $(addprefix check-cross-,$(CROSS_ARCHS))

$(addprefix check-cross-,$(CROSS_ARCHS)): check-cross-%:
	$(Q)$(call WANT,$*-) $(MAKE) --no-print-directory O=$(O)/cross-$* ARCH=$* CROSS=$(CROSS_TRIPLET_$*)- \
		RESULTS=$(abspath $(RESULTS)) RUN_PREFIX=$*- \
		QEMU="qemu-$*-static -L /usr/$(CROSS_TRIPLET_$*)" check-units

ifeq ($(CROSS)$(SAN),)
CHECK_TARGETS += check-cross
endif
