ifeq ($(ARCH),x86_64)
$(O)/ulpspawn/ulpspawn.o: CPPFLAGS += -Ilaunch
$(O)/bin/ulpspawn: $(O)/ulpspawn/ulpspawn.o $(O)/launch/cmdline.o $(O)/launch/job.o $(O)/launch/pmi.o $(O)/launch/fallback.o $(O)/launch/status.o $(O)/libulp.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ULP)
ALL_TARGETS += $(O)/bin/ulpspawn
endif
