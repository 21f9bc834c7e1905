# Real MPI programs (Debian's MPICH) under libulp's launchers: tests/mpi/mpi.sh. pmi_procs runs
# ranks as processes under launch/pmi.c, the PMI-1 server, to test the server on its own.
ifeq ($(ARCH),x86_64)
MPI_T := $(O)/tests/mpi
MPI_MPICC ?= $(firstword $(shell command -v mpicc.mpich 2>/dev/null))

$(MPI_T)/pmi_procs: $(O)/tests/mpi/pmi_procs.o $(O)/launch/pmi.o
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^
$(O)/tests/mpi/pmi_procs.o: CPPFLAGS += -Ilaunch

$(MPI_T)/mpi_check: tests/mpi/mpi_check.c
	@mkdir -p $(dir $@)
	$(if $(MPI_MPICC),,$(error $@ needs MPICH's mpicc.mpich: sh mk/deps.sh check installs it))
	$(Q)$(MPI_MPICC) -O1 -g -fPIE -pie -o $@ $<

$(MPI_T)/mpi_more: tests/mpi/mpi_more.c
	@mkdir -p $(dir $@)
	$(if $(MPI_MPICC),,$(error $@ needs MPICH's mpicc.mpich: sh mk/deps.sh check installs it))
	$(Q)$(MPI_MPICC) -O1 -g -fPIE -pie -o $@ $<

$(MPI_T)/mpi_plugin.so: tests/mpi/mpi_plugin.c
	@mkdir -p $(dir $@)
	$(if $(MPI_MPICC),,$(error $@ needs MPICH's mpicc.mpich: sh mk/deps.sh check installs it))
	$(Q)$(MPI_MPICC) -O1 -g -fPIC -shared -o $@ $<

$(MPI_T)/mpi_plugin_main: tests/mpi/mpi_plugin_main.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -fPIE -pie -o $@ $< -ldl

$(MPI_T)/test_pmi: $(O)/tests/mpi/test_pmi.o $(O)/launch/pmi.o
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka
$(O)/tests/mpi/test_pmi.o: CPPFLAGS += -Ilaunch

$(MPI_T)/pmi_guest: tests/mpi/pmi_guest.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -fPIE -pie -o $@ $<

MPI_TEST_PROGS := $(MPI_T)/pmi_procs $(MPI_T)/mpi_check $(MPI_T)/mpi_more $(MPI_T)/test_pmi $(MPI_T)/pmi_guest \
	$(MPI_T)/mpi_plugin.so $(MPI_T)/mpi_plugin_main \
	$(O)/bin/ulpspawn $(O)/examples/mpi/mpi_prog $(O)/examples/mpi_like/mpi_like_prog

.PHONY: check-mpi
check-mpi: $(MPI_TEST_PROGS)
	$(Q)$(RUN_TEST) pmi-unit $(MPI_T)/test_pmi
	$(Q)ULP_TEST_TIMEOUT=600 $(RUN_TEST) mpi-pmi sh tests/mpi/mpi.sh $(O)
	$(Q)ULP_TEST_TIMEOUT=600 $(RUN_TEST) mpi-more sh tests/mpi/mpi_more.sh $(O)
	$(Q)ULP_TEST_TIMEOUT=900 $(RUN_TEST) mpi-prog sh tests/mpi/mpi_prog.sh $(O)
	$(Q)ULP_TEST_TIMEOUT=900 $(RUN_TEST) mpi-netpipe sh tests/mpi/netpipe.sh $(O)
	$(Q)ULP_TEST_TIMEOUT=900 $(RUN_TEST) mpi-kill sh tests/mpi/mpi_kill.sh $(O)
	$(Q)ULP_TEST_TIMEOUT=1500 $(RUN_TEST) mpi-64 sh tests/mpi/mpi64.sh $(O)
CHECK_TARGETS += check-mpi
endif
