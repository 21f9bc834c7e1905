# pvas_* API tests (x86_64: the user backend needs the loader and the syscall trap).
ifeq ($(ARCH),x86_64)
$(O)/tests/pvas/test_pvas_api: $(O)/tests/pvas/test_pvas_api.o $(O)/libulp.a
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka $(LDLIBS_ULP)
ALL_TARGETS += $(O)/tests/pvas/test_pvas_api

.PHONY: check-pvas
check-pvas: $(O)/tests/pvas/test_pvas_api $(INTEG_PROGS)
	$(Q)ULP_TEST_PROGS=$(O)/tests/integ $(RUN_TEST) pvas-api $(O)/tests/pvas/test_pvas_api
CHECK_TARGETS += check-pvas
endif
