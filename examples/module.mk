# examples/: guests built as static-pie and as dynamic PIE, linked with the guest library only.
ifeq ($(ARCH),x86_64)
GUEST_CFLAGS = -O2 -g -Wall -Wextra -Werror -Iinclude -fPIE
$(O)/examples/%: examples/%.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(GUEST_CFLAGS) -static-pie -o $@ $^
$(O)/examples/%_dyn: examples/%.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(GUEST_CFLAGS) -pie -o $@ $^
ALL_TARGETS += $(O)/examples/ulp_hello $(O)/examples/ulp_hello_dyn

# The User-level Process paper's sample: a host program (libulp) and two guests.
$(O)/examples/paper/ulpspawn_sample: examples/paper/ulpspawn_sample.c $(O)/libulp.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ULP)
$(O)/examples/paper/%_sample: examples/paper/%_sample.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(GUEST_CFLAGS) -static-pie -o $@ $^
ALL_TARGETS += $(addprefix $(O)/examples/paper/,ulpspawn_sample ulpexec_sample ulpprogram_sample)
endif

.PHONY: run-demo
run-demo: $(O)/bin/ulpspawn $(O)/examples/mpi_like/mpi_like_prog $(O)/examples/mpi/mpi_prog \
		$(O)/examples/paper/ulpspawn_sample \
		$(O)/examples/paper/ulpexec_sample $(O)/examples/paper/ulpprogram_sample
	$(Q)sh mk/demo.sh $(O)
-include examples/mpi_like/module.mk
-include examples/mpi/module.mk
