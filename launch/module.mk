# launch/: what the launchers share (command line, job, PMI server, process fallback, status).
# A launcher is a thin main in <tool>/<tool>.c linked with all of it and libulp.a:
# <tool>/module.mk says $(eval $(call LAUNCH_TOOL,<tool>)). x86_64, like libulp.a.
LAUNCH_OBJS := $(patsubst %.c,$(O)/%.o,$(wildcard launch/*.c))
# Where make install (mk/install.mk) and the package (debian/rules) put libulp-mpiyield.so.
$(O)/launch/job.o: CPPFLAGS += -DULP_PKGLIBDIR='"$(LIBDIR)/ulp"'

define LAUNCH_TOOL
$(O)/$(1)/$(1).o: CPPFLAGS += -Ilaunch
$(O)/bin/$(1): $(O)/$(1)/$(1).o $(LAUNCH_OBJS) $(O)/libulp.a
	@mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(ALL_CFLAGS) -o $$@ $$^ $$(LDLIBS_ULP)
ALL_TARGETS += $(O)/bin/$(1)
endef
