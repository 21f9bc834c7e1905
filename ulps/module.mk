ifeq ($(ARCH),x86_64)
$(O)/ulps/ulps.o: CPPFLAGS += -Ilaunch
# Only the launchers' status protocol: ulps reads sockets and never links libulp.
$(O)/bin/ulps: $(O)/ulps/ulps.o $(O)/launch/status.o
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^
ALL_TARGETS += $(O)/bin/ulps
endif
