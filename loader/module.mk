# loader/: the ELF loader (libelf). Built only for ARCH=x86_64, the one machine loader/target.h
# names. Users link $(O)/libulp-loader.a with $(LDLIBS_LOADER) (-lelf).
ifeq ($(ARCH),x86_64)
LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(patsubst %.c,$(O)/%.o,$(LOADER_SRCS))
LDLIBS_LOADER := -lelf

$(LOADER_OBJS): CPPFLAGS += -Iloader

$(O)/libulp-loader.a: $(LOADER_OBJS)
	$(Q)rm -f $@; $(AR) rcs $@ $^

ALL_TARGETS += $(O)/libulp-loader.a
endif
