# make check-fresh: the README's `make demo` and the quick part of `make check` (units, integration)
# on a fresh Debian 12 in a chroot, as root, with the packages of `make deb` installed there when
# they are built (tests/fresh/run.sh says how). Needs root and the Debian mirror; not part of
# `make check` (which must run unprivileged): .ci/run runs it after `make check` and `make deb`.
FRESH_DEBS ?= $(if $(wildcard $(O)/deb/*.deb),$(O)/deb)

.PHONY: check-fresh
check-fresh:
	$(Q)sh mk/deps.sh fresh
	$(Q)FRESH_DEBS=$(FRESH_DEBS) bash tests/fresh/run.sh
