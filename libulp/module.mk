# libulp: the runtime. Core (switch, scheduler, threads, sync) builds for every ARCH.
LIBULP_CORE_SRCS := $(wildcard libulp/arch/$(ARCH)/*.c libulp/arch/$(ARCH)/*.S) \
	libulp/sched.c libulp/thread.c libulp/sync.c libulp/key.c libulp/stack.c libulp/env.c
LIBULP_CORE_OBJS := $(patsubst %,$(O)/%.o,$(basename $(LIBULP_CORE_SRCS)))

$(O)/libulp-core.a: $(LIBULP_CORE_OBJS)
	$(Q)rm -f $@; $(AR) rcs $@ $^

ALL_TARGETS += $(O)/libulp-core.a
