# examples/mpi: mpi_prog, mpi_like_prog's workload written against MPI itself. mpi_prog is built
# with MPICH's mpicc.mpich (run it with ulpspawn --pmi or mpiexec.mpich), mpi_prog.ompi with Open
# MPI's mpicc.openmpi (mpirun.openmpi; the benchmarks' Open MPI baseline). Each is built only when
# its compiler is installed: plain `make` needs neither (mk/deps.sh demo/check/bench install
# MPICH, bench Open MPI too).
ifeq ($(ARCH),x86_64)
MPIX_DIR := $(O)/examples/mpi
MPIX_MPICC ?= $(firstword $(shell command -v mpicc.mpich 2>/dev/null))
MPIX_OMPICC ?= $(firstword $(shell command -v mpicc.openmpi 2>/dev/null))
MPIX_CFLAGS := -O2 -g -Wall -Wextra -Werror -Iexamples/mpi_like -fPIE -pie

$(MPIX_DIR)/mpi_prog: examples/mpi/mpi_prog.c examples/mpi_like/ml_math.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $@")
	$(if $(MPIX_MPICC),,$(error $@ needs MPICH's mpicc.mpich: sh mk/deps.sh demo installs it))
	$(Q)$(MPIX_MPICC) $(MPIX_CFLAGS) -o $@ $<

$(MPIX_DIR)/mpi_prog.ompi: examples/mpi/mpi_prog.c examples/mpi_like/ml_math.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  OMPICC  $@")
	$(if $(MPIX_OMPICC),,$(error $@ needs Open MPI's mpicc.openmpi: sh mk/deps.sh bench installs it))
	$(Q)$(MPIX_OMPICC) $(MPIX_CFLAGS) -o $@ $<

ifneq ($(MPIX_MPICC),)
ALL_TARGETS += $(MPIX_DIR)/mpi_prog
endif
ifneq ($(MPIX_OMPICC),)
ALL_TARGETS += $(MPIX_DIR)/mpi_prog.ompi
endif
endif
