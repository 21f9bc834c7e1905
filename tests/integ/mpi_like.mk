# examples/mpi_like under ulpexec, ulpspawn (when built) and MPICH (when installed):
# tests/integ/mpi_like.sh. Included from tests/integ/module.mk.
ifeq ($(ARCH),x86_64)
ML_CHECK_DEPS := $(addprefix $(O)/examples/mpi_like/,mpi_like_prog ml_stress) $(O)/bin/ulpexec \
	$(filter $(O)/bin/ulpspawn $(O)/examples/mpi_like/%.mpi,$(ALL_TARGETS))

.PHONY: check-mpi-like
check-mpi-like: $(ML_CHECK_DEPS)
	$(Q)ULP_TEST_TIMEOUT=900 $(RUN_TEST) integ-mpi-like sh tests/integ/mpi_like.sh $(O)
CHECK_TARGETS += check-mpi-like
endif
