# examples/mpi_like: the mpi_like API over ULPs (static-pie guests, run by ulpexec/ulpspawn) and
# over MPICH (only when mpicc.mpich is installed: `make demo` and `make bench` install it, plain
# `make` does not need it). Programs: mpi_like_prog (the example) and ml_stress (for the tests).
ifeq ($(ARCH),x86_64)
ML_DIR  := $(O)/examples/mpi_like
ML_SRC  := examples/mpi_like
ML_HDRS := $(ML_SRC)/mpi_like.h $(ML_SRC)/ml_math.h $(ML_SRC)/ml_self.h include/pvas.h
ML_PROGS := mpi_like_prog ml_stress
# MPICH's compiler wrapper by its own name: Debian's plain mpicc may be Open MPI's.
ML_MPICC ?= $(firstword $(shell command -v mpicc.mpich 2>/dev/null))
ML_CFLAGS := -O2 -g -Wall -Wextra -Werror -Iinclude -I$(ML_SRC)

$(addprefix $(ML_DIR)/,$(ML_PROGS)): $(ML_DIR)/%: $(ML_SRC)/%.c $(ML_SRC)/ml_ulp.c \
		$(ML_SRC)/ml_self.c $(O)/libpvas-guest.a $(ML_HDRS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GUEST   $@")
	$(Q)$(CC) $(ML_CFLAGS) -fPIE -static-pie -o $@ $(filter %.c %.a,$^)

$(addsuffix .mpi,$(addprefix $(ML_DIR)/,$(ML_PROGS))): $(ML_DIR)/%.mpi: $(ML_SRC)/%.c \
		$(ML_SRC)/ml_mpi.c $(ML_SRC)/ml_self.c $(ML_HDRS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $@")
	$(if $(ML_MPICC),,$(error $@ needs MPICH's mpicc.mpich: sh mk/deps.sh demo installs it))
	$(Q)$(ML_MPICC) $(ML_CFLAGS) -o $@ $(filter %.c,$^)

ALL_TARGETS += $(addprefix $(ML_DIR)/,$(ML_PROGS))
ifneq ($(ML_MPICC),)
ALL_TARGETS += $(addsuffix .mpi,$(addprefix $(ML_DIR)/,$(ML_PROGS)))
endif
endif
