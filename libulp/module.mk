# libulp: the runtime. Core (switch, scheduler, threads, sync) builds for every ARCH.
# libulp/arch/<arch>/sys_*.c: the arch's part of the syscall trap, built with kernel/.
LIBULP_ARCH_SYS_SRCS := $(wildcard libulp/arch/$(ARCH)/sys_*.c)
LIBULP_CORE_SRCS := $(filter-out $(LIBULP_ARCH_SYS_SRCS),\
	$(wildcard libulp/arch/$(ARCH)/*.c libulp/arch/$(ARCH)/*.S)) \
	$(if $(filter aarch64 sparc64,$(ARCH)),libulp/arch/self_tls.c libulp/arch/user_tp.c) \
	$(if $(filter sparc64,$(ARCH)),libulp/arch/switch_compose.c) \
	$(wildcard libulp/sched/*.c libulp/thread/*.c)
LIBULP_CORE_OBJS := $(patsubst %,$(O)/%.o,$(basename $(LIBULP_CORE_SRCS)))

$(O)/libulp-core.a: $(LIBULP_CORE_OBJS)
	$(Q)rm -f $@; $(AR) rcs $@ $^

ALL_TARGETS += $(O)/libulp-core.a

# The ULP layer: kernel/ (the ULP process object, partitions, syscall trap, backends) and host/
# (the pvas_* API, PVAS tasks): x86_64, needs the loader.
ifeq ($(ARCH),x86_64)
LIBULP_PVAS_SRCS := $(wildcard libulp/kernel/*.c libulp/host/*.c) $(LIBULP_ARCH_SYS_SRCS)
LIBULP_PVAS_OBJS := $(patsubst %,$(O)/%.o,$(basename $(LIBULP_PVAS_SRCS)))
$(LIBULP_PVAS_OBJS): CPPFLAGS += -Iloader -Ilibulp/kernel -Ilibulp/host
ifeq ($(SAN),1)
# kernel/ runs in the syscall trap and on ULP ends with a ULP's TLS loaded; ASan puts a call to
# __asan_handle_no_return before each noreturn call (ending a ULP), and that reads the thread's
# TLS: a fault, then the fault handler faults again. UBSan only reads TLS to report (and stop).
$(filter $(O)/libulp/kernel/%,$(LIBULP_PVAS_OBJS)): SANFLAGS += -fno-sanitize=address
# The fast-call entry's C side runs in a ULP's call, with its TLS loaded, like the trap.
$(O)/libulp/arch/x86_64/fastcall.o: SANFLAGS += -fno-sanitize=address
endif

$(O)/libulp.a: $(LIBULP_CORE_OBJS) $(LIBULP_PVAS_OBJS) $(LOADER_OBJS)
	$(Q)rm -f $@; $(AR) rcs $@ $^
LDLIBS_ULP := -lelf -lpthread
ALL_TARGETS += $(O)/libulp.a
endif

# The guest library: linked into programs that run as ULPs (static-pie and PIE alike).
GUEST_OBJ := $(O)/libulp/guest/pvas_guest.o
# Never sanitized (SAN=1 is for the runtime): a ULP has no ASan runtime to call into, and the
# static-pie guests and examples could not link against it.
$(GUEST_OBJ): SANFLAGS :=
$(O)/libpvas-guest.a: $(GUEST_OBJ)
	$(Q)rm -f $@; $(AR) rcs $@ $^
ALL_TARGETS += $(O)/libpvas-guest.a

# libulp-mpiyield.so: preloaded by ulpspawn --pmi into MPI ranks, which it makes yield when
# their MPI polls without progress (libulp/guest/mpi_yield.c). Only what it wraps is exported
# (ucp_worker_progress, MPI_Init*, PMPI_Init*, pthread_create, pthread_mutex_unlock): the guest
# library's pvas_* stay its own. Installed in $(LIBDIR)/ulp.
MPIYIELD_OBJ := $(O)/libulp/guest/mpi_yield.o
$(MPIYIELD_OBJ): SANFLAGS :=
$(O)/libulp-mpiyield.so: $(MPIYIELD_OBJ) $(O)/libpvas-guest.a
	$(Q)$(CC) -shared -Wl,-z,defs -Wl,-z,relro -Wl,-z,now -Wl,--exclude-libs,ALL $(LDFLAGS) \
		-o $@ $^ -ldl
ifeq ($(ARCH),x86_64)
ALL_TARGETS += $(O)/libulp-mpiyield.so
endif
