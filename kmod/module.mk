# Kernel module (kmod/). pvas.ko is not part of `make all`: it needs kernel headers and cannot be
# loaded on the build machine. `make check` builds it against Debian's headers and tests it in a
# qemu VM booting Debian's kernel (tests/kmod/run.sh); `make lint-kmod` runs checkpatch.pl
# and a sparse + W=1 build.
#
#   make kmod        build pvas.ko into $(O)/kmod/mod (KVER=... or KDIR=... to pick the kernel)
#   make check-kmod  build, boot, run the in-VM tests (VMTEST_SCALE, VMTEST_ONLY: see run.sh)
#   make lint-kmod   checkpatch.pl --no-tree -f on kmod/ and include/uapi/pvas_{ioctl,auxv}.h; sparse, W=1

KMOD_OUT := $(O)/kmod

.PHONY: kmod check-kmod lint-kmod
kmod:
	$(Q)sh mk/deps.sh kmod
	$(Q)rm -rf $(KMOD_OUT)/mod
	$(Q)$(MAKE) -s -C kmod dkms-src DKMS_DIR=$(abspath $(KMOD_OUT)/mod)
	$(Q)$(MAKE) -C $(KMOD_OUT)/mod $(if $(KDIR),KDIR=$(KDIR)) $(if $(KVER),KVER=$(KVER))

# The VM also runs the pvas_* API tests, ulpspawn, Debian's sha256sum and dash, the ULP identity
# checks and execve in place on the kmod backend (tests/kmod/ulp_backend.sh), with the programs they need.
KMOD_BACKEND_DATA := $(O)/tests/pvas/test_pvas_api $(O)/bin/ulpspawn $(O)/tests/integ/probe \
	$(O)/tests/integ/share $(O)/tests/integ/guest_check_dyn $(O)/tests/integ/ident \
	$(O)/tests/integ/execs $(O)/tests/integ/execs_dyn /bin/dash /usr/bin/sha256sum

check-kmod: $(filter $(O)/%,$(KMOD_BACKEND_DATA))
	$(Q)ULP_TEST_TIMEOUT=1200 VMTEST_EXTRA=tests/kmod/ulp_backend.sh \
		VMTEST_EXTRA_DATA="$(KMOD_BACKEND_DATA)" \
		$(RUN_TEST) kmod-vm sh tests/kmod/run.sh $(KMOD_OUT)

lint-kmod:
	$(Q)sh kmod/lint.sh $(KMOD_OUT)

lint: lint-kmod

# The VM boots an x86_64 Debian kernel: native x86_64 builds only.
ifeq ($(ARCH)$(CROSS),x86_64)
CHECK_TARGETS += check-kmod
endif
