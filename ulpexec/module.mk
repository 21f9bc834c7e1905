ifeq ($(ARCH),x86_64)
$(O)/ulpexec/ulpexec.o: CPPFLAGS += -Ilaunch
$(O)/bin/ulpexec: $(O)/ulpexec/ulpexec.o $(O)/launch/cmdline.o $(O)/launch/job.o $(O)/launch/pmi.o $(O)/launch/fallback.o $(O)/launch/status.o $(O)/libulp.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ULP)
ALL_TARGETS += $(O)/bin/ulpexec
endif
