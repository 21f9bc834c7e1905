# Kernel module (kmod/). pvas.ko is not part of `make all`: it needs kernel headers and cannot be
# loaded on the build machine. `make check` builds it against Debian's headers and tests it in a
# qemu VM booting Debian's kernel (tests/kmod/run.sh); `make lint-kmod` runs checkpatch.pl
# and a sparse + W=1 build.
#
#   make kmod        build pvas.ko into $(O)/kmod/mod (KVER=... or KDIR=... to pick the kernel)
#   make check-kmod  build, boot, run the in-VM tests (VMTEST_SCALE, VMTEST_ONLY: see run.sh)
#   make lint-kmod   checkpatch.pl --no-tree -f on kmod/ and include/uapi/pvas_ioctl.h; sparse, W=1

KMOD_OUT := $(O)/kmod

.PHONY: kmod check-kmod lint-kmod
kmod:
	$(Q)sh mk/deps.sh kmod
	$(Q)rm -rf $(KMOD_OUT)/mod
	$(Q)$(MAKE) -s -C kmod dkms-src DKMS_DIR=$(abspath $(KMOD_OUT)/mod)
	$(Q)$(MAKE) -C $(KMOD_OUT)/mod $(if $(KDIR),KDIR=$(KDIR)) $(if $(KVER),KVER=$(KVER))

check-kmod:
	$(Q)ULP_TEST_TIMEOUT=900 $(RUN_TEST) kmod-vm sh tests/kmod/run.sh $(KMOD_OUT)

lint-kmod:
	$(Q)sh kmod/lint.sh $(KMOD_OUT)

lint: lint-kmod

# The VM boots an x86_64 Debian kernel: native x86_64 builds only.
ifeq ($(ARCH)$(CROSS),x86_64)
CHECK_TARGETS += check-kmod
endif
